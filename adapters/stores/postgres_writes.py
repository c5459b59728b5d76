"""Ingest in the PostgreSQL store: one transaction per batch that replaces whole sessions
(or only their tails: :func:`write_tails`).

The batch runs under the store's advisory write lock (writers of one store take turns, of
stores in two schemas not; readers see the batch all at once or not at all, never half a
session). Re-ingesting a session is an
upsert keyed by its id, so two machines importing the same history end with one copy.
The plan is the SQLite store's (:func:`~harkback.adapters.stores.sql.writes.plan_write`):
a message whose searchable text is unchanged keeps its row id (and its vectors, unless
its content changed); new rows arrive by ``COPY``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from harkback.adapters.stores.damaged_rows import read_row, session_reader
from harkback.adapters.stores.migration import moved_on
from harkback.adapters.stores.postgres_schema import VERSION, WRITE_KEYS
from harkback.adapters.stores.postgres_text import restore, storable, tsvector_literal
from harkback.adapters.stores.sql.rows import message_from_row, session_from_row, session_row
from harkback.adapters.stores.sql.statement import SqlValue
from harkback.adapters.stores.sql.writes import plan_write
from harkback.stages.ports import IngestReport
from harkback.stages.records import Conversation, Message, Session
from harkback.stages.tails import Tail
from harkback.stages.text.tokens import index_tokens

Connection = psycopg.Connection[tuple[Any, ...]]

MESSAGE_FIELDS = ("session_id", "position", "role", "content", "tool_name", "tool_call_id",
                  "tool_calls", "timestamp")
MESSAGE_COLUMNS = ", ".join(MESSAGE_FIELDS)

SESSION_FIELDS = ("id", "source", "model", "title", "started_at", "ended_at",
                  "parent_session_id", "end_reason", "project")
SESSION_COLUMNS = ", ".join(SESSION_FIELDS)

_UPSERT_SESSION = (
    f"INSERT INTO sessions ({SESSION_COLUMNS}, tokens, length) "
    f"VALUES ({'%s, ' * len(SESSION_FIELDS)}%s::tsvector, %s) ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*SESSION_FIELDS[1:], "tokens", "length")))

_UPDATE_MESSAGE = (
    "UPDATE messages SET " + ", ".join(f"{c} = %s" for c in MESSAGE_FIELDS) + " WHERE id = %s")

_COPY_MESSAGES = f"COPY messages (id, {MESSAGE_COLUMNS}, tokens, length) FROM STDIN"

_LOCK_AND_COMPRESSION = (
    f"SELECT pg_advisory_xact_lock({WRITE_KEYS}), (SELECT set_config("
    "'default_toast_compression', 'lz4', true) FROM pg_settings "
    "WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals))")
"""Take the write lock, and compress this transaction's long values (a long message's text
and ``tsvector``) with LZ4 where the server was built with it: pglz's compression was a
tenth of the ``COPY``'s time on the server; LZ4 takes about a fifth of that (and reads
back faster). Rows written before keep pglz; each value names its own method."""

_LOCK = f"SELECT pg_advisory_xact_lock({WRITE_KEYS})"


class SchemaMoved(psycopg.DatabaseError):
    """The database's schema version is not the one this harkback writes: another harkback
    migrated it while this one was connected (see :func:`take_write_lock`)."""


def take_write_lock(connection: Connection, statement: str = _LOCK) -> None:
    """Take the store's write lock (``statement`` binds it), then check under it that the
    database is still at the schema version this harkback writes.

    On a shared server the harkbacks of several machines write at once; once one of them
    migrated the database, another still connected must not add rows or index tokens of
    the old layout (:class:`SchemaMoved`; the transaction is rolled back).
    """
    connection.execute(statement)
    # A statement of its own, so its snapshot is taken once the lock is held: it sees a
    # migration that committed while this transaction waited for the lock.
    check_version(connection)


def check_version(connection: Connection) -> None:
    """Raise :class:`SchemaMoved` unless the database is at the schema version this
    harkback writes (for writes outside the write lock too: vectors, the import ledger,
    the summary cache)."""
    # Imported here: postgres_migrations imports this module (through postgres_voicing).
    from harkback.adapters.stores.postgres_migrations import SCHEMA_VERSION
    row = connection.execute(VERSION).fetchone()
    found = int(row[0]) if row else 0  # no row: not a layout this harkback writes
    if found != SCHEMA_VERSION:
        raise SchemaMoved(moved_on(found, SCHEMA_VERSION))


_TOTALS = ("UPDATE index_totals SET messages = messages + %s, "
           "message_tokens = message_tokens + %s, sessions = sessions + %s, "
           "session_tokens = session_tokens + %s, generation = generation + 1")


def stored_text(values: Iterable[SqlValue]) -> tuple[SqlValue, ...]:
    """Row values with every text made storable (see :func:`storable`)."""
    return tuple(storable(v) if isinstance(v, str) else v for v in values)


def read_text(values: Iterable[Any]) -> tuple[Any, ...]:
    """Row values with every text as it was given (the inverse of :func:`stored_text`)."""
    return tuple(restore(v) if isinstance(v, str) else v for v in values)


def stored_message(row: Sequence[Any]) -> Message:
    """The message of a row of :data:`MESSAGE_COLUMNS`, its texts as given; a row that reads
    as none (a timestamp past the year 9999, which a ``double precision`` holds) is a
    :class:`~harkback.adapters.stores.damaged_rows.DamagedRecord`, said in one line as
    SQLite's store says it.

    >>> stored_message(("s1", 0, "user", "hi", "", "", None, 1e300))
    Traceback (most recent call last):
    harkback.adapters.stores.damaged_rows.DamagedRecord: a stored message is damaged (session \
's1', position 0: timestamp must be epoch seconds between the years 1 and 9999, got 1e+300)
    """
    return read_row(message_from_row, read_text(row))


def stored_session(row: Sequence[Any]) -> Session:
    """The session of a row of :data:`SESSION_COLUMNS`, its texts as given; a row that reads
    as none a :class:`~harkback.adapters.stores.damaged_rows.DamagedRecord` (see
    :func:`stored_message`)."""
    return _read_session(read_text(row))


_read_session = session_reader(session_from_row)


def title_tokens(session: Session) -> tuple[str, ...]:
    """The tokens of a session's title and source, as the title index sees them."""
    return index_tokens(session.text_for_search())


