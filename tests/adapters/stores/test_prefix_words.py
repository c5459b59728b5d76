"""The words under a prefix, read from FTS5's segments (sqlite_vocabulary), against FTS5's
own vocabulary table: an index of several segments (some merged, some with deleted rows),
words on many leaves each, read from a real file."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores import sqlite_vocabulary
from harkback.adapters.stores.sql import schema
from harkback.stages.query import AnyOf, Phrase, Term

LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


def _words(seed: int, count: int) -> list[str]:
    pick = random.Random(seed)
    heads = ["dock", "docker", "err", "conn", "a", "z9"]
    return [pick.choice(heads) + "".join(pick.choices(LETTERS, k=pick.randint(0, 6)))
            for _ in range(count)]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """A file with the store's full-text table: 12 transactions of 400 rows (segments
    merged as FTS5 merges them, plus two merge steps), then some rows deleted; opened
    read-only as a search opens it."""
    path = Path(tmp_path_factory.mktemp("words")) / "words.db"
    writer = sqlite3.connect(path, isolation_level=None)
    for statement in schema.SCHEMA:
        writer.execute(statement)
    pick = random.Random(7)
    vocabulary = [*_words(1, 3000), "café", "naïve", "日本語"]
    bodies = {}
    for batch in range(12):
        writer.execute("BEGIN")
        for row in range(400):
            rowid = batch * 400 + row + 1
            # Two words in every row: their doclists run over several leaves, so the
            # words after them start on leaves that begin with a doclist's tail.
            bodies[rowid] = " ".join(["dockerhub", *pick.choices(vocabulary, k=8), "errand"])
            writer.execute("INSERT INTO messages_fts (rowid, body) VALUES (?, ?)",
                           (rowid, bodies[rowid]))
        writer.execute("COMMIT")
        if batch in (4, 9):
            writer.execute("INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', 50)")
    for rowid in range(1, 4800, 7):
        writer.execute("INSERT INTO messages_fts (messages_fts, rowid, body) "
                       "VALUES ('delete', ?, ?)", (rowid, bodies[rowid]))
    writer.close()
    reader = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    reader.execute("CREATE VIRTUAL TABLE temp.vocabulary USING fts5vocab(main, messages_fts, row)")
    yield reader
    reader.close()


def _vocabulary(connection: sqlite3.Connection, prefix: str) -> tuple[str, ...]:
    high = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return tuple(row[0] for row in connection.execute(
        "SELECT term FROM temp.vocabulary WHERE term >= ? AND term < ? ORDER BY term",
        (prefix, high)))


def test_the_index_has_many_segments_and_leaves(index: sqlite3.Connection) -> None:
    """What the comparisons below rely on: several segments, words on many leaves, and
    leaves whose words follow the tail of a doclist begun on an earlier leaf."""
    segments = sqlite_vocabulary._segments(index)
    assert len(segments) >= 3
    assert max(last - first for _, first, last in segments) >= 20
    leaves = [block for row_id, block in index.execute(
        "SELECT id, block FROM messages_fts_data WHERE id > 10") if not (row_id >> 36) & 1]
    assert any(block[:2] != b"\0\0" and int.from_bytes(block[2:4], "big") < len(block)
               for block in leaves)


@settings(max_examples=200, deadline=None)
@given(st.one_of(
    st.sampled_from(["dock", "docker", "dockera", "err", "e", "conn", "a", "a0", "z9", "zz",
                     "0", "q", "caf", "na"]),
    st.text(LETTERS, min_size=1, max_size=4)))
def test_words_under_a_prefix_are_fts5s_own(index: sqlite3.Connection, prefix: str) -> None:
    """Every prefix: exactly the words FTS5's vocabulary lists (deleted rows' words may
    be listed by both, as neither reads the deletions)."""
    listed = sqlite_vocabulary.words_under(index, prefix, max_words=10_000, max_leaves=10_000)
    assert listed is not None
    found = set(_vocabulary(index, prefix))
    assert set(listed) >= found
    assert all(w.startswith(prefix) for w in listed)
    # A word listed beyond FTS5's vocabulary only had deleted rows: it matches none.
    for word in set(listed) - found:
        assert index.execute("SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH ?",
                             (f'"{word}"',)).fetchone()[0] == 0


def test_the_same_rows_match_the_prefix_and_its_words(index: sqlite3.Connection) -> None:
    """The OR of the words finds the rows of the prefix itself, newest first."""
    from harkback.stages.query import to_fts5
    statement = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC"
    for prefix in ("dock", "err", "a", "z9"):
        words = sqlite_vocabulary.spelled_out(index, Term(prefix, prefix=True))
        assert isinstance(words, AnyOf)
        assert (index.execute(statement, (to_fts5(words),)).fetchall()
                == index.execute(statement, (f'"{prefix}"*',)).fetchall())


def test_what_is_not_listed_stays_the_prefix(index: sqlite3.Connection) -> None:
    """Text FTS5 may fold (capitals, accents, other scripts), too many words or leaves,
    no word at all, or not a prefix term: the unit comes back as it is."""
    assert sqlite_vocabulary.words_under(index, "Dock") is None
    assert sqlite_vocabulary.words_under(index, "caf\u00e9") is None
    assert sqlite_vocabulary.words_under(index, "a", max_words=10) is None
    assert sqlite_vocabulary.words_under(index, "a", max_leaves=1) is None
    for unit in (Term("qqqq", prefix=True), Term("dock"), Phrase(("dock", "er"), prefix=True),
                 Term("日本", prefix=True)):
        assert sqlite_vocabulary.spelled_out(index, unit) == unit


def test_words_outside_plain_ascii_make_the_listing_give_up(index: sqlite3.Connection) -> None:
    """"caf" covers "café" (kept by FTS5 as "cafe" after folding accents) and "na"
    covers "naive": both plain; a listing is refused only for words that are not."""
    assert sqlite_vocabulary.words_under(index, "caf") == _vocabulary(index, "caf")
    assert sqlite_vocabulary.words_under(index, "na") == _vocabulary(index, "na")


def test_a_record_of_another_format_is_not_read() -> None:
    """A structure record of a later FTS5, a leaf it names that is not there: nothing is
    listed (and the read transaction is over); leaves that do not parse raise inside."""
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(body, content='')")
    connection.execute("INSERT INTO messages_fts (body) VALUES ('docker')")
    assert sqlite_vocabulary.words_under(connection, "dock") == ("docker",)
    block = connection.execute("SELECT block FROM messages_fts_data WHERE id = 10").fetchone()[0]
    connection.execute("UPDATE messages_fts_data SET block = ? WHERE id = 10",
                       (block[:4] + b"\xff\x00\x00\x01" + block[4:],))
    assert sqlite_vocabulary.words_under(connection, "dock") is None
    connection.execute("UPDATE messages_fts_data SET block = ? WHERE id = 10", (block + b"\x01",))
    assert sqlite_vocabulary.words_under(connection, "dock") is None
    connection.execute("UPDATE messages_fts_data SET block = ? WHERE id = 10", (block,))
    assert sqlite_vocabulary.words_under(connection, "dock") == ("docker",)
    connection.execute("DELETE FROM messages_fts_data WHERE id > 10")  # a leaf gone
    assert sqlite_vocabulary.words_under(connection, "dock") is None
    assert not connection.in_transaction
    with pytest.raises(sqlite_vocabulary._Unexpected):
        sqlite_vocabulary.leaf_words(bytes([0, 0, 0, 9, 0x05]) + b"0do" + b"\x04" + b"\x04")
