"""The scale benchmark's two moments for a new search process: after the bulk load, and
after the incremental writes (a real store, real processes, at a tiny size)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.cold_search import cold_samples
from benchmarks.scale import QUERY_MIX, build_store, render_tables, summarize_size


def _stored(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        found: int = connection.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    connection.close()
    return found


def test_the_hook_after_the_bulk_load_sees_the_bulk_messages_only(tmp_path: Path) -> None:
    """What runs after the bulk load finds the store closed and holding the bulk load's
    messages; the incremental writes come after it."""
    db = tmp_path / "s.db"
    seen: list[int] = []
    build = build_store(db, 300, incremental=40, after_bulk=lambda: seen.append(_stored(db)))
    assert seen == [build.messages]
    assert _stored(db) == build.messages + build.incremental_messages > build.messages


def _worker(samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {"samples": samples, "end_to_end": [], "peak_rss_mb": 50.0}


def test_the_table_shows_both_moments_and_checks_the_targets_on_each(tmp_path: Path) -> None:
    """Each moment's new processes get a row of the table and their own target lines;
    a store reused from an earlier run (no bulk-load moment) shows only the other."""
    db = tmp_path / "s.db"
    after_bulk: list[dict[str, Any]] = []
    build = build_store(db, 300, incremental=20, after_bulk=lambda: after_bulk.extend(
        cold_samples(db, [QUERY_MIX[0]], rounds=1)))
    after_incremental = cold_samples(db, [QUERY_MIX[0]], rounds=1)
    long_lived = [{"query": QUERY_MIX[0][0], "round": 0, "wall_ms": 3.0, "cpu_ms": 2.0,
                   "timings": {"match": 1.0, "resolve": 0.5, "load": 0.5, "summarize": 0.5,
                               "assemble": 0.1}}]
    row = summarize_size(300, build, _worker(long_lived), _worker(long_lived), 0.0,
                         after_incremental, after_bulk)
    table = render_tables([row]).splitlines()
    bulk_rows = [line for line in table if "| right after the bulk load |" in line]
    later_rows = [line for line in table if "| after the incremental writes |" in line]
    assert len(bulk_rows) == len(later_rows) == 1
    match_p50 = after_bulk[0]["timings"]["match"]
    assert f"| {match_p50:.1f} |" in bulk_rows[0]
    assert sum("a new process per question right after the bulk load" in line
               for line in table) == 2
    reused = summarize_size(300, build, _worker(long_lived), _worker(long_lived), 0.0,
                            after_incremental)
    text = render_tables([reused])
    assert "right after the bulk load" not in text and "after the incremental writes" in text


def test_a_build_interrupted_mid_ingest_ends_in_one_line(tmp_path: Path) -> None:
    """Ctrl-C while a benchmark builds its store (here ``benchmarks.startup``): the
    cancelled ingest left the close's timing reading a total never set, so the command
    ended in an UnboundLocalError traceback, status 1, instead of ``run_main``'s one line
    and 130. The signal is sent once the store file has grown: the ingest is running."""
    db = tmp_path / "startup.db"
    build = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.startup", "--db", str(db), "--size", "1m"],
        cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while (not db.is_file() or db.stat().st_size < 1 << 20) and time.monotonic() < deadline:
        time.sleep(0.05)
    build.send_signal(signal.SIGINT)
    _, err = build.communicate(timeout=120)
    assert (build.returncode, err.splitlines()[1:]) == (
        130, ["benchmarks.startup: interrupted (Ctrl-C)"]), err
