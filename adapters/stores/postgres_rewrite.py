"""Rewriting the PostgreSQL store's texts in place (the ``text_rewriter`` capability).

Sessions are read a chunk at a time, rewritten (:mod:`harkback.stages.rewrite`) and the
changed ones stored again through the ingest's own write, so the index follows and the
vectors of changed messages go. A chunk is cut by count and by bytes, as an ingest's
batches are (:mod:`~harkback.stages.batching`), and is read and edited without the
store's write lock: only its write holds it, so ingests and syncs take their turns
between chunks (a redact in one transaction held the lock for its whole run). The
summaries cached for a changed session's lineage
(:mod:`~harkback.adapters.stores.sql.lineage_cache`) go in its chunk's transaction, so a
run stopped between chunks leaves none behind; then those whose text, note or query the
function changes. Then ``VACUUM FULL`` rewrites the tables it touched, so the old text is
gone from their files (the write-ahead log, backups and replicas hold it until they turn
over: the server's business, not the store's). A role that may not vacuum them (not their
owner) leaves the old row versions there, and the report's notes say so. Stopped (its
store closing: Ctrl-C, SIGTERM), a run starts no other chunk but compacts what it wrote
before it says so. Stopped otherwise (the server gone, a lock wait given up, a kill), it
leaves ``index_totals.unvacuumed`` set (above 0): each write adds to it in its own transaction and
only a ``VACUUM FULL`` that finished clears it, so a run again compacts even when it finds
nothing left to change (it would not, and the secrets stayed in the files), and a dry run
says the compaction is pending.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg

from harkback.adapters.stores.postgres_reads import messages, sessions
from harkback.adapters.stores.postgres_text import restore, storable
from harkback.adapters.stores.postgres_vacuum import NOT_VACUUMABLE
from harkback.adapters.stores.postgres_writes import take_write_lock, write
from harkback.adapters.stores.sql.lineage_cache import summaries_above
from harkback.stages import rewrite
from harkback.stages.batching import Budget, batched
from harkback.stages.records import Conversation

Connection = psycopg.Connection[tuple[Any, ...]]

CHUNK = 200
"""Sessions read and rewritten at a time, at most."""

_SUMMARY_KEY = "root_session_id, content, query, model, prompt_version"
_ABOVE = summaries_above("SELECT unnest(%s::text[])")
_DROP_SUMMARY = (f"DELETE FROM summary_cache WHERE ({_SUMMARY_KEY}) = "
                 "(%s, %s, %s, %s, %s)")
# octet_length reads a long text's stored size, not the text.
_SIZES = ("SELECT j.id, (SELECT COALESCE(sum(octet_length(m.content) "
          "+ COALESCE(octet_length(m.tool_calls), 0)), 0) FROM messages AS m "
          "WHERE m.session_id = j.id) FROM unnest(%s::text[]) WITH ORDINALITY AS j(id, place) "
          "ORDER BY j.place")
# Moved by every harkback write (an ingest's, a removal's), under the write lock.
_GENERATION = "SELECT generation FROM index_totals"
# The writes of redacts not compacted since (schema version 8): set with each write, in
# its transaction, so a run stopped anywhere after it leaves the mark.
# A clear negates it rather than setting 0, so it only grows in size: a clear of 3 that
# another redact's write took back to 3 after a third redact's clear would pass.
_MARK = "UPDATE index_totals SET unvacuumed = abs(unvacuumed) + 1"
# With the first xid not yet given out: every write the mark counts came before it.
_MARKED = "SELECT unvacuumed, txid_snapshot_xmax(txid_current_snapshot()) FROM index_totals"
# What may still see row versions a write before that xid left: VACUUM FULL keeps them
# in the files (as "recently dead"). From PostgreSQL 14 only this database's transactions
# (and a standby's, through no database) hold them back; before, every database's.
_HOLDING = (
    "WITH w AS (SELECT age(mod(%s::bigint, 4294967296)::text::xid) AS age) "
    "SELECT 'server process ' || pid FROM pg_stat_activity, w WHERE pid <> pg_backend_pid() "
    "AND (datname = current_database() OR datname IS NULL "
    "OR current_setting('server_version_num')::int < 140000) "
    "AND greatest(age(backend_xmin), age(backend_xid)) > w.age "
    "UNION ALL SELECT 'prepared transaction ' || gid FROM pg_prepared_xacts, w "
    "WHERE age(transaction) > w.age "
    "UNION ALL SELECT 'replication slot ' || slot_name FROM pg_replication_slots, w "
    "WHERE age(xmin) > w.age")
# Compare-and-set: another redact's write since the read was not compacted by this run.
_UNMARK = "UPDATE index_totals SET unvacuumed = -unvacuumed WHERE unvacuumed = %s"

Key = tuple[Any, ...]


class Stopped(Exception):
    """A rewrite asked to stop between two chunks; what it wrote is kept, and compacted."""


def rewrite_all(connection: Connection, edit: rewrite.Edit, *, dry_run: bool,
                budget: Budget | None = None, stop: Callable[[], bool] = lambda: False
                ) -> rewrite.RewriteReport:
    """Rewrite every session and cached summary (see the module); a dry run only counts.

    Chunks are cut by ``budget`` (by default :data:`CHUNK` sessions or an ingest's bytes),
    its byte budget following how long each chunk's write held the lock. Once ``stop()``
    says the store is closing, no other chunk starts: :class:`Stopped`, after compacting.
    """
    report = rewrite.RewriteReport()
    dropping: set[Key] = set()  # what the chunks dropped (a dry run: would drop)
    with connection.transaction():
        ids = [restore(row[0]) for row in connection.execute(
            'SELECT id FROM sessions ORDER BY id COLLATE "C"')]
    budget = Budget(count=CHUNK) if budget is None else budget
    wrote = stopped = False
    for part in batched(_sized(connection, ids), budget):
        if stopped := stop():
            break
        counts, written = _rewrite_chunk(connection, part, edit, write_it=not dry_run,
                                         dropping=dropping, held=budget.took)
        report, wrote = rewrite.added(report, counts), wrote or written
    stale: set[Key] = set()  # stopped: left to the run again (they hold what they held)
    if not stopped:
        with connection.transaction():
            if not dry_run:
                take_write_lock(connection)
            stale = set(_stale_summaries(connection, edit))
            if stale and not dry_run:
                with connection.cursor() as cursor:
                    cursor.executemany(_DROP_SUMMARY, list(stale))
                connection.execute(_MARK)
    with connection.transaction():  # read before compacting: see _compact
        marked, after = (int(v) for v in connection.execute(_MARKED).fetchone() or (0, 0))
    # Only after a change (this run's, or one a stopped run left): VACUUM FULL locks each
    # table whole, so on a shared store a redact that found nothing must not stop every
    # searcher and writer while it runs.
    changed = wrote or bool(stale) or bool(dropping) or marked > 0
    if dry_run:
        left = _pending(connection) if marked > 0 else ()
    else:
        left = _compact(connection, marked, after) if changed else ()
    if stopped:
        raise Stopped
    return rewrite.RewriteReport(sessions=report.sessions, messages=report.messages,
                                 titles=report.titles,
                                 summaries_dropped=len(dropping | stale), notes=left)


def _sized(connection: Connection, ids: list[str]) -> Iterator[tuple[int, str]]:
    """Each of ``ids`` with its size in bytes, asked :data:`CHUNK` at a time as needed."""
    for start in range(0, len(ids), CHUNK):
        with connection.transaction():
            rows = connection.execute(_SIZES, (
                [storable(i) for i in ids[start:start + CHUNK]],)).fetchall()
        yield from ((int(size), restore(session_id)) for session_id, size in rows)


def _rewrite_chunk(connection: Connection, ids: list[str], edit: rewrite.Edit, *,
                   write_it: bool, dropping: set[Key], held: Callable[[float], None]
                   ) -> tuple[rewrite.RewriteReport, bool]:
    """Rewrite the sessions ``ids``: what changed, and whether anything was written.

    Read and edited without the write lock; written under it, read and edited again first
    when another writer committed since (the generation moved): written as read, an
    ingest's update would be reverted, and two redacts at once would each count the same
    changes. The summaries cached for the changed lineages are dropped with the write (a
    dry run only finds them), their keys added to ``dropping``.
    """
    def edited() -> tuple[list[Conversation], rewrite.RewriteReport]:
        return rewrite.rewrite_sessions(sessions(connection, ids),
                                        messages(connection, ids), edit)
    with connection.transaction():  # a read: no lock, and the edit runs after it
        seen = connection.execute(_GENERATION).fetchone()
        stored = sessions(connection, ids), messages(connection, ids)
    changed, counts = rewrite.rewrite_sessions(*stored, edit)
    if changed and not write_it:
        with connection.transaction():
            dropping.update(_lineage_summaries(connection, changed))
    if not (changed and write_it):
        return counts, False
    with connection.transaction():
        take_write_lock(connection)
        began = time.perf_counter()  # the lock taken: waiting for it is not holding it
        if connection.execute(_GENERATION).fetchone() != seen:
            changed, counts = edited()
        if changed:
            write(connection, changed)
            connection.execute(_MARK)
            found = _lineage_summaries(connection, changed)
            if found:
                with connection.cursor() as cursor:
                    cursor.executemany(_DROP_SUMMARY, found)
            dropping.update(found)
    held(time.perf_counter() - began)
    return counts, bool(changed)


def _lineage_summaries(connection: Connection, changed: list[Conversation]) -> list[Key]:
    """The keys of the summaries cached for the lineages of the ``changed`` sessions."""
    return [tuple(row) for row in connection.execute(
        _ABOVE, ([storable(c.session.id) for c in changed],))]


def _stale_summaries(connection: Connection, edit: rewrite.Edit) -> list[Key]:
    """The keys of the cached summaries whose text, note or question ``edit`` changes."""
    return [tuple(row[:5]) for row in connection.execute(
        f"SELECT {_SUMMARY_KEY}, text, note FROM summary_cache")
        if rewrite.changes_summary(edit, str(row[2]), str(row[5]), str(row[6]))]


_REWRITTEN = ("messages", "sessions", "summary_cache")
"""The tables a rewrite changes rows of."""


def _compact(connection: Connection, marked: int, after: int) -> tuple[str, ...]:
    """Rewrite the tables a rewrite touched, leaving no old row version in their files,
    then clear the mark if it still reads ``marked`` (read before: a write since may have
    been after a table's VACUUM); what this role could not rewrite (not their owner), or
    a transaction older than xid ``after`` kept, keeps the mark, and is returned as a note
    saying what stays where."""
    connection.autocommit = True  # VACUUM runs outside a transaction
    try:
        found = connection.execute(NOT_VACUUMABLE, (list(_REWRITTEN),)).fetchone()
        # Asked before and after: one that ends while a table is compacted was seen by it.
        holding = {row[0] for row in connection.execute(_HOLDING, (after,))}
        for table in _REWRITTEN:  # a table it may not vacuum is skipped, with a warning
            connection.execute(f"VACUUM (FULL, ANALYZE) {table}")
        holding.update(row[0] for row in connection.execute(_HOLDING, (after,)))
        barred = found[0] if found is not None else None
        if not (holding or barred):
            connection.execute(_UNMARK, (marked,))
    finally:
        connection.autocommit = False
    notes = []
    if holding:
        notes.append(f"the rows are redacted, but {', '.join(sorted(holding))} may still see "
                     "their old versions, so VACUUM FULL kept them in the tables' files, "
                     "secrets included: run `harkback redact` again once it has ended")
    if barred:
        notes.append(f"{connection.info.user} may not vacuum {barred}: the rows are redacted, "
                     "but their old versions stay in those tables' files, secrets included, "
                     "until their owner runs `harkback redact` on this store (its VACUUM "
                     "FULL also ends this note)")
    return tuple(notes)


def _pending(connection: Connection) -> tuple[str, ...]:
    """The note of a dry run finding the mark set: a redact's compaction not done."""
    with connection.transaction():
        found = connection.execute(NOT_VACUUMABLE, (list(_REWRITTEN),)).fetchone()
    until = ("their owner runs `harkback redact` on this store" if found is not None
             and found[0] else "`harkback redact` (without --dry-run) compacts them")
    return ("a compaction is pending: old row versions of what a redact rewrote, secrets "
            "included, stay in the tables' files (its VACUUM FULL was stopped, not allowed, "
            f"or kept them for an older transaction) until {until}",)
