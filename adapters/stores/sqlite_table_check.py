"""What ``harkback check`` reads from a SQLite store's tables themselves, past their
indexes: damage SQLite's read-only ``integrity_check`` does not name, or names as an
index's (:mod:`~harkback.adapters.stores.sqlite_check`).

:func:`keys_whole`: messages of no stored session, two at one position, a key a unique
index holds twice (REINDEX cannot rebuild such an index: the rows themselves repeat).
:func:`rows_whole`: rows that read as no message or session (a role outside its list, a
text stored as bytes), which every read of them refuses; the read-only check skips CHECK
constraints and never looks at a value's type.

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
from collections.abc import Callable

from harkback.adapters.sqlite_files import read_replacing
from harkback.adapters.stores.damaged_rows import DamagedRecord, read_row, session_reader
from harkback.adapters.stores.sql import rows
from harkback.adapters.stores.sql.schema import MESSAGE_COLUMNS, SESSION_COLUMNS
from harkback.adapters.stores.sql.statement import Row
from harkback.adapters.stores.sqlite_integrity import DERIVED
from harkback.stages.record_checks import EARLIEST_EPOCH, LATEST_EPOCH, ROLES

NAMED = 3
"""The damaged rows a check names by their ids; the rest are counted."""

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

_EPOCH = (EARLIEST_EPOCH, LATEST_EPOCH)
_TIMES = ("typeof({0}) NOT IN ('integer', 'real', 'null') OR {0} NOT BETWEEN ? AND ?")
# What a read of the row refuses (rows.message_from_row, rows.session_from_row), in SQL:
# one pass over the table, typeof() reading no text itself. Each row found is read as
# every read reads it, so what the check names is what a search says.
_MESSAGE_FAULTS = (
    f"SELECT {MESSAGE_COLUMNS} FROM messages NOT INDEXED WHERE "
    "typeof(session_id) != 'text' OR session_id = '' OR position < 0 "
    "OR typeof(position) NOT IN ('integer', 'real') "
    f"OR coalesce(role NOT IN ({', '.join('?' * len(ROLES))}), 1) "
    "OR typeof(content) != 'text' OR typeof(tool_name) != 'text' "
    f"OR typeof(tool_call_id) != 'text' OR {_TIMES.format('timestamp')} "
    # Tool calls a read's json.loads refuses (a flipped bit tears the JSON text), or that
    # are no list of calls, each with its id, name and arguments as texts ([{}] is JSON).
    # CASE: json_type raises on a text that is not JSON.
    "OR (tool_calls != '' AND CASE WHEN typeof(tool_calls) != 'text' THEN 1 "
    "WHEN json_valid(tool_calls) THEN json_type(tool_calls) != 'array' OR EXISTS ("
    "SELECT 1 FROM json_each(tool_calls) AS c WHERE json_type(c.value) != 'object' "
    "OR json_type(c.value, '$.id') IS NOT 'text' "
    "OR json_type(c.value, '$.function.name') IS NOT 'text' "
    "OR json_type(c.value, '$.function.arguments') IS NOT 'text') ELSE 1 END)")
_SESSION_FAULTS = (
    f"SELECT {SESSION_COLUMNS} FROM sessions NOT INDEXED WHERE "
    "typeof(id) != 'text' OR id = '' OR typeof(source) != 'text' OR typeof(model) != 'text' "
    "OR typeof(title) != 'text' OR typeof(end_reason) != 'text' OR typeof(project) != 'text' "
    "OR typeof(parent_session_id) NOT IN ('text', 'null') "
    f"OR {_TIMES.format('started_at')} OR {_TIMES.format('ended_at')}")


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


def rows_whole(connection: sqlite3.Connection, damaged: list[str]) -> bool:
    """Whether every stored message and session reads as one; each kind that does not is
    said in a line: how many, the first :data:`NAMED` named as a read of them names them.

    A store at an older schema version is not looked at (its columns differ): its check
    says to migrate it first, and the check after the migration looks."""
    messages = _faults(connection, _MESSAGE_FAULTS, (*ROLES, *_EPOCH),
                       lambda row: read_row(rows.message_from_row, row), "messages", damaged)
    sessions = _faults(connection, _SESSION_FAULTS, (*_EPOCH, *_EPOCH),
                       session_reader(rows.session_from_row), "sessions", damaged)
    return not (messages or sessions)


def _faults(connection: sqlite3.Connection, statement: str, params: tuple[object, ...],
            read: Callable[[Row], object], kind: str, damaged: list[str]) -> int:
    """How many rows ``statement`` finds that ``read`` refuses; a line naming the first."""
    def found(_: sqlite3.Connection) -> tuple[int, list[str]]:
        count, named = 0, list[str]()
        for row in connection.execute(statement, params):
            try:
                read(row)
            except DamagedRecord as error:
                count += 1
                if len(named) < NAMED:
                    named.append(str(error))
        return count, named

    # A text not UTF-8 in a row found reads as U+FFFD, as every read reads it.
    count, named = read_replacing(connection, found)
    if count:
        more = f"; and {count - NAMED} more" if count > NAMED else ""
        damaged.append(f"{count} stored {kind} read as none (found in the table itself; a "
                       f"command that reads one stops there): {'; '.join(named)}{more}")
    return count
