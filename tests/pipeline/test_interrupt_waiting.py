"""Ctrl-C reaches an ingest that waits its turn for the write lock: it waited out its whole
patience (about a minute) before the interrupt took effect. Real processes, a real file
whose lock this test holds."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.pipeline.sync_home import make_home
from tests.pipeline.test_cli import run

PROMPT_S = 15.0
"""Well under the writer's patience (12 busy timeouts of 5 s); one busy timeout may pass."""


def _opened(pid: int, path: Path) -> bool:
    """Whether process ``pid`` holds ``path`` open (Linux: its /proc fd links)."""
    folder = Path(f"/proc/{pid}/fd")
    try:
        return any(os.readlink(folder / fd) == str(path) for fd in os.listdir(folder))
    except OSError:
        return False


def test_ctrl_c_stops_an_ingest_waiting_for_the_write_lock(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "docker"}]}) + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    assert run("ingest", str(source), db=db).returncode == 0
    source.write_text(json.dumps({"id": "s2", "messages": [
        {"role": "user", "content": "nginx"}]}) + "\n", encoding="utf-8")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    ingest = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "ingest", str(source), "--db", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _opened(ingest.pid, db) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the store is open: its first write now waits for the lock
        ingest.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        _, err = ingest.communicate(timeout=90)
        took = time.monotonic() - interrupted
    finally:
        ingest.kill()
        ingest.wait()
        holder.execute("ROLLBACK")
        holder.close()
    assert (ingest.returncode, err) == (130, "harkback: interrupted\n")
    assert took < PROMPT_S


def test_sigterm_stops_a_sync_cleanly_and_says_so(tmp_path: Path) -> None:
    """SIGTERM (``kill``, ``timeout``, a service manager) takes Ctrl-C's way: the sync
    waiting for the write lock stops, its payload under ``--json`` says so and the status is
    143; Python's default ended it on the spot, printing nothing, not even the payload."""
    home = make_home(tmp_path / "home")
    db = tmp_path / "h.db"
    assert run("ingest", str(_one_session(tmp_path)), db=db).returncode == 0
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    sync = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "sync", "--json", "--db", str(db)],
        env={**os.environ, "HOME": str(home)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _opened(sync.pid, db) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the store is open: its first write now waits for the lock
        sync.send_signal(signal.SIGTERM)
        out, err = sync.communicate(timeout=90)
    finally:
        sync.kill()
        sync.wait()
        holder.execute("ROLLBACK")
        holder.close()
    assert (sync.returncode, err) == (143, "harkback: terminated\n")
    assert json.loads(out) == {"success": False, "error": "terminated"}


def _one_session(folder: Path) -> Path:
    source = folder / "one.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "docker"}]}) + "\n", encoding="utf-8")
    return source
