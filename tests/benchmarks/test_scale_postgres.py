"""The PostgreSQL scale benchmark runs at a tiny size against the test server."""

from __future__ import annotations

import pytest

from benchmarks.scale_postgres import dropped_after, fresh_database, main
from tests.support.postgres_server import PostgresServer, benchmark_databases


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


def test_times_first_asks_of_an_existing_store(postgres_server: PostgresServer,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """With ``--keep`` and ``--first-asks``, the run also prints each query's first ask in
    a fresh store, counted and with the statistics trusted; ``--database`` times a store
    already built, and nothing else."""
    assert main(["--sizes", "2k", "--url", postgres_server.url(), "--repeat", "1",
                 "--first-asks", "1", "--keep"]) == 0
    out = capsys.readouterr().out
    first = out.split("First ask in a fresh store")[1]
    assert [line.split("|")[1].strip() for line in first.splitlines()[4:10]] == [
        "rare word", "common words", "question", "phrase", "prefix", "chinese"]
    name = out.split("building 2k in ")[1].split()[0]
    assert main(["--database", postgres_server.url(name), "--first-asks", "1"]) == 0
    again = capsys.readouterr().out
    assert again.startswith("First ask in a fresh store") and "| phrase |" in again
    assert "ingest" not in again


def test_a_database_made_for_a_run_is_dropped_however_the_run_ends(
        postgres_server: PostgresServer) -> None:
    """Dropped after an error too; and when its server cannot be reached for the drop (a
    Ctrl-C stops a throwaway server with the run), the run's own error is what is raised."""
    maintenance = postgres_server.url()
    before = benchmark_databases(maintenance)
    database = fresh_database(maintenance, 1000)
    with pytest.raises(RuntimeError, match="the run failed"), \
            dropped_after(maintenance, database):
        raise RuntimeError("the run failed")
    assert benchmark_databases(maintenance) == before
    gone = "postgresql://harkback@/postgres?host=/nonexistent-socket-folder"
    with pytest.raises(KeyboardInterrupt), dropped_after(gone, database):
        raise KeyboardInterrupt
