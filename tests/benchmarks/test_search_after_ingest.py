"""The search-after-ingest benchmark runs at a tiny size against the test server."""

from __future__ import annotations

import pytest

from benchmarks.search_after_ingest import main
from harkback.adapters.stores import postgres_memo
from tests.support.postgres_server import PostgresServer, benchmark_databases


def test_times_both_modes_after_writes(postgres_server: PostgresServer,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A small run prints a median for every query of the mix in each mode, and leaves
    the catch-up switched on."""
    before = benchmark_databases(postgres_server.url())
    assert main(["--size", "2k", "--url", postgres_server.url(), "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    table = out.split("whole search):")[1]
    rows = [line.split("|")[1:-1] for line in table.splitlines() if line.startswith("| ")][1:]
    assert [r[0].strip() for r in rows] == ["rare word", "common words", "question", "phrase",
                                            "prefix", "chinese", "all queries"]
    assert all(float(cell) > 0 for r in rows for cell in (*r[1:3], *r[4:]))
    assert "load average" in out and postgres_memo.CATCH_UP
    assert benchmark_databases(postgres_server.url()) == before  # it kept none of its own
