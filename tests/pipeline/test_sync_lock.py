"""One sync writes to a store at a time: real processes meet the store's sync lock.

A helper process holds the lock as a sync does (``SyncLock`` of the same store), and
``harkback sync`` run as a command must wait for it, saying so, and write nothing meanwhile;
a ``sync --watch`` holds it per round only, so a sync run beside it (cron) ends.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from harkback.pipeline.command_basics import CliError
from harkback.pipeline.sync_lock import PG_NAME, REOPEN_TRIES, FileTurn, PostgresTurn
from tests.pipeline.sync_home import (
    CLAUDE_FILE,
    CLAUDE_SESSION,
    DONE_WITH_SKIPS,
    claude_line,
    found_ids,
    make_home,
)
from tests.pipeline.test_sync_process import command, environment, stop_once_found, watching
from tests.support.new_stores import new_database
from tests.support.postgres_server import PostgresServer

HOLDER = """
import asyncio, sys
from harkback.pipeline import wiring
from harkback.pipeline.sync_lock import SyncLock

async def main():
    store = wiring.open_store(sys.argv[1]).unwrap()
    lock = SyncLock.of(sys.argv[1], store)
    async with lock.held():
        print("held", flush=True)
        sys.stdin.read()  # until the test closes it
    lock.close()
    store.close()

asyncio.run(main())
"""


@contextlib.contextmanager
def holding(db: str) -> Iterator[subprocess.Popen[str]]:
    """A process holding the sync lock of ``db`` until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, db], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n", \
            holder.communicate()[1]
        yield holder
    finally:
        if holder.poll() is None:
            holder.communicate(input="", timeout=60)


def _shown(db: str) -> str:
    if db.startswith("postgresql"):
        from harkback.adapters.stores.postgres_connection import where
        return where(db)
    return db


def test_a_second_sync_waits_for_the_one_writing(tmp_path: Path) -> None:
    """SQLite: the lock file beside the store is what the two processes meet at."""
    home = make_home(tmp_path / "home")
    db = tmp_path / "h.db"
    _waits_its_turn_then_writes(home, str(db), lambda: db.exists() and bool(
        found_ids(db, "refresh path untested")), DONE_WITH_SKIPS, "sync")
    assert (tmp_path / "h.db.sync-lock").read_text().strip().isdigit()


def test_a_second_sync_waits_on_postgresql(postgres_server: PostgresServer,
                                           tmp_path: Path) -> None:
    """PostgreSQL: an advisory lock of the store's schema, on the server."""
    url = new_database(postgres_server, "sync_lock")
    home = make_home(tmp_path / "home")
    _waits_its_turn_then_writes(home, url, lambda: _holds_sessions(url), DONE_WITH_SKIPS,
                                "sync")


def test_a_dry_run_makes_no_lock_file(tmp_path: Path) -> None:
    """A dry run writes nothing: it neither takes the lock nor makes its file."""
    home = make_home(tmp_path / "home")
    db = tmp_path / "h.db"
    assert subprocess.run(command(home, db), env=environment(home), capture_output=True,
                          check=False).returncode == DONE_WITH_SKIPS
    (tmp_path / "h.db.sync-lock").unlink()
    done = subprocess.run(command(home, db, "--dry-run"), env=environment(home),
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr  # nothing changed: no damaged line read again
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.db", "home"]


def test_a_sync_beside_a_watch_gets_its_turn(tmp_path: Path) -> None:
    """A watch holds the lock per round, not for as long as it watches: a sync run beside it
    (cron) ends, and the watch goes on picking up appends after it."""
    home = make_home(tmp_path / "home")
    db = tmp_path / "h.db"
    with watching(home, db) as watcher:
        assert watcher.stderr is not None
        line = watcher.stderr.readline()
        while line.endswith("(skipped)\n"):
            line = watcher.stderr.readline()
        assert line.startswith("watching "), line
        done = subprocess.run(command(home, db, "--json"), env=environment(home),
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr  # the watch had synced it all
        assert watcher.poll() is None
        with (home / ".claude" / "projects" / CLAUDE_FILE).open("a") as handle:
            handle.write(claude_line(CLAUDE_SESSION, "the axolotl gateway times out", "u-new"))
        stop_once_found(watcher, db, "axolotl")


def test_help_says_a_second_sync_waits() -> None:
    """``sync --help`` documents what a second sync does."""
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "sync", "--help"],
                          capture_output=True, text=True, check=False)
    assert "another sync or import is writing" in " ".join(done.stdout.split())