def write(connection: Connection, batch: Sequence[Conversation]) -> IngestReport:
    """Store ``batch`` (one conversation per session id) in one transaction."""
    if not batch:
        return IngestReport()
    ids = [storable(c.session.id) for c in batch]
    with connection.transaction():
        take_write_lock(connection, _LOCK_AND_COMPRESSION)
        old_titles: dict[str, int] = dict(connection.execute(
            "SELECT id, length FROM sessions WHERE id = ANY(%s::text[])", (ids,)).fetchall())
        stored = [(row[0], stored_message(row[1:])) for row in connection.execute(
            f"SELECT id, {MESSAGE_COLUMNS} FROM messages WHERE session_id = ANY(%s::text[])",
            (list(old_titles),))]
        written = _replace(connection, batch, stored, old_titles)
    return IngestReport(added=len(batch) - len(old_titles), updated=len(old_titles),
                        messages=written, replaced=frozenset(map(restore, old_titles)))


def write_tails(connection: Connection, tails: Sequence[Tail]) -> IngestReport | None:
    """Store each tail's session and its messages from ``since`` on, in one transaction
    (see :class:`~harkback.stages.tails.TailWriter`); None, writing nothing, when the store
    does not hold, unchanged, the messages below ``since`` the tail was compared with
    (``below``: another writer changed them meanwhile)."""
    if not tails:
        return IngestReport()
    with connection.transaction():
        take_write_lock(connection, _LOCK_AND_COMPRESSION)
        old_titles: dict[str, int] = {}
        stored: list[tuple[int, Message]] = []
        for tail in tails:
            sid = storable(tail.conversation.session.id)
            held = connection.execute(_KEPT_BELOW, (sid, sid, tail.since)).fetchone()
            # The count first (cheap); then every field: another writer may have changed
            # a message's text alone.
            if held is None or held[0] is None or held[1] != tail.kept or tuple(
                    stored_message(row) for row in connection.execute(
                        _MESSAGES_BELOW, (sid, tail.since))) != tail.below:
                return None
            old_titles[sid] = held[0]
            stored += [(row[0], stored_message(row[1:]))
                       for row in connection.execute(_MESSAGES_FROM, (sid, tail.since))]
        written = _replace(connection, [t.conversation for t in tails], stored, old_titles)
    return IngestReport(updated=len(tails), messages=written,
                        replaced=frozenset(map(restore, old_titles)))


