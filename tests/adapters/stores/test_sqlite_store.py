"""Tests of the SQLite store: what only a real file can show (the shared contract runs in
test_store_contract.py)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.sql import fulltext, schema, writes
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_adopt import remove_store
from harkback.stages.ports import MatchQuery, RecentQuery
from harkback.stages.query import parse_query, to_fts5
from harkback.stages.records import ROLES, Conversation, Message, Session
from tests.adapters.stores.store_contract import failed, match, ok

Make = Callable[..., Conversation]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    """A fresh store in a new database file."""
    with SqliteStore.open(tmp_path / "harkback.db").unwrap() as opened:
        yield opened


def _snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


async def _filled(path: Path, make_conversation: Make) -> None:
    with SqliteStore.open(path).unwrap() as writer:
        await ok(writer.ingest([make_conversation(
            "s1", ("user", "docker bridge down"), ("assistant", "restart it"),
            started_at=1.0)]))


def test_readonly_open_of_a_missing_file_fails_and_creates_nothing(tmp_path: Path) -> None:
    """Read-only mode refuses a missing file with a hint, and leaves no file behind."""
    path = tmp_path / "nested" / "missing.db"
    error = SqliteStore.open(path, readonly=True).failure()
    assert error.reason.startswith(f"no harkback database at {path}; import sessions into it"
                                   f" first: harkback sync --db {path} (")
    assert not (tmp_path / "nested").exists()


def test_writable_open_creates_folders_and_uses_wal(tmp_path: Path) -> None:
    """A writable open creates parent folders and a WAL-mode harkback database."""
    path = tmp_path / "a" / "b" / "h.db"
    SqliteStore.open(path).unwrap().close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    raw.close()


async def test_data_survives_reopening(tmp_path: Path, make_conversation: Make) -> None:
    """What one store wrote, a store opened later on the same file reads."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    with SqliteStore.open(path).unwrap() as again:
        assert [h.content for h in await ok(again.search(match("bridge")))] == [
            "docker bridge down"]


async def test_readonly_reads_leave_the_file_unchanged(tmp_path: Path,
                                                      make_conversation: Make) -> None:
    """Searching, loading and listing through a read-only store change no byte of the file."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    before = _snapshot(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert len(await ok(reader.search(match("docker restart")))) == 2
        assert len(await ok(reader.messages(["s1"]))) == 2
        assert len(await ok(reader.recent(RecentQuery(limit=3)))) == 1
        assert len(await ok(reader.sessions(["s1"]))) == 1
    assert _snapshot(path) == before


async def test_readonly_store_refuses_to_ingest(tmp_path: Path, make_conversation: Make) -> None:
    """Ingesting through a read-only store fails as a value and writes nothing."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    before = _snapshot(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        error = await failed(reader.ingest([make_conversation("s2", ("user", "x"))]))
    assert "read-only" in error.reason
    assert _snapshot(path) == before


async def test_locked_database_fails_as_a_value(tmp_path: Path, make_conversation: Make) -> None:
    """While another connection holds an exclusive lock, ingest reports the lock."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with SqliteStore.open(path, busy_timeout=0.05).unwrap() as store:
            error = await failed(store.ingest([make_conversation("s2", ("user", "x"))]))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "locked" in error.reason


async def test_readers_are_not_blocked_by_a_writer(tmp_path: Path,
                                                   make_conversation: Make) -> None:
    """In WAL mode a search still works while another connection holds the write lock."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with SqliteStore.open(path, readonly=True, busy_timeout=0.05).unwrap() as reader:
            hits = await ok(reader.search(match("bridge")))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(hits) == 1


@pytest.mark.parametrize("readonly", [False, True])
def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path, readonly: bool) -> None:
    """Opening a file that is not a database fails clearly and leaves it untouched."""
    path = tmp_path / "notes.db"
    path.write_bytes(b"these are my notes, not a database\n" * 200)
    before = path.read_bytes()
    error = SqliteStore.open(path, readonly=readonly).failure()
    assert "not a SQLite database" in error.reason
    assert path.read_bytes() == before