def _waits_its_turn_then_writes(home: Path, db: str, stored: Callable[[], bool], status: int,
                                *command: str) -> None:
    """``command`` (a sync, import or ingest into ``db``) started while another process
    holds the lock: it says whose turn it is, stores nothing while waiting, and stores once
    the holder lets go, ending with ``status``."""
    with holding(db) as holder:
        writing = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", *command, "--db", db, "--json"],
            env=environment(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert writing.stderr is not None
        said = writing.stderr.readline()
        assert said == (f"harkback: another sync or import is writing to {_shown(db)} "
                        f"(pid {holder.pid}); the {command[0]} waits its turn\n")
        time.sleep(1.0)
        assert writing.poll() is None  # still waiting its turn
        assert not stored()
    out, err = writing.communicate(timeout=120)
    assert writing.returncode == status, err
    assert json.loads(out)["success"] and stored()


def test_an_import_waits_for_the_sync_writing(tmp_path: Path) -> None:
    """``harkback import`` writes the marks a sync writes: it takes its turn too, and stores
    nothing while a sync holds the lock."""
    home = make_home(tmp_path / "home")
    db = tmp_path / "h.db"
    _waits_its_turn_then_writes(home, str(db), lambda: bool(
        found_ids(db, "refresh path untested")), DONE_WITH_SKIPS,
        "import", "claude-code", str(home / ".claude" / "projects"))


@pytest.mark.parametrize("kind", ["import", "ingest"])
def test_an_import_and_an_ingest_wait_on_postgresql(postgres_server: PostgresServer,
                                                     tmp_path: Path, kind: str) -> None:
    """They took no PostgreSQL lock (its connection had no bound on a frozen server): an
    import or ingest beside a sync could store an older copy of a session after the sync
    stored a newer one. They take their turn now, as on SQLite."""
    home = make_home(tmp_path / "home")
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "the quokka gateway times out"}]}) + "\n",
        encoding="utf-8")
    args = (("import", "claude-code", str(home / ".claude" / "projects")) if kind == "import"
            else ("ingest", str(source)))
    url = new_database(postgres_server, "sync_lock")
    _waits_its_turn_then_writes(home, url, lambda: _holds_sessions(url),
                                DONE_WITH_SKIPS if kind == "import" else 0, *args)


def _holds_sessions(url: str) -> bool:
    with psycopg.connect(url) as connection:
        exists = connection.execute("SELECT to_regclass('sessions') IS NOT NULL").fetchone()
        return bool(exists and exists[0] and connection.execute(
            "SELECT count(*) FROM sessions").fetchone() != (0,))


def test_a_failed_import_leaves_the_lock_file_a_sync_made(tmp_path: Path) -> None:
    """An import that fails into a store it created removes that store, and only it: it
    removed the lock file a sync had made beside the path too (the store since deleted by
    hand), which the import had not made."""
    made = tmp_path / "h.db.sync-lock"
    made.write_text("4242\n")  # a sync's, left when its store was deleted
    (tmp_path / "state.db").write_text("not a database\n")
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "import", "hermes",
                           str(tmp_path / "state.db"), "--db", str(tmp_path / "h.db")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.db.sync-lock", "state.db"]


