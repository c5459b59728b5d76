"""A large import shared with 20 one-session ingests (separate processes) and searches."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.shared_writers import run_shared
from tests.support.processes import children, running

MEGABYTES = 4.0
"""The largest import that keeps this test near 20 s on a busy 2-core machine; the soak
benchmark runs the same scenario at 100 MB."""


def test_every_writer_finishes_nothing_is_lost_and_searches_answer(tmp_path: Path) -> None:
    """The import and every ingest started during it exit 0; every session is stored."""
    run = asyncio.run(run_shared(tmp_path, MEGABYTES, ingests=20, gap_s=0.05))
    assert run.import_status == 0, run.ingest_errors
    assert run.ingest_statuses == (0,) * 20, run.ingest_errors
    assert run.overlapped >= 10  # the ingests really raced the import
    assert run.lost_sessions == 0
    assert run.searches > 0
    assert run.failed_searches == 0, run.ingest_errors
    assert "| lost sessions | 0 |" in run.table()


def test_an_interrupted_run_leaves_no_import_or_ingest_running() -> None:
    """SIGINT to the benchmark's own process alone (``kill -INT``) while the import and
    the ingests run: it exits 130 with one line (not Python's traceback), and so do they
    (they wrote into a folder that was gone)."""
    run = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.shared_writers", "--mb", str(MEGABYTES),
         "--ingests", "5"],
        cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while len(started := children(run.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(started) >= 3  # the import and at least two ingests
    run.send_signal(signal.SIGINT)
    _, err = run.communicate(timeout=60)
    assert (run.returncode, err.decode()) == (
        130, "benchmarks.shared_writers: interrupted (Ctrl-C)\n")
    assert [pid for pid in started if running(pid)] == []
