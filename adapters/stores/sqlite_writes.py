"""Ingest in the SQLite store: one transaction that replaces whole sessions (their
messages, their index rows and their titles' index rows), or only their tails
(:func:`write_tails`).

The plan (:func:`~harkback.adapters.stores.sql.writes.plan_write`) keeps the row id and
the index row of every message whose searchable text is unchanged, so re-ingesting a
session that only grew indexes only its new messages, and its old messages keep their
vectors.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from harkback.adapters.stores import sqlite_titles
from harkback.adapters.stores.damaged_rows import read_row
from harkback.adapters.stores.sql import fulltext, writes
from harkback.adapters.stores.sql.rows import message_from_row, session_row
from harkback.adapters.stores.sqlite_connection import execute
from harkback.adapters.stores.sqlite_transaction import immediate
from harkback.stages.ports import IngestReport
from harkback.stages.records import Conversation, Message
from harkback.stages.tails import Tail

MAX_MERGE_STEPS = 10_000
"""A bound on :func:`merge_pending`'s steps (about 20M pages: never reached in practice)."""


def write(connection: sqlite3.Connection, batch: Sequence[Conversation]) -> IngestReport:
    """Store ``batch`` (one conversation per session id) in one transaction."""
    if not batch:
        return IngestReport()
    with immediate(connection):
        return write_within(connection, batch)


def write_within(connection: sqlite3.Connection, batch: Sequence[Conversation]
                 ) -> IngestReport:
    """:func:`write`, inside the caller's write transaction (a rewrite reads what it
    changes in the same one, so no other writer's commit can come between)."""
    ids = [c.session.id for c in batch]
    existing = {row[0] for row in execute(connection, writes.existing_sessions(ids))}
    # A row that reads as no message stops the write, rolled back, in one line (DamagedRecord).
    stored = [(row[0], read_row(message_from_row, row[1:]))
              for row in execute(connection, writes.stored_messages(existing))]
    plan = _replace(connection, batch, stored)
    return IngestReport(added=len(batch) - len(existing), updated=len(existing),
                        messages=len(plan.messages), replaced=frozenset(existing))


def write_tails(connection: sqlite3.Connection, tails: Sequence[Tail]) -> IngestReport | None:
    """Store each tail's session and its messages from ``since`` on, in one transaction
    (see :class:`~harkback.stages.tails.TailWriter`); None, writing nothing, when the store
    does not hold, unchanged, the messages below ``since`` the tail was compared with
    (``below``: another writer changed them meanwhile)."""
    if not tails:
        return IngestReport()
    with immediate(connection):
        stored: list[tuple[int, Message]] = []
        for tail in tails:
            sid = tail.conversation.session.id
            held, below = connection.execute(writes.KEPT_BELOW, (sid, sid, tail.since)).fetchone()
            # The count first (cheap); then every field: another writer may have changed
            # a message's text alone.
            if not held or below != tail.kept or tuple(
                    read_row(message_from_row, row) for row in connection.execute(
                        writes.MESSAGES_BELOW, (sid, tail.since))) != tail.below:
                return None
            stored += [(row[0], read_row(message_from_row, row[1:]))
                       for row in connection.execute(writes.MESSAGES_FROM, (sid, tail.since))]
        plan = _replace(connection, [t.conversation for t in tails], stored)
    return IngestReport(updated=len(tails), messages=len(plan.messages),
                        replaced=frozenset(t.conversation.session.id for t in tails))


def _replace(connection: sqlite3.Connection, batch: Sequence[Conversation],
             stored: Sequence[tuple[int, Message]]) -> writes.WritePlan:
    """Replace the ``stored`` messages (row id, message) by the batch's messages, and
    upsert the batch's sessions (inside the caller's transaction)."""
    next_id: int = connection.execute(writes.MAX_MESSAGE_ID).fetchone()[0] + 1
    plan = writes.plan_write(batch, stored, next_id)
    connection.executemany(writes.DELETE_INDEXED, plan.unindex)
    # Only rows not kept are deleted; kept ones are updated in place, so their vectors
    # stay (the schema's triggers drop the vectors of deleted and changed rows).
    execute(connection, writes.delete_message_rows(plan.dropped))
    connection.executemany(writes.UPSERT_SESSION, [session_row(c.session) for c in batch])
    sqlite_titles.replace(connection, [c.session for c in batch])
    runs, rest = writes.upsert_message_runs(plan.messages)
    for values in runs:
        connection.execute(writes.UPSERT_MESSAGES, values)
    connection.executemany(writes.UPSERT_MESSAGE, rest)
    connection.executemany(writes.INSERT_INDEXED, plan.index)
    return plan


def merge_pending(connection: sqlite3.Connection) -> None:
    """Do the merging FTS5 left pending, in one transaction.

    FTS5 merges segments a little at each write and leaves the rest for later writes:
    after a bulk load of 1M messages, 24 segments that every term lookup reads one by
    one. Finishing that work once, when a store that wrote many messages closes, costs
    ~1 CPU second after the 1M load and leaves 5 segments; doing it after every large
    batch cost 12 % of a 100k load (benchmarks/README.md, "Speed at scale").
    """
    with immediate(connection):
        structure = connection.execute(fulltext.INDEX_STRUCTURE).fetchone()
        for _ in range(MAX_MERGE_STEPS):  # each step that changes the structure progresses
            connection.execute(fulltext.MERGE_STEP)
            after = connection.execute(fulltext.INDEX_STRUCTURE).fetchone()
            if after == structure:
                return
            structure = after
