"""A session's messages read from the PostgreSQL store: all of some sessions
(:func:`~harkback.adapters.stores.postgres_reads.messages`), or a window of one
(``harkback show``, :mod:`~harkback.stages.message_window`).

A window is counted and found through the unique (session_id, position) index, then only
its messages are read, in one REPEATABLE READ transaction: the count and the window see
one state of the database, whatever a writer commits between the two statements.

:class:`PostgresMessages` is that part of
:class:`~harkback.adapters.stores.postgres.PostgresStore`.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import psycopg
from returns.future import FutureResult

from harkback.adapters.stores import postgres_reads
from harkback.adapters.stores.postgres_text import restore, storable
from harkback.adapters.stores.postgres_writes import MESSAGE_COLUMNS, stored_message
from harkback.adapters.stores.sql.rows import like_start
from harkback.stages.errors import StoreUnavailable
from harkback.stages.message_window import MessageWindow, WindowQuery, window_start
from harkback.stages.records import Message

Connection = psycopg.Connection[tuple[Any, ...]]
T = TypeVar("T")

_COUNTS = ("SELECT (SELECT count(*) FROM messages WHERE session_id = %(session)s), "
           "(SELECT count(*) FROM messages WHERE session_id = %(session)s "
           "AND position < %(around)s), EXISTS (SELECT 1 FROM messages "
           "WHERE session_id = %(session)s AND position = %(around)s)")
_ROWS = (f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = %(session)s "
         "AND position >= (SELECT position FROM messages WHERE session_id = %(session)s "
         "ORDER BY position OFFSET %(start)s LIMIT 1) ORDER BY position LIMIT %(limit)s")
"""The first message's position found in the index alone (an index-only scan: no message
is fetched to be skipped), then the window read from there."""


def window(connection: Connection, query: WindowQuery) -> MessageWindow:
    """The window of ``query`` and the session's count, of one snapshot (a transaction of
    its own: the store runs each call in one)."""
    connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    values: dict[str, Any] = {"session": storable(query.session_id), "around": query.around}
    found = connection.execute(_COUNTS, values).fetchone()
    assert found is not None  # a SELECT without FROM gives one row
    total, before, held = (int(n) for n in found)
    around_index = before if held else None
    start = window_start(query, total, around_index)
    read = [] if start >= total else connection.execute(
        _ROWS, {**values, "start": start, "limit": query.limit}).fetchall()
    return MessageWindow(messages=tuple(stored_message(row) for row in read),
                         offset=start, total=total, around_index=around_index)


_ALIKE = ("SELECT id FROM sessions WHERE translate(id, %(upper)s, %(lower)s) LIKE %(start)s "
          "ESCAPE '\\' ORDER BY id COLLATE \"C\" LIMIT %(limit)s")
"""Ids alike as SQLite's ``LIKE`` finds them: only ASCII capitals folded (ILIKE and lower()
fold by the database's locale), in code point order (the "C" collation: UTF-8 bytes)."""


def ids_alike(connection: Connection, session_id: str, limit: int) -> tuple[str, ...]:
    """Up to ``limit`` stored session ids starting with ``session_id``, ASCII case aside."""
    found = connection.execute(_ALIKE, {
        "upper": string.ascii_uppercase, "lower": string.ascii_lowercase,
        "start": like_start(storable(session_id)), "limit": limit}).fetchall()
    return tuple(restore(str(row[0])) for row in found)


class PostgresMessages:
    """Reads of the PostgreSQL store's messages, each call in a transaction of its own."""

    def run(self, work: Callable[[Connection], T], *, long: bool = False
            ) -> FutureResult[T, StoreUnavailable]:
        raise NotImplementedError

    def messages(self, session_ids: Sequence[str], longest: int | None = None
                 ) -> FutureResult[tuple[Message, ...], StoreUnavailable]:
        """All messages of these sessions, in session start order then position (see the port)."""
        return self.run(lambda connection: postgres_reads.messages(
            connection, session_ids, longest))

    def message_window(self, query: WindowQuery
                       ) -> FutureResult[MessageWindow, StoreUnavailable]:
        """A window of one session's messages and their count (see the port)."""
        return self.run(lambda connection: window(connection, query))

    def ids_alike(self, session_id: str, limit: int
                  ) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """Stored ids starting with ``session_id``, ASCII case aside (see the port)."""
        return self.run(lambda connection: ids_alike(connection, session_id, limit))