@pytest.mark.parametrize("readonly", [False, True])
def test_a_foreign_sqlite_database_is_refused(tmp_path: Path, readonly: bool) -> None:
    """Another application's SQLite file is refused and gets no harkback tables."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE notes (body TEXT)")
    raw.close()
    error = SqliteStore.open(path, readonly=readonly).failure()
    assert error.reason == f"{path} is not a harkback database"
    with sqlite3.connect(path) as raw:
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    raw.close()
    assert tables == {"notes"}


def test_readonly_open_of_an_empty_file_is_refused(tmp_path: Path) -> None:
    """An empty file is not a harkback database to a read-only store."""
    path = tmp_path / "empty.db"
    path.touch()
    assert "not a harkback database" in SqliteStore.open(path, readonly=True).failure().reason
    assert path.read_bytes() == b""


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    """A database from a newer harkback is not opened (and not migrated)."""
    path = tmp_path / "h.db"
    SqliteStore.open(path).unwrap().close()
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    raw.close()
    error = SqliteStore.open(path).failure()
    assert f"schema version {schema.SCHEMA_VERSION + 1}" in error.reason


async def test_a_corrupt_file_fails_as_a_value(tmp_path: Path, make_conversation: Make) -> None:
    """Garbage over the pages of a database's messages makes a search fail as a
    StoreUnavailable (the schema, which spans more than the first page, stays readable)."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    with sqlite3.connect(path) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = raw.execute("PRAGMA page_size").fetchone()[0]
        pages = [row[0] for row in raw.execute(
            "SELECT rootpage FROM sqlite_master "
            "WHERE name IN ('messages', 'messages_fts_data', 'messages_fts_idx')")]
    raw.close()
    data = bytearray(path.read_bytes())
    for page in pages:
        data[(page - 1) * size:page * size] = b"\xa5" * size
    path.write_bytes(bytes(data))
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        error = await failed(reader.search(match("bridge")))
    assert "corrupt" in error.reason


async def test_a_closed_store_fails_as_a_value(tmp_path: Path) -> None:
    """Calls on a closed store report that it is closed."""
    store = SqliteStore.open(tmp_path / "h.db").unwrap()
    store.close()
    store.close()
    assert "closed" in (await failed(store.sessions(["s1"]))).reason


async def test_async_with_closes_the_store(tmp_path: Path) -> None:
    """Leaving an ``async with`` block closes the store."""
    async with SqliteStore.open(tmp_path / "h.db").unwrap() as store:
        assert await ok(store.sessions(["s1"])) == ()
    assert "closed" in (await failed(store.sessions(["s1"]))).reason


async def test_replaced_messages_leave_the_index(tmp_path: Path, make_conversation: Make) -> None:
    """After re-ingests the full-text index holds one row per stored message, none stale."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "alpha one"),
                                                 ("user", "gamma 端口冲突"))]))
        await ok(store.ingest([make_conversation("s1", ("user", "alpha one"), ("user", "beta"),
                                                 ("user", "delta"))]))
        await ok(store.ingest([make_conversation("s2", ("user", "beta again"))]))
    with sqlite3.connect(path) as raw:
        def rows(expression: str) -> int:
            return len(raw.execute("SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?",
                                   (expression,)).fetchall())
        counts = (rows('"alpha"'), rows('"gamma" OR "冲突"'), rows('"beta"'),
                  raw.execute("SELECT COUNT(*) FROM messages_fts").fetchone()[0],
                  raw.execute("SELECT COUNT(*) FROM messages").fetchone()[0])
    raw.close()
    assert counts == (1, 0, 2, 4, 4)


def test_a_changed_message_is_reindexed_under_a_new_row() -> None:
    """Planning a re-ingest unindexes a changed message's old text and indexes the new one."""
    old = Message(session_id="s", position=0, role="user", content="old words")
    new = Message(session_id="s", position=0, role="user", content="new words")
    plan = writes.plan_write([Conversation(Session(id="s"), (new,))], [(3, old)], next_id=5)
    assert (plan.unindex, plan.index) == (((3, "old words"),), ((5, "new words"),))
    assert [row[0] for row in plan.messages] == [5]


async def test_ingest_leaves_the_event_loop_free(tmp_path: Path, make_conversation: Make) -> None:
    """While a large ingest runs, other tasks on the loop keep running."""
    turns = [("user", f"message number {i} about docker networks and bridges " * 4)
             for i in range(5000)]
    ticks = 0
    with SqliteStore.open(tmp_path / "h.db").unwrap() as store:
        ingest = asyncio.ensure_future(ok(store.ingest([make_conversation("big", *turns)])))
        while not ingest.done():
            ticks += 1
            await asyncio.sleep(0.002)
        await ingest
    assert ticks >= 3


