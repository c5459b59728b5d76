"""Ctrl-C during ``harkback sync`` before it stored anything: the store it had just created,
and the lock file it made, are taken away again, while a store that was there before stays.
Real processes, a real lock held by another process, a real Hermes file locked by a writer."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from tests.pipeline.test_sync_lock import LOCKER
from tests.pipeline.test_sync_process import environment
from tests.support.hermes_db import HermesFile

NOTHING_KEPT = ("harkback: interrupted; nothing was stored, and {}, which it had created, is "
                "removed again: the same command run again starts afresh")
KEPT = ("harkback: interrupted; the sessions stored before it are kept, each whole: the same "
        "command run again goes on from there, storing none twice")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """``path`` (a sync lock file) locked by another process until the block ends."""
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "held\n"
        yield
    finally:
        locker.communicate(input="", timeout=60)


def _sync(home: Path, db: Path, *flags: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "harkback.pipeline.cli", "sync", "--db",
                             str(db), "--no-progress", *flags], env=environment(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _interrupted_waiting(home: Path, db: Path) -> tuple[int, str]:
    """Run a sync of ``db`` while another process holds its lock, Ctrl-C it once it says
    it waits its turn: its status and stderr."""
    with _locked(db.with_name(db.name + ".sync-lock")):
        syncing = _sync(home, db)
        assert syncing.stderr is not None
        assert "waits its turn" in syncing.stderr.readline()
        syncing.send_signal(signal.SIGINT)
        _, err = syncing.communicate(timeout=60)
    return syncing.returncode, err


def _home(folder: Path) -> Path:
    """A home with one Hermes session (the sync has something to do)."""
    (folder / ".hermes").mkdir(parents=True)
    hermes = HermesFile(folder / ".hermes" / "state.db", "v30")
    hermes.session("h1")
    hermes.message("h1", "user", "the pelican crontab broke")
    hermes.close()
    return folder


def test_a_sync_stopped_while_waiting_its_turn_leaves_no_new_store(tmp_path: Path) -> None:
    """The store it had just created was left behind, empty; the lock file another process
    holds is that one's and stays."""
    db = tmp_path / "h.db"
    status, err = _interrupted_waiting(_home(tmp_path / "home"), db)
    assert (status, err.splitlines()[-1]) == (130, NOTHING_KEPT.format(db))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.db.sync-lock", "home"]


def test_a_sync_stopped_while_waiting_keeps_a_store_that_was_there(tmp_path: Path) -> None:
    """An empty store made before the sync (a file named ``.db``) is the user's: kept."""
    db = tmp_path / "h.db"
    db.write_bytes(b"")
    status, err = _interrupted_waiting(_home(tmp_path / "home"), db)
    assert (status, err.splitlines()[-1]) == (130, KEPT)
    assert db.is_file()


def test_a_sync_stopped_before_its_first_session_leaves_nothing_behind(tmp_path: Path) -> None:
    """Ctrl-C once the sync holds its lock and reads a Hermes file a writer has locked:
    neither the empty store nor the lock file the sync made is left behind."""
    home = tmp_path / "home"
    (home / ".hermes").mkdir(parents=True)
    hermes = HermesFile(home / ".hermes" / "state.db", "v9")  # a rollback journal: readers wait
    hermes.session("h1")
    hermes.message("h1", "user", "the pelican crontab broke")
    hermes.close()
    writer = sqlite3.connect(home / ".hermes" / "state.db", isolation_level=None)
    writer.execute("BEGIN EXCLUSIVE")
    db = tmp_path / "store" / "h.db"
    db.parent.mkdir()
    lock = db.with_name("h.db.sync-lock")
    try:
        syncing = _sync(home, db)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
                lock.exists() and lock.read_text().strip() == str(syncing.pid)):
            time.sleep(0.01)
        time.sleep(0.5)  # holding the lock, and waiting for the Hermes writer
        assert syncing.poll() is None
        syncing.send_signal(signal.SIGINT)
        _, err = syncing.communicate(timeout=90)
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert (syncing.returncode, err.splitlines()[-1]) == (130, NOTHING_KEPT.format(db))
    assert os.listdir(db.parent) == []