_KEPT_BELOW = ("SELECT (SELECT length FROM sessions WHERE id = %s), "
               "(SELECT COUNT(*) FROM messages WHERE session_id = %s AND position < %s)")

_MESSAGES_BELOW = (f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = %s "
                   "AND position < %s ORDER BY position")

_MESSAGES_FROM = (f"SELECT id, {MESSAGE_COLUMNS} FROM messages "
                  "WHERE session_id = %s AND position >= %s")


def _replace(connection: Connection, batch: Sequence[Conversation],
             stored: Sequence[tuple[int, Message]], old_titles: dict[str, int]) -> int:
    """Replace the ``stored`` messages (row id, message) by the batch's messages, upsert the
    batch's sessions (``old_titles``: the stored ones' title token counts) and keep the
    index totals, inside the caller's transaction; returns the message rows written."""
    next_id = connection.execute(
        "SELECT COALESCE(MAX(id), 0) + 1 FROM messages").fetchone()[0]  # type: ignore[index]
    plan = plan_write(batch, stored, next_id)
    # Only when there is a row to drop: any DELETE tells readers that rows went.
    dropped = connection.execute(
        "DELETE FROM messages WHERE id = ANY(%s::bigint[]) RETURNING length",
        (list(plan.dropped),)).fetchall() if plan.dropped else []
    sessions = [c.session for c in batch]
    titles = [title_tokens(s) for s in sessions]
    with connection.cursor() as cursor:
        cursor.executemany(_UPSERT_SESSION, [
            (*stored_text(session_row(s)), tsvector_literal(t), len(t))
            for s, t in zip(sessions, titles, strict=True)])
    new_tokens = _write_messages(connection, plan.messages, dict(plan.index),
                                 {row_id: m for row_id, m in stored},
                                 [m for c in batch for m in c.messages])
    connection.execute(_TOTALS, (
        len(plan.index) - len(dropped), new_tokens - sum(r[0] for r in dropped),
        len(batch) - len(old_titles), sum(map(len, titles)) - sum(old_titles.values())))
    return len(plan.messages)


def _write_messages(connection: Connection, rows: Sequence[tuple[SqlValue, ...]],
                    index: dict[int, str], stored: dict[int, Message],
                    messages: Sequence[Message]) -> int:
    """Update kept rows in place, copy new ones in (``messages`` are the rows' messages, in
    order); returns the new rows' token count."""
    kept = [row for row in rows if row[0] not in index]
    # A vector describes its message's content: it goes when the content changes.
    changed = [row[0] for row in kept if isinstance(row[0], int)
               and stored[row[0]].content != row[4]]
    if changed:
        connection.execute("DELETE FROM message_vectors WHERE message_id = ANY(%s::bigint[])",
                           (changed,))
    if kept:
        with connection.cursor() as cursor:
            cursor.executemany(_UPDATE_MESSAGE, [(*stored_text(row[1:]), row[0])
                                                 for row in kept])
    total = 0
    with connection.cursor() as cursor, cursor.copy(_COPY_MESSAGES) as copy:
        for row, message in zip(rows, messages, strict=True):
            if row[0] not in index:
                continue
            tokens = index_tokens(message.text_for_search())
            total += len(tokens)
            copy.write_row((*stored_text(row), tsvector_literal(tokens), len(tokens)))
    return total

