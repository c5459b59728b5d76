"""A read-only SQLite store opened for one command maps its file: same answers, and a
long-lived or writable store never maps."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline import wiring
from tests.adapters.stores.store_contract import Make, match, ok


async def _mapped_bytes(store: SqliteStore) -> int:
    return await ok(store.run(
        lambda connection: int(connection.execute("PRAGMA mmap_size").fetchone()[0])))


async def _stored(path: Path, make_conversation: Make) -> None:
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([
            make_conversation("s1", ("user", "the docker bridge is down"), title="bridge"),
            make_conversation("s2", ("user", "dns again"), title="dns")]))


async def test_a_mapped_reader_maps_and_finds_the_same(tmp_path: Path,
                                                       make_conversation: Make) -> None:
    """Mapped or not, a read-only store finds the same messages and titles; only the
    mapped one has a memory map."""
    path = tmp_path / "h.db"
    await _stored(path, make_conversation)
    with (SqliteStore.open(path, readonly=True, mapped=True).unwrap() as mapped,
          SqliteStore.open(path, readonly=True).unwrap() as plain):
        for store in (mapped, plain):
            assert await ok(store.search(match("docker OR dns"))) == await ok(
                plain.search(match("docker OR dns")))
            assert await ok(store.search_titles(match("bridge"))) == await ok(
                plain.search_titles(match("bridge")))
        assert await _mapped_bytes(mapped) > 0
        assert await _mapped_bytes(plain) == 0


async def test_a_writable_store_never_maps(tmp_path: Path) -> None:
    """``mapped`` is for readers only: a writable store ignores it."""
    with SqliteStore.open(tmp_path / "h.db", mapped=True).unwrap() as store:
        assert not store.mapped
        assert await _mapped_bytes(store) == 0


async def test_a_reopened_reader_stays_mapped(tmp_path: Path, make_conversation: Make) -> None:
    """A writer moves the file under an immutable mapped reader: the reader opens it again,
    mapped, and sees the new session."""
    path = tmp_path / "h.db"
    await _stored(path, make_conversation)
    with SqliteStore.open(path, readonly=True, mapped=True).unwrap() as reader:
        assert [h.session_id for h in await ok(reader.search(match("walrus")))] == []
        raw = sqlite3.connect(path, isolation_level=None)
        try:
            raw.execute("PRAGMA journal_mode = WAL")
            raw.execute("INSERT INTO sessions (id) VALUES ('s3')")
            raw.execute("INSERT INTO messages (id, session_id, position, role, content) "
                        "VALUES (99, 's3', 0, 'user', 'walrus')")
            raw.execute("INSERT INTO messages_fts (rowid, body) VALUES (99, 'walrus')")
            assert [h.session_id for h in await ok(reader.search(match("walrus")))] == ["s3"]
        finally:
            raw.close()
        assert await _mapped_bytes(reader) > 0


async def test_the_search_command_opens_its_store_mapped(tmp_path: Path) -> None:
    """The wiring maps a read-only SQLite store opened for one command, and only then."""
    path = tmp_path / "h.db"
    SqliteStore.open(path).unwrap().close()
    settings = wiring.RecallSettings(db=str(path))
    for once in (True, False):
        store = wiring.open_for_recall(settings, once=once).unwrap()
        try:
            assert isinstance(store, SqliteStore)
            assert store.mapped is once
            assert (await _mapped_bytes(store) > 0) is once
        finally:
            store.close()
