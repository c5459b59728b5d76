"""Tests of the VectorStore port: the shared contract on both stores, and what only a real
SQLite file can show (old files, read-only opens, other writers, damaged data)."""

from __future__ import annotations

import asyncio
import random
import sqlite3
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_vectors import NUMPY_MISSING
from harkback.stages.ports import NearestQuery
from harkback.stages.records import Conversation, MessageHit, Role
from tests.adapters.stores.old_files import file_state, old_file, schema_names
from tests.adapters.stores.store_contract import Make, failed, ok, twin_stores
from tests.adapters.stores.vector_contract import (
    axis,
    between,
    embed_all,
    key,
    near,
    peak_while_keeping,
    places,
)
from tests.conftest import conversation

# --- SQLite only -------------------------------------------------------------------------

def _raw(path: Path) -> sqlite3.Connection:
    """Another connection to the file, as another process (or an older harkback) has."""
    return sqlite3.connect(path, isolation_level=None)


def _raw_count(path: Path, model: str) -> int:
    raw = _raw(path)
    try:
        found: int = raw.execute(
            "SELECT COUNT(*) FROM message_vectors AS v JOIN vector_models AS m "
            "ON m.id = v.model_id WHERE m.name = ?", (model,)).fetchone()[0]
    finally:
        raw.close()
    return found


def _old_file(path: Path, make_conversation: Make) -> None:
    """A database as harkback wrote it before vectors existed (:func:`old_file`)."""
    old_file(path, [make_conversation(
        "s1", ("user", "docker bridge down"), ("assistant", "restart it"), ("user", " "),
        ("user", "thanks"), started_at=1.0)])


async def test_readonly_old_file_has_no_vectors_and_is_not_written(
        tmp_path: Path, make_conversation: Make) -> None:
    """A read-only store on a file without vector tables finds no neighbours, counts none,
    lists every eligible message as unembedded, refuses to keep vectors, and writes
    nothing (no byte, no modification time, no side file)."""
    path = tmp_path / "h.db"
    _old_file(path, make_conversation)
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert await ok(reader.nearest(near(axis(0)))) == ()
        assert await ok(reader.vector_count("m")) == 0
        assert places(await ok(reader.unembedded("m", ("user",), 10))) == [("s1", 0), ("s1", 3)]
        error = await failed(reader.keep_vectors("m", [(key("s1", 0), axis(0))]))
        assert "read-only" in error.reason
    assert file_state(path) == before
    assert "message_vectors" not in schema_names(path)


async def test_writable_open_adds_vector_tables_to_an_old_file(
        tmp_path: Path, make_conversation: Make) -> None:
    """Opening an old file writable adds the vector tables and keeps its schema version and
    its messages; a later read-only open then ranks by vectors without writing."""
    path = tmp_path / "h.db"
    _old_file(path, make_conversation)
    with SqliteStore.open(path).unwrap() as writer:
        assert await ok(writer.vector_count("m")) == 0
        await embed_all(writer, "m", ("user",), batch=1, vector=axis(1))
        await ok(writer.keep_vectors("m", [(key("s1", 3), axis(0))]))
    assert set(schema.VECTOR_OBJECTS) <= schema_names(path)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    raw.close()
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        hits = await ok(reader.nearest(near(axis(0))))
        assert [h.content for h in hits] == ["thanks", "docker bridge down"]
        assert await ok(reader.vector_count("m")) == 2
        assert await ok(reader.unembedded("m", ("user",), 10)) == ()
    assert file_state(path) == before


