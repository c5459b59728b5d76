"""Why a writable command cannot open a store, said as a read-only one says it: a file
another program holds locked is "locked", a damaged one "corrupt", never "cannot be read
as a database" (which reads as a file that is not one)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run
from tests.pipeline.test_sync_process import BOUND

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

CRASHED_WRITER = """
import os, sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA wal_autocheckpoint = 0")
connection.execute("UPDATE sessions SET title = 'renamed'")
os._exit(0)  # its commit stays in the -wal
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


def test_a_store_of_two_names_is_not_written_through_either(tmp_path: Path) -> None:
    """A store hard-linked under a second name (``ln``, a ``cp -al`` backup): SQLite keeps
    a write's -wal beside the name it opened, so two ingests through the two names at once
    each said every session was stored, and one's were lost with the file damaged. A
    writable command refuses it in one line, the file keeps its bytes, and reads go on."""
    db = ingested(tmp_path, SESSIONS)
    other = tmp_path / "other.db"
    os.link(db, other)
    more = _one_more(tmp_path)
    before = db.read_bytes()
    done = run("ingest", str(more), db=other)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert f"cannot write the database {other}: the file has 2 names (hard links)" in line
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.db", "more.jsonl", "other.db",
                                                         "sessions.jsonl"]
    found = run("search", "docker", "--json", db=other)
    assert json.loads(found.stdout)["count"] == 3, found.stderr


# A reader holding its snapshot while harkback ingests: no checkpoint can empty the -wal,
# and the reader ends as a crash would, leaving the ingest's commits there.
HELD_READER = """
import os, sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("BEGIN")
connection.execute("SELECT COUNT(*) FROM sessions").fetchone()
print("reading", flush=True)
sys.stdin.readline()
os._exit(0)
"""


def test_the_way_out_of_two_names_keeps_the_commits_in_the_wal(tmp_path: Path) -> None:
    """The refusal of a store of two names said to ``cp`` the file to a new name, which
    left behind the sessions still in its -wal. Its command now, pasted into bash as
    printed, makes a store of one name that holds every session, the -wal's too."""
    from tests.pipeline.test_cli_show import _pasted

    db = _commits_left_in_the_wal(tmp_path)
    file_alone = tmp_path / "file-alone.db"
    file_alone.write_bytes(db.read_bytes())  # what cp of the file alone copied
    with sqlite3.connect(file_alone) as raw:
        assert raw.execute("SELECT COUNT(*) FROM sessions").fetchone() == (3,)
    raw.close()
    way_out = _way_out_of_two_names(db)
    assert _pasted(way_out, tmp_path).returncode == 0, way_out
    assert _sessions_in(tmp_path / "h-1.db") == 4
    found = run("search", "kafka", "--json", db=tmp_path / "h-1.db")
    assert [r["session_id"] for r in json.loads(found.stdout)["results"]] == ["s9"], found.stderr
    assert run("ingest", str(_one_more(tmp_path)), db=tmp_path / "h-1.db").returncode == 0


def test_the_way_out_of_two_names_reads_the_store_and_overwrites_nothing(
        tmp_path: Path) -> None:
    """The way out's command opened the store writable, so on closing it checkpointed the
    -wal into the file of two names, which a writer through the other name may have moved
    past; and run a second time (from the shell's history), it put the old store back over
    the copy, losing the sessions stored in the copy since. The store's file and -wal keep
    their bytes now, and a second run copies nothing, saying why."""
    from tests.pipeline.test_cli_show import _pasted

    db = _commits_left_in_the_wal(tmp_path)
    wal = tmp_path / "h.db-wal"
    before = (db.read_bytes(), wal.read_bytes())
    way_out = _way_out_of_two_names(db)
    assert _pasted(way_out, tmp_path).returncode == 0, way_out
    assert (db.read_bytes(), wal.read_bytes()) == before
    copy = tmp_path / "h-1.db"
    assert _sessions_in(copy) == 4
    later = tmp_path / "later.jsonl"
    later.write_text(json.dumps(conversation_to_json(
        conversation("s10", ("user", "redis eviction")))) + "\n", encoding="utf-8")
    assert run("ingest", str(later), db=copy).returncode == 0
    again = _pasted(way_out, tmp_path)
    assert (again.returncode, again.stderr) == (1, f"{copy} exists: nothing copied\n")
    assert _sessions_in(copy) == 5


