"""The soak benchmark at a tiny size: searchers and writers share a store, nothing is lost."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.scale import build_store
from benchmarks.soak import QUERIES, Soak, main, run_soak
from tests.support.postgres_server import PostgresServer
from tests.support.processes import children, running


def test_a_short_soak_fails_nothing_and_loses_nothing(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Two searchers and two writers for 3 s on a 2k-message store; the table says so."""
    status = main(["--size", "2k", "--seconds", "3", "--searchers", "2", "--writers", "2",
                   "--db", str(tmp_path / "soak.db"), "--import-mb", "0"])
    out = capsys.readouterr().out
    assert status == 0, out
    rows = dict(line.strip("|").split("|")[:2] for line in out.splitlines()
                if line.startswith("| ") and "---" not in line)
    rows = {name.strip(): value.strip() for name, value in rows.items()}
    assert rows["failed calls"] == "0"
    assert rows["lost sessions"] == "0"
    assert int(rows["searches"].replace(",", "")) > 0
    assert int(rows["sessions written"].replace(",", "")) > 0
    assert float(rows["search p50"].split()[0]) > 0
    per_query = [line.strip("|").split("|") for line in out.splitlines()
                 if line.startswith("| ") and line.count("|") == 5 and "---" not in line][1:]
    assert {cells[0].strip() for cells in per_query} <= set(QUERIES)
    assert (sum(int(cells[1].replace(",", "")) for cells in per_query)
            == int(rows["searches"].replace(",", "")))


def test_a_paced_writer_writes_one_session_at_a_time(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``--writer-pace 4`` for 3 s: about a dozen sessions (the default batches write
    hundreds in that time), all found, and the table names the pace."""
    status = main(["--size", "2k", "--seconds", "3", "--searchers", "1", "--writers", "1",
                   "--writer-pace", "4", "--db", str(tmp_path / "soak.db"), "--import-mb", "0"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "1 writers (4 session/s each)" in out
    written = next(line for line in out.splitlines() if line.startswith("| sessions written"))
    assert 1 <= int(written.split("|")[2].replace(",", "")) <= 14


def test_the_table_says_whether_the_target_was_met() -> None:
    """p95 beside the 100 ms target, met or missed."""
    soak = Soak(messages=10, seconds=1, searchers=1, writers=1, searches=5, writes=2,
                failed_calls=0, lost_sessions=0, p50_ms=20.0, p95_ms=150.0)
    assert "| search p95 | 150.0 ms (target ≤ 100 ms: missed) |" in soak.table()


def test_a_short_soak_of_a_postgresql_store(postgres_server: PostgresServer,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The same soak against the test server: a new, empty database is filled first, then
    two searchers and two writers lose nothing; the SQLite-only large import is skipped."""
    url = postgres_server.create_database("harkback_soak")
    status = main(["--size", "2k", "--seconds", "3", "--searchers", "2", "--writers", "2",
                   "--db", url])
    out = capsys.readouterr().out
    assert status == 0, out
    rows = {name.strip(): value.strip() for name, value in
            (line.strip("|").split("|")[:2] for line in out.splitlines()
             if line.startswith("| ") and "---" not in line)}
    assert int(rows["store"].split()[0].replace(",", "")) >= 2000
    assert rows["failed calls"] == "0" and rows["lost sessions"] == "0"
    assert int(rows["sessions written"].replace(",", "")) > 0
    assert "skipped" in out


def test_an_interrupted_soak_leaves_no_worker_running(tmp_path: Path) -> None:
    """SIGINT to the soak's own process alone (``kill -INT``, not a terminal's Ctrl-C to
    the whole group) mid-run: it exits 130 with one line (not Python's KeyboardInterrupt
    traceback), and its searcher and writer processes with it."""
    db = tmp_path / "soak.db"
    build_store(db, 2000, incremental=0)
    soak = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.soak", "--db", str(db), "--seconds", "60",
         "--searchers", "1", "--writers", "1", "--import-mb", "0"],
        cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(workers := children(soak.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(workers) == 2
    soak.send_signal(signal.SIGINT)
    _, err = soak.communicate(timeout=60)
    assert (soak.returncode, err.decode()) == (130, "benchmarks.soak: interrupted (Ctrl-C)\n")
    assert [pid for pid in workers if running(pid)] == []


def test_a_worker_that_cannot_start_stops_those_started(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The third worker fails to start (as with too many open files): the two started
    before it are stopped; they were started outside the block that stops them, and went
    on searching for ``--seconds``."""
    db = tmp_path / "soak.db"
    build_store(db, 2000, incremental=0)
    started: list[subprocess.Popen[str]] = []
    real = subprocess.Popen

    def starting(*args: Any, **kwargs: Any) -> subprocess.Popen[str]:
        if len(started) == 2:
            raise OSError(24, "Too many open files")
        started.append(real(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(subprocess, "Popen", starting)  # the module soak starts them with
    with pytest.raises(OSError):
        run_soak(str(db), seconds=60, searchers=2, writers=1)
    assert len(started) == 2
    assert [p.pid for p in started if running(p.pid)] == []