@cache
def _index() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    for statement in schema.SCHEMA:
        connection.execute(statement)
    connection.execute("INSERT INTO sessions (id) VALUES ('s')")
    for row_id, text in enumerate(["C++ chat-send fix", "端口冲突 bridge", "dock* OR \"x\""], 1):
        connection.execute("INSERT INTO messages (id, session_id, position, role, content) "
                           "VALUES (?, 's', ?, 'user', ?)", (row_id, row_id, text))
        connection.execute(writes.INSERT_INDEXED, (row_id, text))
    return connection


_SYNTAX = st.lists(st.sampled_from(
    [*'"*()+-:^{}.,;!?@#\x00 \t\nAORNDTaornt端口冲突C', " OR ", " AND ", " NOT ", "NEAR"]
)).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(), _SYNTAX))
def test_sanitized_queries_never_make_fts5_raise(text: str) -> None:
    """For any text, the search statement built from the parsed query runs on real FTS5."""
    expression = parse_query(text).expression
    if expression is None:
        return
    assert to_fts5(expression)
    statement = fulltext.search(MatchQuery(expression=expression, roles=ROLES))
    _index().execute(statement.sql, statement.params).fetchall()


def test_read_only_search_creates_no_side_files(tmp_path: Path) -> None:
    """Searching a settled database read-only creates no -wal/-shm and changes nothing,
    so it also works in a folder the reader may not write."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        asyncio.run(_ingest_one(store))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.db"]
    before = path.read_bytes()
    script = ("import sys; from harkback.adapters.stores.sqlite import SqliteStore; "
              "from harkback.pipeline.facade import Harkback; "
              "store = SqliteStore.open(sys.argv[1], readonly=True).unwrap(); "
              "print(Harkback(store=store).search_sync('heron').to_payload()['count'])")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.db"]
    assert path.read_bytes() == before


async def _ingest_one(store: SqliteStore) -> None:
    await store.ingest([Conversation(Session(id="s"), (
        Message(session_id="s", position=0, role="user", content="a heron at the lake"),))])


async def test_a_read_only_store_refuses_to_remove(tmp_path: Path, make_conversation: Make
                                                   ) -> None:
    """Removing through a read-only store fails as a value and leaves the file as it was."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    before = _snapshot(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        error = await failed(reader.remove_sessions(["s1"]))
    assert "read-only" in error.reason
    assert _snapshot(path) == before


async def test_a_read_only_search_reads_one_snapshot(tmp_path: Path,
                                                     make_conversation: Make) -> None:
    """On the store's thread, a read-only store's calls see the file as the search found it,
    though another connection commits meanwhile; the next search sees the commit."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    with SqliteStore.open(path).unwrap() as writer, \
            SqliteStore.open(path, readonly=True).unwrap() as reader:
        async def search() -> tuple[int, int]:
            before = len(await ok(reader.sessions(["s1", "s2"])))
            await ok(writer.ingest([make_conversation("s2", ("user", "later"), started_at=2.0)]))
            return before, len(await ok(reader.sessions(["s1", "s2"])))
        assert await reader.on_own_thread(search) == (1, 1)
        assert len(await ok(reader.sessions(["s1", "s2"]))) == 2


async def test_a_search_that_raises_ends_its_snapshot(tmp_path: Path,
                                                      make_conversation: Make) -> None:
    """The read transaction ends with the search, however it ends."""
    path = tmp_path / "h.db"
    await _filled(path, make_conversation)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        async def search() -> None:
            await ok(reader.sessions(["s1"]))
            raise ValueError("a stage's bug")
        with pytest.raises(ValueError, match="a stage's bug"):
            await reader.on_own_thread(search)
        assert await ok(reader.run(lambda connection: connection.in_transaction)) is False


def test_an_empty_new_store_another_connection_holds_open_is_not_removed(tmp_path: Path
                                                                         ) -> None:
    """A failed import takes away the store it created, but not one another process has
    opened meanwhile (its -wal and -shm are there): that process would write into a file
    no longer in the folder."""
    path = tmp_path / "new.db"
    SqliteStore.open(path).unwrap().close()
    other = SqliteStore.open(path).unwrap()
    try:
        assert not remove_store(path) and path.exists()
    finally:
        other.close()
    assert remove_store(path) and not path.exists()