def _commits_left_in_the_wal(folder: Path) -> Path:
    """``folder/h.db`` of 4 sessions, the 4th (s9) only in its -wal: ingested while a reader
    held its snapshot, so no checkpoint could move it, the reader then ending as a crash."""
    db = ingested(folder, SESSIONS)
    reader = subprocess.Popen([sys.executable, "-c", HELD_READER, str(db)], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "reading\n"
        stored = run("ingest", str(_one_more(folder)), db=db)
        assert stored.returncode == 0, stored.stderr
    finally:
        reader.communicate("\n", timeout=30)
    return db


def _way_out_of_two_names(db: Path) -> str:
    """The command a write's refusal names, once ``db`` has a second name."""
    os.link(db, db.with_name("other.db"))
    done = run("ingest", str(db.with_name("sessions.jsonl")), db=db)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    return line.split("leaves them behind): ", 1)[1].split(" and use ", 1)[0]


def _sessions_in(path: Path) -> int:
    with sqlite3.connect(path) as raw:
        count: int = raw.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    raw.close()
    return count


def test_a_side_file_this_user_may_not_write_is_named(tmp_path: Path) -> None:
    """ingest into a store whose -wal (left by a crash, or by ``sudo harkback``) this user
    may not write: the line said "the database is read-only", of a file this user may
    write. It names the -wal and what to do; the files keep their bytes."""
    db = ingested(tmp_path, SESSIONS)
    subprocess.run([sys.executable, "-c", CRASHED_WRITER, str(db)], check=False)
    wal = tmp_path / "h.db-wal"
    assert wal.stat().st_size > 32  # a commit is in it, which a checkpoint must move
    wal.chmod(0o444)
    more = _one_more(tmp_path)
    before = db.read_bytes(), wal.read_bytes()
    done = subprocess.run([*BOUND, sys.executable, "-m", "harkback.pipeline.cli", "ingest",
                           str(more), "--db", str(db)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert f"cannot write the database {db}: its -wal file {wal} is read-only for " in line
    assert "run a command that only reads" in line
    assert (db.read_bytes(), wal.read_bytes()) == before


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_an_empty_side_file_this_user_may_not_write_is_named(tmp_path: Path,
                                                              suffix: str) -> None:
    """An empty -wal or a -shm this user may not write (another user's, left by a
    ``sudo harkback`` or the sqlite3 shell): SQLite opens it read-only, so the write failed
    with "the database is read-only", of a file this user may write. Only a -wal holding
    commits was named; the store and the side file keep their bytes."""
    db = ingested(tmp_path, SESSIONS)
    side = tmp_path / f"h.db{suffix}"
    side.write_bytes(b"")
    side.chmod(0o444)
    before = db.read_bytes()
    done = subprocess.run([*BOUND, sys.executable, "-m", "harkback.pipeline.cli", "ingest",
                           str(_one_more(tmp_path)), "--db", str(db)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert f"cannot write the database {db}: its {suffix} file {side} is read-only for " in line
    assert (db.read_bytes(), side.read_bytes()) == (before, b"")


def _one_more(folder: Path) -> Path:
    """A JSON lines file of one session the store does not hold."""
    more = folder / "more.jsonl"
    more.write_text(json.dumps(conversation_to_json(
        conversation("s9", ("user", "kafka lag")))) + "\n", encoding="utf-8")
    return more


@pytest.mark.parametrize("command", ["ingest", "search", "stats", "migrate"])
def test_a_store_moved_away_leaves_its_last_commits_and_they_are_not_taken(
        tmp_path: Path, command: str) -> None:
    """A store moved while a connection had it open (a watch, an MCP server) leaves its last
    commits in the -wal beside the old name (SQLite does not checkpoint into a file that
    moved). A command then run on the old name, as the watch's own stop line advises, made a
    new store there and took that -wal away: sessions each ingest had said it stored were
    gone. It is refused in one line saying where they are; moved back, the store holds them.
    A read, stats or migrate says the same, not "ingest sessions first" (the way to that
    loss). The line says
    that deleting the -wal loses them, and that the store must go back before it is written
    at its new name: the old -wal's pages then undid those writes."""
    db = _commits_left_in_the_wal(tmp_path)
    wal = tmp_path / "h.db-wal"
    moved = tmp_path / "moved.db"
    db.rename(moved)
    left = wal.read_bytes()
    words = {"ingest": [str(_one_more(tmp_path))], "search": ["kafka"]}.get(command, [])
    done = run(command, *words, db=db)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"harkback: session store unavailable: there is no store at {db}, "
                           f"but its -wal file {wal} holds {len(left)} bytes of its last "
                           "commits"), line
    assert (f"move that store back to {db} while no harkback runs, before anything writes to "
            "it at its new name") in line
    assert f"else delete {wal} and {tmp_path / 'h.db-shm'}, losing those commits" in line
    assert not db.exists() and wal.read_bytes() == left
    moved.rename(db)
    assert _sessions_in(db) == 4


def test_a_symlinked_store_moved_away_is_to_go_back_beside_its_wal(tmp_path: Path) -> None:
    """A store named through a symlink keeps its -wal beside the file the link names. Moved
    away under a writer, the line said to move it back to the link's name: a file there
    replaces the link, SQLite looks for its -wal beside that name, and the commits are left
    unread. It names the place beside the -wal, where, moved back, the store has them."""
    db = _commits_left_in_the_wal(tmp_path)
    link = tmp_path / "link.db"
    link.symlink_to(db)
    db.rename(tmp_path / "moved.db")
    done = run("ingest", str(_one_more(tmp_path)), db=link)
    assert done.returncode == 1, done.stderr
    assert f"move that store back to {db} while no harkback runs" in done.stderr, done.stderr
    (tmp_path / "moved.db").rename(db)
    assert _sessions_in(link) == 4
