"""``harkback optimize`` on a SQLite store: each full-text index (the messages' and the
titles') merged into one segment, when it holds more than one; an index already merged is
left alone, so a second run writes nothing and says so.

Each index's segments are counted from FTS5's structure record: a 4-byte cookie (and, in
later FTS5 versions, a 4-byte mark), then varints: levels, segments, ...

>>> segment_count(bytes([0, 0, 0, 7, 2, 5, 9]))
5
>>> segment_count(bytes([0, 0, 0, 7]) + b"\\xff\\x00\\x00\\x01" + bytes([1, 1, 3]))
1
"""

from __future__ import annotations

import sqlite3

from harkback.adapters.stores.sql.fulltext import LATER_STRUCTURE, read_varint
from harkback.adapters.stores.sqlite_transaction import immediate

INDEXES = {"messages_fts": "the messages'", "session_titles_fts": "the titles'"}
"""The full-text indexes a store keeps, with how a line names each."""

_HAS = "SELECT COUNT(*) FROM sqlite_master WHERE name = ?"


def segment_count(structure: bytes) -> int:
    """How many segments FTS5's structure record ``structure`` lists (see the module)."""
    at = 8 if structure[4:8] == LATER_STRUCTURE else 4
    _, at = read_varint(structure, at)
    return read_varint(structure, at)[0]


def merged(connection: sqlite3.Connection) -> tuple[str, ...]:
    """Merge each index of more than one segment, in one transaction; what was merged, in
    words (empty: every index was merged already, and nothing was written).

    An index in one segment is not given to FTS5's ``optimize`` at all, whatever a
    version of FTS5 would do with it (3.40's writes nothing; each merge of several puts
    the result on a new level). The count is read under the write lock: no writer comes
    between it and the merge."""
    done = []
    with immediate(connection):
        for index, name in INDEXES.items():
            if not connection.execute(_HAS, (index,)).fetchone()[0]:
                continue  # an older store, before the titles' index
            row = connection.execute(f"SELECT block FROM {index}_data WHERE id = 10"
                                     ).fetchone()
            segments = segment_count(row[0]) if row and isinstance(row[0], bytes) else 2
            if segments > 1:  # unreadable (2): merged, as before
                connection.execute(f"INSERT INTO {index}({index}) VALUES('optimize')")
                done.append(f"{name} from {segments} segments")
    return tuple(done)