async def test_vectors_are_stored_as_little_endian_float32(tmp_path: Path,
                                                           make_conversation: Make) -> None:
    """A vector is a BLOB of little-endian float32 values, scaled to unit length."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), (3.0, 4.0, 0.0, 0.0))]))
    raw = _raw(path)
    try:
        (blob,) = raw.execute("SELECT vector FROM message_vectors").fetchone()
    finally:
        raw.close()
    assert blob == struct.pack("<4f", 0.6, 0.8, 0.0, 0.0)


async def test_vector_counts_follow_every_writer(tmp_path: Path,
                                                 make_conversation: Make) -> None:
    """The kept count equals the rows stored, through keeps, replacements, re-ingests and an
    older writer that deletes and re-inserts a session's messages itself."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "a"), ("user", "b")),
                               make_conversation("s2", ("user", "c"), ("user", "d"))]))
        await ok(store.keep_vectors("m", [(key(s, p), axis(p)) for s in ("s1", "s2")
                                          for p in (0, 1)]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(2))]))
        await ok(store.keep_vectors("n", [(key("s1", 0), axis(2))]))
        await ok(store.ingest([make_conversation("s1", ("user", "a"), ("user", "b, edited"))]))
        assert (await ok(store.vector_count("m")), _raw_count(path, "m")) == (3, 3)
        raw = _raw(path)
        try:
            # What harkback's ingest did before vectors existed: delete the session's rows
            # and insert them again (same ids, same content).
            rows = raw.execute("SELECT * FROM messages WHERE session_id = 's2'").fetchall()
            raw.execute("DELETE FROM messages WHERE session_id = 's2'")
            raw.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        finally:
            raw.close()
        assert (await ok(store.vector_count("m")), _raw_count(path, "m")) == (1, 1)
        assert (await ok(store.vector_count("n")), _raw_count(path, "n")) == (1, 1)
        assert places(await ok(store.nearest(near(axis(0))))) == [("s1", 0)]


async def test_a_second_stores_writes_reach_the_cached_matrix(
        tmp_path: Path, make_conversation: Make) -> None:
    """Vectors kept, and messages changed, through another store on the same file show in
    this store's next ranking, although it keeps the model's matrix in memory."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as first, SqliteStore.open(path).unwrap() as second:
        await ok(first.ingest([make_conversation("s1", ("user", "a"), ("user", "b"))]))
        await ok(first.keep_vectors("m", [(key("s1", 0), between(0, 1, 0.5))]))
        assert places(await ok(first.nearest(near(axis(0))))) == [("s1", 0)]
        await ok(second.keep_vectors("m", [(key("s1", 1), axis(0))]))
        assert places(await ok(first.nearest(near(axis(0))))) == [("s1", 1), ("s1", 0)]
        await ok(second.ingest([make_conversation("s1", ("user", "a"), ("user", "new b"))]))
        assert places(await ok(first.nearest(near(axis(0))))) == [("s1", 0)]


async def test_another_writer_can_make_an_early_message_eligible(
        tmp_path: Path, make_conversation: Make) -> None:
    """After a store listed everything, a message another connection filled in is listed."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", ""), ("user", "b"),
                                                 ("user", "c"))]))
        assert await embed_all(store, "m", ("user",), batch=1) == [("s1", 1), ("s1", 2)]
        raw = _raw(path)
        try:
            raw.execute("UPDATE messages SET content = 'filled in' WHERE position = 0")
        finally:
            raw.close()
        assert places(await ok(store.unembedded("m", ("user",), 5))) == [("s1", 0)]


async def test_damaged_vectors_fail_as_a_value(tmp_path: Path, make_conversation: Make) -> None:
    """A vector BLOB of the wrong size makes ranking fail with a StoreUnavailable."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "a"), ("user", "b"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0)), (key("s1", 1), axis(1))]))
        assert len(await ok(store.nearest(near(axis(0))))) == 2
        raw = _raw(path)
        try:
            raw.execute("UPDATE message_vectors SET vector = x'0000803f' WHERE message_id = 2")
        finally:
            raw.close()
        error = await failed(store.nearest(near(axis(0))))
    assert "vectors of model 'm'" in error.reason
    assert "damaged" in error.reason


async def test_keeping_vectors_does_not_read_the_texts_back(tmp_path: Path,
                                                           make_conversation: Make) -> None:
    """A batch's texts are compared with what each message holds in SQLite, not read back
    into this process: 16 messages of 1 MB took 16 MB more while their vectors were kept."""
    with SqliteStore.open(tmp_path / "h.db").unwrap() as store:
        kept, peak = await peak_while_keeping(store, make_conversation)
    assert (kept, peak < 2 << 20) == (16, True), peak


async def test_missing_numpy_fails_as_a_value(tmp_path: Path, make_conversation: Make,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Without numpy, ranking by vectors fails with a reason naming the extra to install,
    while keeping vectors still works."""
    monkeypatch.setitem(sys.modules, "numpy", None)  # makes `import numpy` raise ImportError
    with SqliteStore.open(tmp_path / "h.db").unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        assert await ok(store.keep_vectors("m", [(key("s1", 0), axis(0))])) == 1
        error = await failed(store.nearest(near(axis(0))))
    assert error.reason == NUMPY_MISSING
    assert "harkback[hybrid]" in error.reason


