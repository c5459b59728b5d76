"""The index's own words under a prefix, read from FTS5's segments.

FTS5 answers a prefix (``"dock"*``) by first merging the whole posting lists, positions
and all, of every word it covers, however few rows are asked for: ~10 ms for "dock*" at
1M messages, and 970 pages a new process must fault in. The same rows match an OR of
those words, which FTS5 reads newest first only as far as asked (~2 ms with the listing
below). FTS5 keeps no list of its words beside its segments (its ``fts5vocab`` table
counts every posting of each word it lists: 5 ms for "dock*"), so they are read from
there, in the formats ``fts5_index.c`` documents: the structure record names the
segments; each segment's b-tree (``%_idx``: segment, least key of a leaf, leaf number)
says on which leaves the prefix's words lie; each leaf's footer says where its words
start. Anything unexpected (another format, a limit passed) answers ``None``, and the
caller searches the prefix as it is.

>>> from harkback.stages.query import to_fts5
>>> fts = _fts_file(["docker build", "dockerd up", "dock", "docs"])
>>> words_under(fts, "dock")
('dock', 'docker', 'dockerd')
>>> to_fts5(spelled_out(fts, Term("dock", prefix=True)))
'("dock" OR "docker" OR "dockerd")'
>>> spelled_out(fts, Term("zz", prefix=True))
Term(text='zz', prefix=True)
"""

from __future__ import annotations

import json
import re
import sqlite3

from harkback.adapters.stores.sql.fulltext import (
    INDEX_STRUCTURE,
    LATER_STRUCTURE,
    read_varint,
)
from harkback.adapters.stores.sqlite_transaction import read_snapshot
from harkback.stages.query import AnyOf, Node, Phrase, Term, Unit, Without

MAX_WORDS = 2000
"""At most this many words replace a prefix (an OR of 2,543 words, "z*" at 1M, still took
0.6x the prefix's time)."""

MAX_LEAVES = 256
"""At most this many leaves are read to list them (each ~4 KiB)."""

_FIRST_LEAF = ("SELECT pgno, term FROM messages_fts_idx WHERE segid = ? AND term <= ? "
               "ORDER BY term DESC LIMIT 1")
_NEXT_LEAVES = ("SELECT pgno FROM messages_fts_idx WHERE segid = ? AND term > ? AND term < ? "
                "ORDER BY term")
_LEAVES = ("SELECT block FROM messages_fts_data WHERE id IN (SELECT value FROM json_each(?)) "
           "ORDER BY id")

_KEPT_AS_IS = re.compile(r"[a-z0-9]+")
"""Prefix texts that FTS5's tokenizer (``unicode61``) keeps byte for byte."""

_MAIN_INDEX = b"0"
"""The byte before every word of FTS5's main index (prefix indexes use others)."""

_SEGMENT_SHIFT = 37
"""A leaf's row id in ``%_data`` is ``segment << 37 | leaf number``."""

class _Unexpected(Exception):
    """A record that does not read as this module expects."""


def spelled_out(connection: sqlite3.Connection, unit: Unit) -> Node:
    """``unit`` as an OR of the index's words it covers when it is a prefix term and they
    can be listed (see the module); otherwise ``unit`` itself. Both match the same rows."""
    if not (isinstance(unit, Term) and unit.prefix):
        return unit
    words = words_under(connection, unit.text)
    if not words:
        return unit
    return AnyOf(tuple(Term(word) for word in words))


def spelled_tree(connection: sqlite3.Connection, node: Node,
                 memo: dict[Unit, Node] | None = None) -> Node:
    """``node`` with each prefix term in it :func:`spelled_out` (once per term in
    ``memo``): it matches the same rows, for statements that do not score them.

    >>> from harkback.stages.query import parse_query, to_fts5
    >>> fts = _fts_file(["docker build", "dockerd up", "nginx"])
    >>> to_fts5(spelled_tree(fts, parse_query("dock* AND NOT ngi*").expression))
    '(("docker" OR "dockerd") NOT ("nginx"))'
    """
    memo = {} if memo is None else memo
    if isinstance(node, Term | Phrase):
        if node not in memo:
            memo[node] = spelled_out(connection, node)
        return memo[node]
    if isinstance(node, Without):
        return Without(spelled_tree(connection, node.include, memo),
                       spelled_tree(connection, node.exclude, memo))
    return type(node)(tuple(spelled_tree(connection, item, memo) for item in node.items))


