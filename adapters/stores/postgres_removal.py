"""Removing whole sessions from the PostgreSQL store: the ``session_remover`` capability
(rewriting its texts, ``text_rewriter``: :mod:`~harkback.adapters.stores.postgres_rewrite`).

A removal runs in one transaction under the store's write lock, so the totals BM25 reads
stay exact and readers see all of it or none. It deletes the sessions' messages (their
vectors follow by the foreign key), their rows and the summaries cached for them as roots.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from harkback.adapters.stores.postgres_text import storable
from harkback.adapters.stores.postgres_writes import take_write_lock

Connection = psycopg.Connection[tuple[Any, ...]]


def remove(connection: Connection, ids: Sequence[str]) -> int:
    """Remove the stored sessions among ``ids``; returns how many there were."""
    if not ids:
        return 0
    wanted = [storable(i) for i in dict.fromkeys(ids)]
    with connection.transaction():
        take_write_lock(connection)
        gone = connection.execute(
            "DELETE FROM sessions WHERE id = ANY(%s::text[]) RETURNING id, length",
            (wanted,)).fetchall()
        if not gone:
            return 0
        found = [row[0] for row in gone]
        row = connection.execute(
            "WITH gone AS (DELETE FROM messages WHERE session_id = ANY(%s::text[]) "
            "RETURNING length) SELECT count(*), COALESCE(sum(length), 0) FROM gone",
            (found,)).fetchone()
        assert row is not None
        connection.execute("DELETE FROM summary_cache WHERE root_session_id = ANY(%s::text[])",
                           (found,))
        connection.execute(
            "UPDATE index_totals SET messages = messages - %s, "
            "message_tokens = message_tokens - %s, sessions = sessions - %s, "
            "session_tokens = session_tokens - %s, generation = generation + 1",
            (row[0], row[1], len(gone), sum(r[1] for r in gone)))
    return len(gone)
