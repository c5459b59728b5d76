"""The long-session ``show`` benchmark runs at a tiny size against the test server."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.show_long import main, pages
from tests.support.postgres_server import PostgresServer, benchmark_databases

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_is_shown_by_both_builds_and_the_database_is_dropped(
        postgres_server: PostgresServer, capsys: pytest.CaptureFixture[str]) -> None:
    """Each page on each store is a row with CPU time and peak memory of both builds (this
    tree standing in for the old one: the same page printed), then the reads alone; the
    database made for the run is gone after it."""
    before = benchmark_databases(postgres_server.url())
    assert main(["--messages", "300", "--background", "200", "--rounds", "1",
                 "--url", postgres_server.url(), "--old", str(ROOT)]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [[cell.strip() for cell in line.split("|")[1:-1]] for line in lines
            if line.startswith(("| sqlite", "| postgres"))]
    shown = [row for row in rows if len(row) == 9]
    assert [(row[0], row[1]) for row in shown] == [
        (store, page) for store in ("sqlite", "postgres") for page in pages(300)]
    for row in shown:
        assert all(float(cell) > 0 for cell in (row[2], row[3], row[5], row[6])), row
        assert row[8] == "yes", row
    assert [row[0] for row in rows if len(row) == 3] == ["sqlite", "postgres"]
    assert benchmark_databases(postgres_server.url()) == before
