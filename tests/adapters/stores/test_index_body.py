"""The message index is given ASCII text as it is (``writes.index_body``): FTS5 must see the
same tokens in it as harkback's own token stream, and rows indexed either way must
delete cleanly."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.writes import index_body
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.text.tokens import index_text, index_tokens
from tests.adapters.stores.old_files import old_file
from tests.adapters.stores.store_contract import match, ok
from tests.conftest import conversation


@contextmanager
def _index() -> Iterator[sqlite3.Connection]:
    """An in-memory database with the store's own message index and a view of its terms."""
    connection = sqlite3.connect(":memory:", isolation_level=None)
    try:
        connection.execute(next(s for s in schema.SCHEMA if "messages_fts" in s))
        connection.execute("CREATE VIRTUAL TABLE temp.terms "
                           "USING fts5vocab(main, messages_fts, instance)")
        yield connection
    finally:
        connection.close()


def _tokens(connection: sqlite3.Connection, body: str) -> list[str]:
    connection.execute("INSERT INTO messages_fts (rowid, body) VALUES (1, ?)", (body,))
    found = [row[0] for row in connection.execute(
        "SELECT term FROM terms WHERE doc = 1 ORDER BY offset")]
    connection.execute("INSERT INTO messages_fts (messages_fts, rowid, body) "
                       "VALUES ('delete', 1, ?)", (body,))
    return found


ASCII = st.text(alphabet=st.characters(max_codepoint=127), max_size=200)
WORDY = st.lists(st.sampled_from(["CORS", "error", "x_y", "v2.1", "--flag", "a/b", "\t",
                                  "\x00", "DROP;", "ÀB", "日本", "naïve", "'s", "\u2019"]),
                 max_size=30).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(ASCII, WORDY))
def test_fts5_sees_harkback_s_tokens_in_what_it_is_given(text: str) -> None:
    """For any text, FTS5's terms of ``index_body`` are ``index_tokens`` in order, and the
    same as of ``index_text`` (what older harkback versions gave it)."""
    with _index() as connection:
        assert _tokens(connection, index_body(text)) == list(index_tokens(text))
        assert _tokens(connection, index_text(text)) == list(index_tokens(text))


async def test_rows_indexed_by_an_older_harkback_are_replaced_cleanly(tmp_path: Path) -> None:
    """A version-1 file indexed from ``index_text``: re-ingesting its session with other
    words unindexes the old row (FTS5's integrity check passes, the old words are gone)."""
    path = tmp_path / "h.db"
    old_file(path, [conversation("s1", ("user", "The Docker-bridge DROPPED packets, again!"),
                                 ("user", "kept as it was"))])
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([conversation("s1", ("user", "nginx now"),
                                            ("user", "kept as it was"))]))
        assert await ok(store.search(match("dropped"))) == ()
        assert [h.position for h in await ok(store.search(match("nginx")))] == [0]
        assert [h.position for h in await ok(store.search(match("kept")))] == [1]
    with sqlite3.connect(path) as raw:
        raw.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 0)")
    raw.close()