async def test_a_locked_database_fails_to_keep_vectors_as_a_value(
        tmp_path: Path, make_conversation: Make) -> None:
    """While another connection holds an exclusive lock, keeping vectors reports the lock."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path, busy_timeout=0.05).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        holder = _raw(path)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            error = await failed(store.keep_vectors("m", [(key("s1", 0), axis(0))]))
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert "locked" in error.reason
        assert await ok(store.vector_count("m")) == 0


# --- both stores rank alike -------------------------------------------------------------

DIMENSIONS = 8


def _random_vector(rng: random.Random) -> tuple[float, ...]:
    return tuple(rng.gauss(0.0, 1.0) for _ in range(DIMENSIONS))


def _corpus() -> tuple[Conversation, ...]:
    # Most messages come from one source, so hiding it leaves few of the best candidates:
    # the SQLite store must go past its first cut to fill the limit.
    rng = random.Random(11)
    roles: tuple[Role, ...] = ("user", "assistant", "tool")

    def chat(session_id: str, size: int, source: str, start: float) -> Conversation:
        return conversation(session_id, *[(rng.choice(roles), f"{session_id} {i}")
                                          for i in range(size)],
                            source=source, started_at=start,
                            timestamps=[start + i if i % 4 else None for i in range(size)])
    return (chat("cron", 330, "cron", 1000.0), chat("cli", 60, "cli", 2000.0),
            chat("web", 30, "web", 3000.0))


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryStore, SqliteStore]]:
    """A memory store and a SQLite store holding the same corpus and the same vectors."""
    corpus = _corpus()
    rng = random.Random(5)
    pairs = [(key(m.session_id, m.position), _random_vector(rng))
             for c in corpus for m in c.messages]
    stores = twin_stores(corpus, tmp_path_factory.mktemp("vector-twins"))
    memory, sqlite = next(stores)

    async def fill() -> None:
        assert await ok(memory.keep_vectors("m", pairs)) == len(pairs)
        assert await ok(sqlite.keep_vectors("m", pairs)) == len(pairs)
    asyncio.run(fill())
    yield memory, sqlite
    next(stores, None)  # closes the SQLite store


@pytest.mark.parametrize(("fields", "full"), [
    ({}, True),
    ({"limit": 300}, True),
    # cli and web hold 90 messages, cron 330: the first cut keeps few of them.
    ({"hidden_sources": ("cron",), "limit": 50}, True),
    ({"roles": ("assistant",), "hidden_sources": ("cron", "web"), "limit": 40}, False),
    ({"since": 2010.0, "until": 3005.0, "limit": 30}, True),
    ({"until": 1000.0, "roles": ("user",)}, False),
], ids=str)
def test_sqlite_ranks_as_the_memory_store(twins: tuple[MemoryStore, SqliteStore],
                                          fields: dict[str, Any], full: bool) -> None:
    """For the same vectors and query, both stores return the same hits and scores, also
    when the filters leave few of the best-scored messages."""
    memory, sqlite = twins
    rng = random.Random(3)

    async def both(query: NearestQuery) -> tuple[tuple[MessageHit, ...], tuple[MessageHit, ...]]:
        return await ok(memory.nearest(query)), await ok(sqlite.nearest(query))

    for _ in range(5):
        query = near(_random_vector(rng), **fields)
        expected, found = asyncio.run(both(query))
        assert expected
        if full:
            assert len(found) == query.limit
        assert places(found) == places(expected)
        assert [h.score for h in found] == pytest.approx([h.score for h in expected], abs=1e-5)
        assert [(h.content, h.role, h.source, h.timestamp) for h in found] == [
            (h.content, h.role, h.source, h.timestamp) for h in expected]
