"""What ``harkback check`` reads from a SQLite store's tables themselves, past their
indexes: damage SQLite's ``integrity_check`` names as an index's
(:mod:`~harkback.adapters.stores.sqlite_check`).

:func:`keys_whole`: messages of no stored session, two at one position, a key a unique
index holds twice (REINDEX cannot rebuild such an index: the rows themselves repeat).

>>> import sqlite3
>>> connection = sqlite3.connect(":memory:")
>>> _ = connection.executescript(
...     "CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT);"
...     "CREATE TABLE messages (session_id TEXT, position INTEGER, UNIQUE (session_id, position));"
...     "INSERT INTO sessions VALUES ('s1', 'a'), ('s2', 'b')")
>>> damaged = []
>>> keys_whole(connection, damaged), damaged
(True, [])
"""

from __future__ import annotations

import sqlite3

from harkback.adapters.stores.sqlite_integrity import DERIVED

# "+id": with a bare id, SQLite takes the sessions' index itself for the IN list, NOT
# INDEXED or not, and read the key the index holds, not the table's.
_STRAYS = ("SELECT COUNT(*) FROM messages NOT INDEXED "
           "WHERE session_id NOT IN (SELECT +id FROM sessions NOT INDEXED)")
_TWINS = ("SELECT COUNT(*) FROM (SELECT 1 FROM messages NOT INDEXED "
          "GROUP BY session_id, position HAVING COUNT(*) > 1)")
# A WITHOUT ROWID table's primary key is the table itself (no entry of its own here).
_UNIQUE = ("SELECT m.name, l.name FROM sqlite_master AS m, pragma_index_list(m.name) AS l "
           "JOIN sqlite_master AS i ON i.name = l.name AND i.type = 'index' "
           "WHERE m.type = 'table' AND l.\"unique\" AND NOT l.partial "
           "AND m.name NOT LIKE 'sqlite%' AND m.name != 'messages'")
_KEY = "SELECT name, coll, cid FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno"


def keys_whole(connection: sqlite3.Connection, damaged: list[str]) -> bool:
    """Whether every message is in a stored session, each at its own position, and no
    key of a unique index is held twice, read from the tables themselves.

    "row N missing from index" is said alike of a broken index entry and of a key changed
    in its table (one flipped bit in a session id or a position): REINDEX made the index
    agree with the damaged row, and the check then called the store fine, a message in no
    session; or it stopped at the unique key, and the check sent the user to it again.
    "non-unique entry in index" too: with the table holding the key twice, REINDEX fails
    ("UNIQUE constraint failed") and the check sent the user back to ``--repair``."""
    strays: int = connection.execute(_STRAYS).fetchone()[0]
    if strays:
        damaged.append(f"{strays} stored messages belong to no stored session (read from "
                       f"the tables, not their indexes): a session id changed in its table")
    twins: int = connection.execute(_TWINS).fetchone()[0]
    if twins:
        damaged.append(f"{twins} positions in a session hold more than one stored message "
                       f"(read from the table, not its index): a position changed in it")
    repeated = _repeated_keys(connection, damaged)
    return not (strays or twins or repeated)


def _repeated_keys(connection: sqlite3.Connection, damaged: list[str]) -> bool:
    """Whether a table harkback does not rebuild (``messages``: :data:`_TWINS`) holds a
    key of one of its unique indexes twice, read without the index."""
    found = False
    for table, index in connection.execute(_UNIQUE).fetchall():
        key = connection.execute(_KEY, (index,)).fetchall()
        if DERIVED.fullmatch(table) or not key or any(cid < 0 for _, _, cid in key):
            continue  # rebuilt from the stored rows; or keyed by an expression
        # As the index compares: NULLs are never equal, each column in its collation.
        repeated: int = connection.execute(
            f'SELECT COUNT(*) FROM (SELECT 1 FROM "{table}" NOT INDEXED WHERE '
            + " AND ".join(f'"{name}" IS NOT NULL' for name, _, _ in key)
            + " GROUP BY " + ", ".join(f'"{name}" COLLATE {coll}' for name, coll, _ in key)
            + " HAVING COUNT(*) > 1)").fetchone()[0]
        if repeated:
            found = True
            damaged.append(f"{repeated} keys of the unique index {index} are each held by "
                           f"more than one row of {table} (read from the table, not its "
                           f"index): the rows themselves repeat, which no rebuilt index holds")
    return found
