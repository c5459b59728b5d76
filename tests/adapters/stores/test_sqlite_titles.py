"""The SQLite store's title index in files made before it existed, or written by a harkback
that does not know it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.fulltext import read_varint
from harkback.adapters.stores.sqlite import SqliteStore
from tests.adapters.stores.old_files import file_state, old_file, schema_names
from tests.adapters.stores.store_contract import Make, match, ok


def _old(path: Path, make_conversation: Make) -> None:
    old_file(path, [
        make_conversation("cors", ("user", "the browser blocks it"), title="CORS fix for the API",
                          started_at=1.0),
        make_conversation("other", ("user", "cors again"), title="lunch", started_at=2.0)])


async def test_readonly_old_file_finds_no_titles_and_is_not_written(
        tmp_path: Path, make_conversation: Make) -> None:
    """A read-only store on a file without the title index finds no titles (no failure),
    still searches messages, and writes nothing (no byte, no modification time, no side
    file)."""
    path = tmp_path / "h.db"
    _old(path, make_conversation)
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert await ok(reader.search_titles(match("CORS API"))) == ()
        assert [h.session_id for h in await ok(reader.search(match("cors")))] == ["other"]
    assert file_state(path) == before
    assert "session_titles" not in schema_names(path)


async def test_writable_open_indexes_the_titles_of_an_old_file(
        tmp_path: Path, make_conversation: Make) -> None:
    """Opening an old file writable adds the title index and fills it, keeping the schema
    version; a later read-only open finds the titles without writing."""
    path = tmp_path / "h.db"
    _old(path, make_conversation)
    SqliteStore.open(path).unwrap().close()
    assert set(schema.TITLE_OBJECTS) <= schema_names(path)
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    raw.close()
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        hits = await ok(reader.search_titles(match("CORS API")))
        assert [(h.session_id, h.title) for h in hits] == [("cors", "CORS fix for the API")]
    assert file_state(path) == before


async def test_a_title_changed_by_another_writer_is_indexed_again(
        tmp_path: Path, make_conversation: Make) -> None:
    """A writer that knows nothing of titles (an older harkback, by hand) renames a session
    and adds one: the stale title is not found, and the next writable open indexes both."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "x"), title="walrus plans")]))
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        raw.execute("UPDATE sessions SET title = 'narwhal plans' WHERE id = 's1'")
        raw.execute("INSERT INTO sessions (id, title) VALUES ('s2', 'narwhal pod')")
    finally:
        raw.close()
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert await ok(reader.search_titles(match("walrus"))) == ()
    with SqliteStore.open(path).unwrap() as writer:
        assert await ok(writer.search_titles(match("walrus"))) == ()
        found = await ok(writer.search_titles(match("narwhal")))
        assert sorted(h.session_id for h in found) == ["s1", "s2"]



def _title_segments(path: Path) -> int:
    # FTS5's structure record: a 4-byte cookie, then varints: levels, segments, ...
    raw = sqlite3.connect(path)
    try:
        block = raw.execute("SELECT block FROM session_titles_fts_data WHERE id = 10").fetchone()[0]
    finally:
        raw.close()
    _, at = read_varint(block, 4)
    return read_varint(block, at)[0]


async def test_many_small_writes_leave_the_title_index_in_few_segments(
        tmp_path: Path, make_conversation: Make) -> None:
    """Forty one-session writes (a commit and a new FTS5 segment each) leave the title index
    in a few segments, and every title is still found, once."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        for n in range(40):
            await ok(store.ingest([make_conversation(f"s{n}", ("user", "x"),
                                                     title=f"walrus plan{n}")]))
    assert _title_segments(path) <= 3
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        hits = await ok(reader.search_titles(match("walrus", limit=100)))
        assert sorted(h.session_id for h in hits) == sorted(f"s{n}" for n in range(40))
        for n in (0, 17, 39):
            one = await ok(reader.search_titles(match(f"plan{n}")))
            assert [h.session_id for h in one] == [f"s{n}"]
