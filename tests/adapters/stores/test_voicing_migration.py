"""Kana keep their voicing in the index (schema 3 of SQLite files): a file indexed before,
with バケット (bucket) and パケット (packet) both as ハケット, is re-indexed by a writable
open, and searched as it is, unwritten, by a read-only one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores import sqlite_voicing
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.migrations import DATED_ABOUT, MIGRATIONS
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.ports import Deps, SessionStore
from harkback.stages.records import Conversation
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from harkback.stages.text.tokens import index_tokens
from harkback.stages.text.voicing import devoiced
from tests.adapters.stores.old_files import file_state, old_file, version_2_file
from tests.adapters.stores.store_contract import match, ok
from tests.conftest import conversation

BUCKET = conversation(
    "bucket", ("user", "S3 の バケット のポリシーで 403 になる"),
    ("assistant", "ポリシーを直しました"), title="バケットの権限")
# Said more often, the word that was also ハケット: searched as they were, the packet
# session came first for "S3 バケット".
PACKET = conversation(
    "packet", ("user", "S3 への転送で パケット ロス、パケット が落ちる"),
    ("assistant", "パケット キャプチャを見ました"), title="パケットロス")
BRUSH = conversation("brush", ("user", "ハケ で壁を塗った"))
HALF_WIDTH = conversation("half", ("user", "ﾋﾞﾙﾄﾞ が遅い"))
CORPUS = (BUCKET, PACKET, BRUSH, HALF_WIDTH)


def _version(path: Path) -> int:
    with sqlite3.connect(path) as raw:
        version: int = raw.execute("PRAGMA user_version").fetchone()[0]
    raw.close()
    return version


async def _found(store: SqliteStore, word: str) -> set[str]:
    return {hit.session_id for hit in await ok(store.search(match(f"\"{word}\"")))}


async def _titled(store: SqliteStore, word: str) -> set[str]:
    return {hit.session_id for hit in await ok(store.search_titles(match(f"\"{word}\"")))}


async def ranked(store: SessionStore, query: str) -> list[str]:
    """The sessions the lexical ranker gives for ``query``, best first."""
    request = SearchRequest(query=query, limit=10)
    outcome = await LexicalMatch()(request).bind(LineageResolve())(
        Deps(store=store)).awaitable()
    return [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates]


def _postings(path: Path, corpus: tuple[Conversation, ...]) -> dict[str, set[tuple[str, int]]]:
    """For every token the corpus has or had (devoiced), the messages the index finds."""
    words = {w for c in corpus for m in c.messages
             for t in index_tokens(m.text_for_search()) for w in (t, devoiced(t))}
    with sqlite3.connect(path) as raw:
        found = {word: {tuple(row) for row in raw.execute(
            "SELECT m.session_id, m.position FROM messages_fts JOIN messages AS m "
            "ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?", (f'"{word}"',))}
            for word in words}
    raw.close()
    return found


async def test_a_version_1_file_is_indexed_again_as_a_new_one_is(tmp_path: Path) -> None:
    """The migration gives the messages holding voiced kana today's tokens and takes the
    old ones out: every word finds exactly what it finds in a file made new."""
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    old_file(old, CORPUS)
    with SqliteStore.open(old).unwrap() as store:
        assert sqlite_voicing.ABOUT in store.schema.applied
        assert await _found(store, "バケット") == {"bucket"}
        assert await _found(store, "パケット") == {"packet"}
        assert await _found(store, "ハケ") == {"brush"}
        assert await _found(store, "ビルド") == {"half"}
        assert (await ranked(store, "S3 バケット"))[0] == "bucket"
    with SqliteStore.open(fresh).unwrap() as store:
        await ok(store.ingest(CORPUS))
    assert _postings(old, CORPUS) == _postings(fresh, CORPUS)
    assert _version(old) == schema.SCHEMA_VERSION
    with sqlite3.connect(old) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        raw.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 0)")
    raw.close()


async def test_a_version_2_file_has_its_titles_indexed_again(tmp_path: Path) -> None:
    """Titles indexed with devoiced kana (schema 2 had the title index) are indexed again:
    バケット finds the bucket session's title only, パケット the packet session's."""
    path = tmp_path / "h.db"
    version_2_file(path, CORPUS)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert await _titled(reader, "バケット") == {"bucket", "packet"}  # as the index holds it
    with SqliteStore.open(path).unwrap() as store:
        assert store.schema == Migrated(2, schema.SCHEMA_VERSION,
                                        (sqlite_voicing.ABOUT, DATED_ABOUT,
                                         *(m.about for m in MIGRATIONS[3:])),
                                        latest=schema.SCHEMA_VERSION)
        assert await _titled(store, "バケット") == {"bucket"}
        assert await _titled(store, "パケット") == {"packet"}
        assert await _titled(store, "ハケ") == set()
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO session_titles_fts(session_titles_fts, rank) "
                    "VALUES('integrity-check', 0)")
    raw.close()


async def test_a_read_only_open_searches_an_older_index_as_it_is(tmp_path: Path) -> None:
    """Read-only, a version-2 file is not written (not a byte, no side file) and still
    answers: each word is looked up devoiced as its index holds it, so バケット finds the
    packet session's messages too, and the ranker, reading the messages, puts the bucket
    session first."""
    path = tmp_path / "h.db"
    version_2_file(path, CORPUS)
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert reader.schema == Migrated(2, 2, latest=schema.SCHEMA_VERSION)
        assert await _found(reader, "バケット") == {"bucket", "packet"}
        assert await _found(reader, "ビルド") == {"half"}
        stats = await ok(reader.term_stats(["バケ", "パケ", "ハケ"], ["バ", "パ"]))
        assert dict(stats.counts) == {"バケ": 4, "パケ": 4, "ハケ": 4}  # 1 + 2 + brush
        # A prefix too, counted as the prefix search (devoiced alike) matches.
        prefixed = len(await ok(reader.search(match("パ*", max_scored=None))))
        assert dict(stats.prefix_counts) == {"バ": prefixed, "パ": prefixed} == {"バ": 4, "パ": 4}
        assert (await ranked(reader, "S3 バケット"))[0] == "bucket"
    assert file_state(path) == before
    assert _version(path) == 2


async def test_a_reader_opened_before_the_migration_searches_the_new_index(
        tmp_path: Path) -> None:
    """A read-only store opened on a version-2 file, which a writer then migrates, looks
    its words up as the index now holds them."""
    path = tmp_path / "h.db"
    version_2_file(path, CORPUS)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert await _found(reader, "バケット") == {"bucket", "packet"}
        SqliteStore.open(path).unwrap().close()
        assert await _found(reader, "バケット") == {"bucket"}
        assert await _found(reader, "パケット") == {"packet"}