def words_under(connection: sqlite3.Connection, prefix: str, *, max_words: int = MAX_WORDS,
                max_leaves: int = MAX_LEAVES) -> tuple[str, ...] | None:
    """Every word of ``messages_fts`` that starts with ``prefix``, sorted; ``None`` when
    they cannot be listed here (``prefix`` not plain lowercase ASCII letters and digits,
    more than ``max_words`` words or ``max_leaves`` leaves, or records of another format).

    Words whose every posting was deleted may be listed too; they match no row.
    """
    if not _KEPT_AS_IS.fullmatch(prefix):
        return None
    low = _MAIN_INDEX + prefix.encode()
    high = low[:-1] + bytes([low[-1] + 1])
    try:
        # The structure record, the b-tree and the leaves must be read from one version of
        # the index: a writer's merge in between would move words to a segment not listed.
        with read_snapshot(connection):
            leaves = []
            for segment, first, last in _segments(connection):
                found = connection.execute(_FIRST_LEAF, (segment, low)).fetchone()
                start, key = (found[0] >> 1, found[1]) if found else (first, b"")
                pages = [start, *(row[0] >> 1 for row in connection.execute(
                    _NEXT_LEAVES, (segment, key, high)))]
                leaves += [(segment << _SEGMENT_SHIFT) + page
                           for page in dict.fromkeys(pages) if first <= page <= last]
                if len(leaves) > max_leaves:
                    return None
            blocks = [row[0] for row in connection.execute(_LEAVES, (json.dumps(leaves),))]
        if len(blocks) != len(leaves):
            raise _Unexpected  # a leaf the structure names is not there
        words: set[str] = set()
        for block in blocks:
            words.update(word[len(_MAIN_INDEX):].decode()
                         for word in leaf_words(block) if word.startswith(low))
            if len(words) > max_words:
                return None
    except (_Unexpected, UnicodeDecodeError, IndexError, TypeError):
        return None
    if not all(word.isalnum() for word in words):
        return None  # a word FTS5's quoting might not give back as itself
    return tuple(sorted(words))


def _segments(connection: sqlite3.Connection) -> list[tuple[int, int, int]]:
    # The structure record: a 4-byte cookie; levels, segments, write counter; then per
    # level its merge state and segment count, per segment its id, first and last leaf.
    # A later FTS5's format (LATER_STRUCTURE) is not read here.
    row = connection.execute(INDEX_STRUCTURE).fetchone()
    if row is None or not isinstance(row[0], bytes) or row[0][4:8] == LATER_STRUCTURE:
        raise _Unexpected
    data = row[0]
    levels, at = read_varint(data, 4)
    count, at = read_varint(data, at)
    _, at = read_varint(data, at)
    segments = []
    for _ in range(levels):
        _, at = read_varint(data, at)
        in_level, at = read_varint(data, at)
        for _ in range(in_level):
            values = []
            for _ in range(3):
                value, at = read_varint(data, at)
                values.append(value)
            segments.append((values[0], values[1], values[2]))
    if len(segments) != count or at != len(data):
        raise _Unexpected
    return segments


def leaf_words(leaf: bytes) -> list[bytes]:
    """The words stored on one leaf, as FTS5 keeps them (the index's byte first).

    A leaf starts with two 16-bit offsets, the second where its footer starts; the
    footer holds the offset of each word on the leaf, each from the one before. The
    first word is stored whole (its length, then its bytes); each next one as the bytes
    it shares with the one before, then its length and bytes past them.

    >>> words = b"\\x040dog" + b"\\x01\\x00" + b"\\x03\\x02ve" + b"\\x01\\x00"  # and doclists
    >>> leaf_words(bytes([0, 0, 0, 4 + len(words)]) + words + b"\\x04\\x07")
    [b'0dog', b'0dove']
    """
    if len(leaf) < 4:
        raise _Unexpected
    footer = int.from_bytes(leaf[2:4], "big")
    if footer > len(leaf):
        raise _Unexpected
    words: list[bytes] = []
    at, offset = footer, 0
    while at < len(leaf):
        step, at = read_varint(leaf, at)
        offset += step
        if offset >= footer:
            raise _Unexpected
        shared, start = (0, offset) if not words else read_varint(leaf, offset)
        size, start = read_varint(leaf, start)
        if shared > (len(words[-1]) if words else 0) or start + size > footer:
            raise _Unexpected
        words.append((words[-1][:shared] if words else b"") + leaf[start:start + size])
    return words


def _fts_file(texts: list[str]) -> sqlite3.Connection:
    # For the examples: an index like the store's, one segment per text.
    connection = sqlite3.connect(":memory:", isolation_level=None)
    connection.execute("CREATE VIRTUAL TABLE messages_fts USING fts5(body, content='')")
    for text in texts:
        connection.execute("INSERT INTO messages_fts (body) VALUES (?)", (text,))
    return connection


if __name__ == "__main__":  # pragma: no cover
    import doctest
    doctest.testmod()
