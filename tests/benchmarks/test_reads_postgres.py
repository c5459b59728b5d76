"""The read benchmark runs at a tiny size against the test server."""

from __future__ import annotations

import pytest

from benchmarks.reads_postgres import READS, main
from tests.support.postgres_server import PostgresServer, benchmark_databases


def test_both_stores_read_the_same_and_the_database_is_dropped(
        postgres_server: PostgresServer, capsys: pytest.CaptureFixture[str]) -> None:
    """Every read is timed on both stores built from one corpus, and reads the same there
    (one digest per row); the database made for the run is gone after it."""
    before = benchmark_databases(postgres_server.url())
    assert main(["--size", "2k", "--url", postgres_server.url(), "--rounds", "1"]) == 0
    rows = [line.split("|")[1:-1] for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and not line.startswith("| read ")]
    assert [row[0].strip() for row in rows] == list(READS)
    for label, postgres_ms, postgres_digest, sqlite_ms, sqlite_digest in rows:
        assert float(postgres_ms) > 0 and float(sqlite_ms) > 0, label
        assert postgres_digest == sqlite_digest, label
    assert benchmark_databases(postgres_server.url()) == before
