"""SQLite files indexed before kana kept their voicing: re-indexed by the migration to
schema version 3, and searched as they are by a read-only open.

Until version 3 the index held バケット (bucket) and パケット (packet) both as ハケット
(:mod:`~harkback.stages.text.voicing`). The migration (:func:`reindex`) gives new index
text to the messages and titles whose text holds a voiced kana or a voicing mark, and to
no other row: the rest index as before. A read-only open never writes, so it searches an
older file's index as it is, with each query word devoiced as the index holds it
(:func:`readable`): a Japanese search there finds what it found before (バケット and
パケット alike), and the ranker, which re-reads each message it scores, still weighs a
message saying バケット above one saying パケット.

>>> from harkback.stages.query import parse_query, to_fts5
>>> to_fts5(folded(parse_query('"S3 バケット" NOT ビルド').expression))
'("s3 ハケ ケッ ット" NOT "ヒル ルト")'
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

import attrs

from harkback.stages.ports import MatchQuery, TermStats
from harkback.stages.query import Node, Phrase, Term, Without
from harkback.stages.records import Session
from harkback.stages.text.tokens import index_text
from harkback.stages.text.voicing import devoiced, may_hold_voicing

VOICED_VERSION = 3
"""The first schema version whose index keeps the kana's voicing marks."""

ABOUT = ("the index keeps the voiced sound marks of kana (バケット is no longer パケット "
         "or ハケット): the messages and titles holding them are indexed again")
"""What the migration step says it did."""


_VOICED_MESSAGES = (
    "SELECT id, session_id, position, role, content, tool_name, tool_call_id, tool_calls, "
    "timestamp FROM messages WHERE harkback_voiced(content) OR harkback_voiced(tool_name) "
    "OR harkback_voiced(tool_calls)")
_VOICED_TITLES = ("SELECT id, title, source FROM sessions "
                  "WHERE harkback_voiced(title) OR harkback_voiced(source)")
_HAS_TITLES = "SELECT COUNT(*) FROM sqlite_master WHERE name = 'session_titles'"


def _voiced(text: object) -> bool:
    return isinstance(text, str) and may_hold_voicing(text)


def reindex(connection: sqlite3.Connection) -> None:
    """Give new index text to every message and title whose tokens changed (inside the
    migration's transaction).

    The index is contentless: a row is deleted by giving FTS5 the very text it was
    indexed from, which for these rows is today's text devoiced (a test checks it).
    """
    # Imported here: the migrations, which name this step, are read by the modules below.
    from harkback.adapters.stores import sqlite_titles
    from harkback.adapters.stores.damaged_rows import read_row
    from harkback.adapters.stores.sql.rows import message_from_row
    from harkback.adapters.stores.sql.writes import DELETE_INDEXED, INSERT_INDEXED

    # A regular expression in Python: GLOB with a class of the 107 characters read 100,000
    # messages in 24 s, this in 0.2 s.
    connection.create_function("harkback_voiced", 1, _voiced, deterministic=True)
    changed: list[tuple[int, str, str]] = []
    for row in connection.execute(_VOICED_MESSAGES).fetchall():
        # A match holds a character beyond ASCII: the index was given its tokens.
        # A damaged row (a role outside its list): the store's line, the migration undone.
        new = index_text(read_row(message_from_row, row[1:]).text_for_search())
        if (old := devoiced(new)) != new:
            changed.append((row[0], old, new))
    connection.executemany(DELETE_INDEXED, [(row_id, old) for row_id, old, _ in changed])
    connection.executemany(INSERT_INDEXED, [(row_id, new) for row_id, _, new in changed])
    if connection.execute(_HAS_TITLES).fetchone()[0]:
        # A file without the title index gets it, with today's tokens, after the steps.
        sessions = [Session(id=row[0], title=row[1], source=row[2])
                    for row in connection.execute(_VOICED_TITLES).fetchall()]
        sqlite_titles.replace(connection, [
            s for s in sessions if devoiced(text := index_text(s.text_for_search())) != text])


def folds_voicing(connection: sqlite3.Connection) -> bool:
    """Whether the file's index holds kana devoiced (a file before :data:`VOICED_VERSION`,
    read-only: a writable open has migrated it). One pragma read, per search, so a file
    migrated while a reader has it open is searched as it now is (and one migrated past
    this harkback is refused: :func:`~harkback.adapters.stores.sqlite_transaction.read_version`)."""
    # Imported here: the schema's version comes from the migrations, which name this module.
    from harkback.adapters.stores.sqlite_transaction import read_version
    return read_version(connection) < VOICED_VERSION


def folded(node: Node) -> Node:
    """``node`` with each word devoiced, as an index before :data:`VOICED_VERSION` holds it."""
    if isinstance(node, Term):
        return attrs.evolve(node, text=devoiced(node.text))
    if isinstance(node, Phrase):
        return attrs.evolve(node, terms=tuple(devoiced(t) for t in node.terms))
    if isinstance(node, Without):
        return Without(folded(node.include), folded(node.exclude))
    return type(node)(tuple(folded(item) for item in node.items))


def _plain(node: Node | None) -> bool:
    # Devoicing leaves ASCII as it is: a question in English needs no devoicing.
    if node is None:
        return True
    if isinstance(node, Term):
        return node.text.isascii()
    if isinstance(node, Phrase):
        return all(t.isascii() for t in node.terms)
    if isinstance(node, Without):
        return _plain(node.include) and _plain(node.exclude)
    return all(_plain(item) for item in node.items)


def readable(connection: sqlite3.Connection, query: MatchQuery) -> MatchQuery:
    """``query`` as the file's index can answer it (:func:`folded` for an older file)."""
    if not folds_voicing(connection) or (_plain(query.expression) and _plain(query.excluded)):
        return query
    counts = {devoiced(term): count for term, count in query.known_counts}
    return attrs.evolve(query, expression=folded(query.expression),
                        excluded=None if query.excluded is None else folded(query.excluded),
                        known_counts=tuple(counts.items()))


def readable_stats(connection: sqlite3.Connection, terms: Sequence[str],
                   counted: Callable[[sqlite3.Connection, Sequence[str], Sequence[str]],
                                     TermStats],
                   prefixes: Sequence[str] = ()) -> TermStats:
    """``counted`` (the index's statistics) of ``terms`` and ``prefixes``; of an older
    file's index, each counted as the index holds it (devoiced), reported under its own."""
    if not folds_voicing(connection) or all(t.isascii() for t in (*terms, *prefixes)):
        return counted(connection, terms, prefixes)
    stats = counted(connection, [devoiced(t) for t in terms], [devoiced(p) for p in prefixes])

    def named(asked: Sequence[str], pairs: tuple[tuple[str, int], ...]
              ) -> tuple[tuple[str, int], ...]:
        found = dict(pairs)
        return tuple((t, found[devoiced(t)]) for t in dict.fromkeys(asked)
                     if devoiced(t) in found)
    return attrs.evolve(stats, counts=named(terms, stats.counts),
                        prefix_counts=named(prefixes, stats.prefix_counts))
