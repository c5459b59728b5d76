"""A session's messages read from the SQLite store: all of some sessions (a huge one, a
pasted log, by its start), or a window of one (``harkback show``).

The load stage asks for no more than the first
:data:`~harkback.stages.long_text.LONGEST_READ` characters of a message; a text too long for
that is left out of the statement that reads the others and its start read alone, so a
normal message costs what it did. A window (:mod:`~harkback.stages.message_window`) is
counted and found through the (session_id, position) index, and only its messages are read:
a page of a session of 50,000 messages costs what a page of a short one does.

:class:`SqliteMessages` is that part of :class:`~harkback.adapters.stores.sqlite.SqliteStore`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from itertools import islice
from typing import TypeVar

from returns.future import FutureResult

from harkback.adapters.stores.damaged_rows import read_row
from harkback.adapters.stores.sql import rows
from harkback.adapters.stores.sqlite_connection import execute
from harkback.adapters.stores.sqlite_transaction import read_snapshot
from harkback.stages.errors import StoreUnavailable
from harkback.stages.id_hints import starts_alike
from harkback.stages.message_window import MessageWindow, WindowQuery, window_start
from harkback.stages.records import Message

T = TypeVar("T")


def read_messages(connection: sqlite3.Connection, session_ids: Sequence[str],
                  longest: int | None) -> tuple[Message, ...]:
    """All messages of these sessions, in session start order then position; with
    ``longest``, a longer content is its start and a note
    (:func:`~harkback.stages.long_text.loaded_start`)."""
    found = execute(connection, rows.messages_of(session_ids, longest)).fetchall()
    if longest is None:
        return tuple(read_row(rows.message_from_row, row) for row in found)
    return tuple(read_row(rows.message_start_from_row, row, None if row[3] is not None else execute(
        connection, rows.message_start(row[0], row[1], longest)).fetchone()[0], longest)
        for row in found)


def read_window(connection: sqlite3.Connection, query: WindowQuery) -> MessageWindow:
    """The window of ``query`` and the session's count, in one read transaction (the count
    and the window of one state of the file)."""
    with read_snapshot(connection):
        total, before, held = execute(
            connection, rows.window_counts(query.session_id, query.around)).fetchone()
        around_index = before if held else None
        start = window_start(query, total, around_index)
        found = () if start >= total else execute(
            connection, rows.window_rows(query.session_id, start, query.limit)).fetchall()
    return MessageWindow(messages=tuple(read_row(rows.message_from_row, row) for row in found),
                         offset=start, total=total, around_index=around_index)


class SqliteMessages:
    """Reads of the SQLite store's messages, on its connection's thread."""

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> FutureResult[T, StoreUnavailable]:
        raise NotImplementedError

    def messages(self, session_ids: Sequence[str], longest: int | None = None
                 ) -> FutureResult[tuple[Message, ...], StoreUnavailable]:
        """All messages of these sessions, in session start order then position (see the port)."""
        return self._run(lambda connection: read_messages(connection, session_ids, longest))

    def message_window(self, query: WindowQuery
                       ) -> FutureResult[MessageWindow, StoreUnavailable]:
        """A window of one session's messages and their count (see the port)."""
        return self._run(lambda connection: read_window(connection, query))

    def ids_alike(self, session_id: str, limit: int
                  ) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """Stored ids starting with ``session_id``, ASCII case aside (see the port)."""
        # Checked again in Python: the pattern holds only the id's start, and SQLite's LIKE
        # ends a text, and a pattern, at a NUL. The rows come in the id index's order, lazily.
        return self._run(lambda connection: tuple(islice(
            (str(row[0]) for row in execute(connection, rows.ids_alike(session_id))
             if starts_alike(str(row[0]), session_id)), max(limit, 0))))
