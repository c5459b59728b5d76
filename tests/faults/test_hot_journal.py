"""A store left with a hot ``-journal``: a process killed while it wrote the file in
rollback-journal mode (as a new store's first transactions run, before the switch to WAL).

A read-only command cannot roll the write back, so it says what happened and writes
nothing; a writable command rolls it back, as any SQLite writer does, and goes on; a file
not marked as harkback's is left alone.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from harkback.stages.ingest_format import conversation_to_json
from harkback.stages.records import Conversation
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run

KILLED_WRITE = """
import os, signal, sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA journal_mode = DELETE")
connection.execute("PRAGMA cache_size = 2")  # pages spill into the file before COMMIT
connection.execute("BEGIN")
connection.execute("UPDATE sessions SET title = 'half written'")
connection.execute("DELETE FROM messages")
os.kill(os.getpid(), signal.SIGKILL)
"""

SESSIONS = [conversation(f"s{n}", ("user", f"the docker bridge lost its dns {n} " * 40),
                         ("assistant", "recreate the network " * 40), title=f"Docker {n}")
            for n in range(60)]


def _killed_mid_write(db: Path) -> None:
    """Leave ``db`` as a process killed in the middle of a write leaves it."""
    done = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(db)], check=False)
    assert done.returncode < 0
    assert Path(f"{db}-journal").stat().st_size > 0  # the fault is there to meet


def _jsonl(folder: Path, session: Conversation) -> Path:
    path = folder / "more.jsonl"
    path.write_text(json.dumps(conversation_to_json(session)) + "\n", encoding="utf-8")
    return path


def test_a_hot_journal_is_named_by_a_read_and_rolled_back_by_a_write(tmp_path: Path) -> None:
    """stats: one line saying a write was interrupted (not "read-only"), nothing written;
    ingest: the interrupted write rolled back, every session whole, the new one added."""
    db = ingested(tmp_path, SESSIONS)
    _killed_mid_write(db)
    before = db.read_bytes(), Path(f"{db}-journal").read_bytes()
    read = run("stats", db=db)
    assert read.returncode == 1
    [line] = read.stderr.splitlines()
    assert "interrupted" in line and str(db) in line and "read-only" not in line, line
    assert (db.read_bytes(), Path(f"{db}-journal").read_bytes()) == before
    written = run("ingest", str(_jsonl(tmp_path, conversation("new", ("user", "hello")))),
                  db=db)
    assert written.returncode == 0, written.stderr
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        titles = dict(raw.execute("SELECT id, title FROM sessions").fetchall())
        messages = raw.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    raw.close()
    assert titles == {**{f"s{n}": f"Docker {n}" for n in range(60)}, "new": ""}
    assert messages == 121
    assert run("stats", db=db).returncode == 0


def test_a_foreign_file_with_a_hot_journal_is_left_alone(tmp_path: Path) -> None:
    """Another program's file with an interrupted write: refused, file and journal as
    they were."""
    db = tmp_path / "other.db"
    with sqlite3.connect(db) as raw:
        raw.execute("CREATE TABLE sessions (id TEXT, title TEXT)")
        raw.execute("CREATE TABLE messages (x TEXT)")
        raw.executemany("INSERT INTO sessions VALUES (?, ?)",
                        [(str(n), "x" * 500) for n in range(400)])
        raw.executemany("INSERT INTO messages VALUES (?)", [("y" * 500,)] * 400)
    raw.close()
    _killed_mid_write(db)
    before = db.read_bytes(), Path(f"{db}-journal").read_bytes()
    done = run("ingest", str(_jsonl(tmp_path, SESSIONS[0])), db=db)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "interrupted" in line and str(db) in line, line
    assert (db.read_bytes(), Path(f"{db}-journal").read_bytes()) == before