LOCKER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()  # until the test closes it
"""


@pytest.mark.parametrize("command", ["ingest", "import"])
def test_an_import_stopped_before_it_stored_leaves_no_new_store(tmp_path: Path,
                                                                command: str) -> None:
    """Ctrl-C while the import waits its turn (a sync holds the lock of a store since
    deleted): the store it had just created was left behind, empty; a run stopped on the
    way now takes it away, as a failed one does (its -wal and -shm too)."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "the quokka gateway times out"}]}) + "\n",
        encoding="utf-8")
    db = tmp_path / "h.db"
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(tmp_path / "h.db.sync-lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout is not None and locker.stdout.readline() == "held\n"
        importing = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli",
             *(("ingest",) if command == "ingest" else ("import", "jsonl")), str(source),
             "--db", str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert importing.stderr is not None
        assert "waits its turn" in importing.stderr.readline()
        assert db.exists()  # created, then waiting for the lock
        importing.send_signal(signal.SIGINT)
        _, err = importing.communicate(timeout=60)
    finally:
        locker.communicate(input="", timeout=60)
    assert importing.returncode == 130, err
    # The line says so (it said the sessions stored before it were kept).
    assert err.splitlines()[-1] == (f"harkback: interrupted; nothing was stored, and {db}, "
                                    "which it had created, is removed again: the same "
                                    "command run again starts afresh")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.db.sync-lock", "in.jsonl"]


NEXT = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
print("ready", flush=True)
while not os.pread(fd, 32, 0).strip():  # until a sync has taken the lock (its pid)
    time.sleep(0.001)
fcntl.flock(fd, fcntl.LOCK_EX)  # the next in turn: woken as the lock is given back
print("there" if os.path.exists(sys.argv[2]) else "gone", flush=True)
"""


def test_a_failed_first_sync_removes_its_store_before_giving_the_lock_back(
        tmp_path: Path) -> None:
    """A first sync that failed, storing nothing, took its new store away after it gave the
    lock back: the sync next in turn could write to it meanwhile, and lose what it wrote.
    The store is gone (with the lock file) by the time the next one holds the lock."""
    (tmp_path / "home").mkdir()
    (tmp_path / "state.db").write_text("not a database\n")
    made = tmp_path / "h.db.sync-lock"
    made.write_bytes(b"")  # left by a sync of a store since deleted: the next one waits on it
    db = tmp_path / "h.db"
    following = subprocess.Popen([sys.executable, "-c", NEXT, str(made), str(db)],
                                 stdout=subprocess.PIPE, text=True)
    assert following.stdout is not None and following.stdout.readline() == "ready\n"
    done = subprocess.run(
        [sys.executable, "-m", "harkback.pipeline.cli", "sync", "--hermes",
         str(tmp_path / "state.db"), "--db", str(db)],
        env=environment(tmp_path / "home"), capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    out, _ = following.communicate(timeout=60)
    assert out == "gone\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "state.db"]


def test_a_lock_file_removed_while_one_waits_is_taken_afresh(tmp_path: Path) -> None:
    """A sync waiting on the lock file when it is removed (with a store a failed first sync
    made) then locks a file no one else can find: it opens the name again, so a sync
    starting now waits for it instead of writing beside it."""
    path = tmp_path / "h.db.sync-lock"
    first, waiting, later = FileTurn(path), FileTurn(path), FileTurn(path)
    assert first.take() is None
    assert waiting.take() is not None  # open, and waiting its turn
    first.remove()  # held by the remover itself: removed, then released
    assert not path.exists()
    assert waiting.take() is None
    assert later.take() is not None  # waits for the one writing
    for turn in (first, waiting, later):
        turn.close()


def test_a_lock_file_another_sync_holds_is_not_removed(tmp_path: Path) -> None:
    """Removing the lock file made with a store removed again leaves it while another sync
    holds it, and that sync's lock still keeps a third one waiting."""
    path = tmp_path / "h.db.sync-lock"
    holder, remover, later = FileTurn(path), FileTurn(path), FileTurn(path)
    assert holder.take() is None
    remover.remove()
    assert path.exists()
    assert later.take() is not None
    for turn in (holder, later):
        turn.close()


def test_a_lock_file_replaced_each_time_it_is_locked_ends_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Something that puts a new file in the lock file's place each time it is opened kept
    ``take`` opening it again for good; it gives up after a bound, in one line."""
    path = tmp_path / "h.db.sync-lock"
    opened = os.open
    replaced = itertools.count()

    def open_then_replace(name: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
        fd = opened(name, flags, mode, **kw)
        if Path(name) == path:  # a new file takes the name, right after it is opened
            fresh = tmp_path / f"fresh-{next(replaced)}"
            fresh.write_bytes(b"")
            fresh.replace(path)
        return fd

    monkeypatch.setattr(os, "open", open_then_replace)
    turn, outcome = FileTurn(path), []

    def take() -> None:
        try:
            outcome.append(turn.take())
        except CliError as error:
            outcome.append(str(error))
    taking = threading.Thread(target=take, daemon=True)
    taking.start()
    taking.join(timeout=30)
    assert not taking.is_alive(), "still opening the lock file again"
    monkeypatch.undo()
    assert outcome == [f"cannot lock {path} for writing: it was removed or replaced each of "
                       f"{REOPEN_TRIES + 1} times it was locked (does another program "
                       "recreate it?)"]


def test_a_watch_locks_again_after_its_connection_was_closed(
        postgres_server: PostgresServer) -> None:
    """A watch keeps its lock connection between rounds; a server restart or an idle
    timeout that closes it must not end the watch at its next round."""
    url = new_database(postgres_server, "sync_lock")
    turn = PostgresTurn(url, "the store")
    assert turn.take() is None
    turn.give_back()
    with psycopg.connect(url, autocommit=True) as admin:
        ended = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                              "WHERE application_name = %s", (PG_NAME.format(os.getpid()),))
        assert ended.fetchall() == [(True,)]
    assert turn.take() is None
    turn.close()
