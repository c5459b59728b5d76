"""Why a writable command cannot open a store, said as a read-only one says it: a file
another program holds locked is "locked", a damaged one "corrupt", never "cannot be read
as a database" (which reads as a file that is not one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run

HOLDER = """
import sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA locking_mode = EXCLUSIVE")
connection.execute("BEGIN EXCLUSIVE")
connection.execute("COMMIT")  # the lock stays while the connection lives
print("locked", flush=True)
sys.stdin.read()
"""

CRASHED_READER = """
import os, signal, sqlite3, sys
sqlite3.connect(sys.argv[1]).execute("SELECT 1 FROM sqlite_master").fetchall()
os.kill(os.getpid(), signal.SIGKILL)  # its -wal and -shm stay
"""

SESSIONS = [conversation(f"s{n}", ("user", f"the docker bridge lost its dns {n}"))
            for n in range(3)]


def test_a_store_another_program_holds_locked_is_named_locked(tmp_path: Path) -> None:
    """migrate while another program keeps an EXCLUSIVE lock (the -wal and -shm of a
    crashed reader beside the file): one line saying the store is locked by another
    connection; the file keeps its bytes."""
    db = ingested(tmp_path, SESSIONS)
    subprocess.run([sys.executable, "-c", CRASHED_READER, str(db)], check=False)
    before = db.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db)], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        done = run("migrate", db=db)
    finally:
        holder.communicate("", timeout=30)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "locked by another connection" in line and str(db) in line, line
    assert db.read_bytes() == before


def test_a_damaged_store_is_named_corrupt_by_a_writable_command(tmp_path: Path) -> None:
    """ingest into a store whose schema page was damaged: one line saying the file is
    corrupt, as stats says it; the file keeps its bytes."""
    db = ingested(tmp_path, SESSIONS)
    damaged = bytearray(db.read_bytes())
    damaged[200:4096] = bytes(range(256)) * 15 + bytes(range(136))  # page 1 past its header
    db.write_bytes(bytes(damaged))
    read = run("stats", db=db)
    assert "the database file is corrupt" in read.stderr, read.stderr
    written = run("ingest", str(tmp_path / "sessions.jsonl"), db=db)
    assert written.returncode == 1
    [line] = written.stderr.splitlines()
    assert "the database file is corrupt" in line and str(db) in line, line
    assert db.read_bytes() == bytes(damaged)
