"""Removing whole sessions from the PostgreSQL store, and rewriting its texts in place: the
``session_remover`` and ``text_rewriter`` capabilities.

Both run in one transaction under the store's write lock, so the totals BM25 reads stay
exact and readers see all of a change or none of it. A removal deletes the sessions'
messages (their vectors follow by the foreign key), their rows and the summaries cached
for them as roots. A rewrite reads sessions a chunk at a time, rewrites them
(:mod:`harkback.stages.rewrite`) and stores the changed ones again through the ingest's
own write, so the index follows and the vectors of changed messages go; the summaries
cached for a changed session's lineage (:mod:`~harkback.adapters.stores.sql.lineage_cache`)
and those whose text, note or query the function changes are deleted. Then
``VACUUM FULL`` rewrites the tables it touched, so the old text is gone from their files
(the write-ahead log, backups and replicas hold it until they turn over: the server's
business, not the store's).
A role that may not vacuum them (not their owner) leaves the old row versions there, and
the report's notes say so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from harkback.adapters.stores.postgres_reads import messages, sessions
from harkback.adapters.stores.postgres_text import restore, storable
from harkback.adapters.stores.postgres_vacuum import NOT_VACUUMABLE
from harkback.adapters.stores.postgres_writes import take_write_lock, write
from harkback.adapters.stores.sql.lineage_cache import summaries_above
from harkback.stages import rewrite

Connection = psycopg.Connection[tuple[Any, ...]]

CHUNK = 200
"""Sessions read and rewritten at a time."""

_SUMMARY_KEY = "root_session_id, content, query, model, prompt_version"
_ABOVE = summaries_above("SELECT unnest(%s::text[])")


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


def rewrite_all(connection: Connection, edit: rewrite.Edit, *, dry_run: bool
                ) -> rewrite.RewriteReport:
    """Rewrite every session and cached summary (see the module); a dry run only counts."""
    report = rewrite.RewriteReport()
    with connection.transaction():
        if not dry_run:
            take_write_lock(connection)
        ids = [restore(row[0]) for row in connection.execute(
            'SELECT id FROM sessions ORDER BY id COLLATE "C"')]
        wrote = False
        lineages: set[tuple[Any, ...]] = set()  # summaries of changed lineages
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            changed, counts = rewrite.rewrite_sessions(sessions(connection, chunk),
                                                       messages(connection, chunk), edit)
            report = rewrite.added(report, counts)
            if changed:
                lineages.update(tuple(row) for row in connection.execute(
                    _ABOVE, ([storable(c.session.id) for c in changed],)))
            if changed and not dry_run:
                write(connection, changed)
                wrote = True
        stale = list(lineages.union(tuple(row[:5]) for row in connection.execute(
            f"SELECT {_SUMMARY_KEY}, text, note FROM summary_cache")
            if rewrite.changes_summary(edit, str(row[2]), str(row[5]), str(row[6]))))
        if stale and not dry_run:
            with connection.cursor() as cursor:
                cursor.executemany(f"DELETE FROM summary_cache WHERE ({_SUMMARY_KEY}) = "
                                   "(%s, %s, %s, %s, %s)", stale)
    # Only after a change: VACUUM FULL locks each table whole, so on a shared store a
    # redact that found nothing must not stop every searcher and writer while it runs.
    left = _compact(connection) if (wrote or stale) and not dry_run else ()
    return rewrite.RewriteReport(sessions=report.sessions, messages=report.messages,
                                 titles=report.titles, summaries_dropped=len(stale),
                                 notes=left)


_REWRITTEN = ("messages", "sessions", "summary_cache")
"""The tables a rewrite changes rows of."""


def _compact(connection: Connection) -> tuple[str, ...]:
    """Rewrite the tables a rewrite touched, leaving no old row version in their files;
    what this role could not rewrite (not their owner) is returned as a note saying what
    stays where."""
    connection.autocommit = True  # VACUUM runs outside a transaction
    try:
        found = connection.execute(NOT_VACUUMABLE, (list(_REWRITTEN),)).fetchone()
        for table in _REWRITTEN:  # a table it may not vacuum is skipped, with a warning
            connection.execute(f"VACUUM (FULL, ANALYZE) {table}")
    finally:
        connection.autocommit = False
    if found is None or not found[0]:
        return ()
    return (f"{connection.info.user} may not vacuum {found[0]}: the rows are redacted, but "
            "their old versions stay in those tables' files, secrets included, until their "
            "owner runs VACUUM FULL on them",)
