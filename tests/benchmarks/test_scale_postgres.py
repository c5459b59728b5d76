"""The PostgreSQL scale benchmark runs at a tiny size against the test server."""

from __future__ import annotations

import pytest

from benchmarks.scale_postgres import main
from tests.support.postgres_server import PostgresServer


def test_builds_searches_and_prints_the_targets(postgres_server: PostgresServer,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A small run ingests, searches every query of the mix and prints each figure."""
    assert main(["--sizes", "3k", "--url", postgres_server.url(), "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| 3k |"))
    rate, share, _optimize, match_p50, *_ = (float(c.strip().replace(",", "").rstrip("%"))
                                             for c in row.split("|")[2:-1])
    assert rate > 0 and match_p50 > 0 and 0 < share <= 100
    assert "| ingest ≥ 20,000 msg/s |" in out and "| question |" in out
