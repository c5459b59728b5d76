"""A session's messages read from the SQLite store, a huge one (a pasted log) by its start.

The load stage asks for no more than the first
:data:`~harkback.stages.long_text.LONGEST_READ` characters of a message; a text too long for
that is left out of the statement that reads the others and its start read alone, so a
normal message costs what it did.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from harkback.adapters.stores.sql import rows
from harkback.adapters.stores.sqlite_connection import execute
from harkback.stages.records import Message


def read_messages(connection: sqlite3.Connection, session_ids: Sequence[str],
                  longest: int | None) -> tuple[Message, ...]:
    """All messages of these sessions, in session start order then position; with
    ``longest``, a longer content is its start and a note
    (:func:`~harkback.stages.long_text.loaded_start`)."""
    found = execute(connection, rows.messages_of(session_ids, longest)).fetchall()
    if longest is None:
        return tuple(rows.message_from_row(row) for row in found)
    return tuple(rows.message_start_from_row(row, None if row[3] is not None else execute(
        connection, rows.message_start(row[0], row[1], longest)).fetchone()[0], longest)
        for row in found)
