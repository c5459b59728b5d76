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


def signalled_while_waiting(db: Path, sig: signal.Signals, *args: str,
                            env: dict[str, str] | None = None
                            ) -> tuple[int, str, str, float]:
    """Run ``harkback ARGS --db DB`` while this test holds ``db``'s write lock, and send it
    ``sig`` once its first write waits for the lock: its status, stdout, stderr, and how
    long it took to end after the signal."""
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    command = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", *args, "--db", str(db)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _opened(command.pid, db) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the store is open: its first write now waits for the lock
        command.send_signal(sig)
        signalled = time.monotonic()
        out, err = command.communicate(timeout=90)
        took = time.monotonic() - signalled
    finally:
        command.kill()
        command.wait()
        holder.execute("ROLLBACK")
        holder.close()
    return command.returncode, out, err, took


def _one_session(path: Path, session: str, word: str) -> Path:
    path.write_text(json.dumps({"id": session, "messages": [
        {"role": "user", "content": word}]}) + "\n", encoding="utf-8")
    return path


def test_ctrl_c_stops_an_ingest_waiting_for_the_write_lock(tmp_path: Path) -> None:
    source = _one_session(tmp_path / "in.jsonl", "s1", "docker")
    db = tmp_path / "h.db"
    assert run("ingest", str(source), db=db).returncode == 0
    _one_session(source, "s2", "nginx")
    status, _, err, took = signalled_while_waiting(db, signal.SIGINT, "ingest", str(source))
    assert (status, err) == (130, "harkback: interrupted; the sessions stored before it are "
                             "kept, each whole: the same command run again goes on from "
                             "there, storing none twice\n")
    assert took < PROMPT_S


def test_ctrl_c_stops_an_optimize_waiting_for_the_write_lock_and_leaves_the_store_whole(
        tmp_path: Path) -> None:
    """The line says the store is whole, optimised or as it was, and that running it again
    finishes the job: the file passes SQLite's and FTS5's checks, and the rerun merges."""
    db = tmp_path / "h.db"
    assert run("ingest", str(_one_session(tmp_path / "in.jsonl", "s1", "docker")),
               db=db).returncode == 0
    status, _, err, took = signalled_while_waiting(db, signal.SIGINT, "optimize")
    # After the line saying what it began ("reading and merging each full-text index ...
    assert (status, err.splitlines()[-1]) == (
        130, "harkback: interrupted; the store is whole, optimised or as it was: the same "
        "command run again finishes the job")
    assert took < PROMPT_S
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        raw.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")
    raw.close()
    assert run("optimize", db=db).returncode == 0


def test_sigterm_stops_a_sync_cleanly_and_says_so(tmp_path: Path) -> None:
    """SIGTERM (``kill``, ``timeout``, a service manager) takes Ctrl-C's way: the sync
    waiting for the write lock stops, its payload under ``--json`` says so and the status is
    143; Python's default ended it on the spot, printing nothing, not even the payload."""
    home = make_home(tmp_path / "home")
    db = tmp_path / "h.db"
    assert run("ingest", str(_one_session(tmp_path / "in.jsonl", "s1", "docker")),
               db=db).returncode == 0
    status, out, err, _ = signalled_while_waiting(db, signal.SIGTERM, "sync", "--json",
                                                  env={**os.environ, "HOME": str(home)})
    assert (status, err) == (143, "harkback: terminated; the sessions stored before it are "
                             "kept, each whole: the same command run again goes on from "
                             "there, storing none twice\n")
    # The payload is sync's, of the source it was writing (Hermes, the first: nothing new
    # stored), and says what was kept.
    payload = json.loads(out)
    assert (payload["success"], payload["error"], payload["interrupted"], payload["kept"]) == (
        False, "terminated", True, "the sessions stored before it are kept, each whole: the "
        "same command run again goes on from there, storing none twice")
    assert [(s["kind"], s["status"], s["sessions"]["new"]) for s in payload["sources"]] == [
        ("hermes", "interrupted", 0)]


def test_ctrl_c_stops_a_redact_waiting_for_the_write_lock(tmp_path: Path) -> None:
    """redact's rewrite waited out its whole patience (62 s) before Ctrl-C took effect."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "my key is sk-ant-" + "a" * 40}]}) + "\n",
        encoding="utf-8")
    db = tmp_path / "h.db"
    assert run("ingest", str(source), db=db).returncode == 0
    status, _, err, took = signalled_while_waiting(db, signal.SIGINT, "redact")
    assert (status, err.startswith("harkback: interrupted")) == (130, True)
    assert took < PROMPT_S
