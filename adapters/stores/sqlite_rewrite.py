"""Rewriting the SQLite store's texts in place (the ``text_rewriter`` capability).

Sessions are read a chunk at a time, rewritten (:mod:`harkback.stages.rewrite`) and the
changed ones written again through the ingest's own write, so the full-text and title
indexes follow and the schema's triggers drop the vectors of changed messages. A chunk is
cut by count and by bytes, as an ingest's batches are (:mod:`~harkback.stages.batching`):
its write holds the lock about a second however large the sessions, where 200 sessions
of 5 MB held it past a waiting ingest's patience. The
summaries cached for a changed session's lineage go in the same transaction as its
chunk (:mod:`~harkback.adapters.stores.sql.lineage_cache`), so a run killed between
chunks leaves none behind; then those whose text, note or query the function changes.
Then nothing of the old text may linger in the file: ``secure_delete`` zeroes freed
pages, the full-text index is merged (its old segments still hold the old tokens) and
the write-ahead log is checkpointed and truncated, by every run, so a run again
finishes one that was stopped.
"""

from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from harkback.adapters.stores.damaged_rows import read_row, session_reader
from harkback.adapters.stores.sql import fulltext, rows
from harkback.adapters.stores.sql.lineage_cache import summaries_above
from harkback.adapters.stores.sql.statement import json_list
from harkback.adapters.stores.sqlite_connection import execute
from harkback.adapters.stores.sqlite_removal import HAS_SUMMARY_CACHE
from harkback.adapters.stores.sqlite_transaction import immediate, read_snapshot
from harkback.adapters.stores.sqlite_writes import write_within
from harkback.adapters.stores.write_turns import Patience, patiently
from harkback.stages import rewrite
from harkback.stages.batching import Budget, batched
from harkback.stages.records import Conversation

_MERGE_TITLES = "INSERT INTO session_titles_fts(session_titles_fts) VALUES('optimize')"

T = TypeVar("T")

CHUNK = 200
"""Sessions read and rewritten at a time, at most."""

# A session's size: what its chunk reads and writes (titles and ids are small beside it).
_SIZES = ("SELECT j.value, (SELECT total(length(CAST(m.content AS BLOB)) "
          "+ ifnull(length(CAST(m.tool_calls AS BLOB)), 0)) "
          "FROM messages AS m WHERE m.session_id = j.value) "
          "FROM json_each(?) AS j ORDER BY j.key")

_SUMMARIES = ("SELECT root_session_id, content, query, model, prompt_version, text, note "
              "FROM summary_cache")
_DROP_SUMMARY = ("DELETE FROM summary_cache WHERE (root_session_id, content, query, model, "
                 "prompt_version) = (?, ?, ?, ?, ?)")
_ABOVE = summaries_above("SELECT value FROM json_each(?)")

Key = tuple[str, ...]


def rewrite_all(connection: sqlite3.Connection, edit: rewrite.Edit, *, dry_run: bool,
                patience: Patience | None = None,
                stop: Callable[[], bool] = lambda: False,
                budget: Budget | None = None) -> rewrite.RewriteReport:
    """Rewrite every session and cached summary in ``connection`` (see the module).

    Each write waits its turn while another connection holds the lock, for ``patience``
    (:mod:`~harkback.adapters.stores.write_turns`), as the store's other writes do, and
    gives up waiting once ``stop()`` says the store is closing (Ctrl-C, SIGTERM), when it
    also starts no other chunk (``sqlite3.OperationalError``: interrupted). Chunks
    are cut by ``budget`` (by default :data:`CHUNK` sessions or an ingest's bytes), and
    its byte budget follows how long each chunk's write held the lock.
    """
    def step(work: Callable[[sqlite3.Connection], T]) -> T:
        return (work if patience is None else patiently(work, patience, stop=stop))(connection)

    report = rewrite.RewriteReport()
    dropping: set[Key] = set()  # what the chunks dropped (a dry run: would drop)
    if not dry_run:
        connection.execute("PRAGMA secure_delete = ON")
    ids = [row[0] for row in connection.execute("SELECT id FROM sessions ORDER BY id")]
    budget = Budget(count=CHUNK) if budget is None else budget
    for part in batched(_sized(connection, ids), budget):
        if stop():
            # Ctrl-C, SIGTERM: the chunks written are kept and a run again finishes the job
            # (its merge and checkpoint run even when it finds nothing left to change).
            # Only waits for the lock looked at stop(): a redact went on to its last chunk.
            raise sqlite3.OperationalError("interrupted")
        chunk = functools.partial(_rewrite_chunk, ids=part, edit=edit, write=not dry_run,
                                  dropping=dropping, held=budget.took)
        counts = chunk(connection) if dry_run else step(chunk)
        report = rewrite.added(report, counts)
    if dry_run:
        # Not yet deleted: a row both under a changed lineage and changed counts once.
        dropped = len(dropping.union(_stale_summaries(connection, edit)))
    else:
        dropped = len(dropping) + step(lambda c: _drop(c, edit))
        # Even with nothing to change: a run stopped before its merge (a kill, a full disk)
        # left the old texts in the index's old segments, and this run finds nothing.
        step(lambda c: c.execute(fulltext.MERGE_INDEX))
        step(lambda c: c.execute(_MERGE_TITLES))
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return rewrite.RewriteReport(sessions=report.sessions, messages=report.messages,
                                 titles=report.titles, summaries_dropped=dropped)


def _sized(connection: sqlite3.Connection, ids: list[str]) -> Iterator[tuple[int, str]]:
    """Each of ``ids`` with its size in bytes, asked :data:`CHUNK` at a time as they are
    needed (each batch of them read whole: no statement stays open over a write)."""
    for start in range(0, len(ids), CHUNK):
        rows = connection.execute(_SIZES, (json_list(ids[start:start + CHUNK]),)).fetchall()
        yield from ((int(size), session_id) for session_id, size in rows)


def _rewrite_chunk(connection: sqlite3.Connection, *, ids: list[str], edit: rewrite.Edit,
                   write: bool = True, dropping: set[Key] | None = None,
                   held: Callable[[float], None] = lambda seconds: None
                   ) -> rewrite.RewriteReport:
    """Rewrite the sessions ``ids``; what changed is counted.

    What is written is what the write transaction holds: an ingest that committed after
    the chunk was read would be overwritten with the old text, and two redacts at once
    would each count (and write) the same changes. The chunk is read and edited outside
    the lock, in a snapshot, so other writers get their turns meanwhile; and read again
    under it only when another connection committed since (``PRAGMA data_version``).
    Read under the lock every time, a redact held it from its first chunk to its last.
    The summaries cached for the changed sessions' lineages are dropped in the write
    transaction too (a dry run: found in the snapshot), their keys added to ``dropping``;
    ``held`` hears how long the write held the lock.
    """
    def edited() -> tuple[list[Conversation], rewrite.RewriteReport]:
        # A row that reads as none: the store's failure in one line (damaged_rows).
        sessions = [session_reader(rows.session_from_row)(r)
                    for r in execute(connection, rows.sessions_by_id(ids))]
        return rewrite.rewrite_sessions(sessions, (
            read_row(rows.message_from_row, r)
            for r in execute(connection, rows.messages_of(ids))), edit)
    with read_snapshot(connection):
        changed, counts = edited()
        seen = _data_version(connection)
        if changed and not write and dropping is not None:
            dropping.update(_lineage_summaries(connection, changed, drop=False))
    if not (changed and write):
        return counts
    with immediate(connection):
        began = time.perf_counter()  # the lock taken: waiting for it is not holding it
        if _data_version(connection) != seen:
            changed, counts = edited()
        if changed:
            write_within(connection, changed)
            if dropping is not None:
                dropping.update(_lineage_summaries(connection, changed, drop=True))
    held(time.perf_counter() - began)
    return counts


def _data_version(connection: sqlite3.Connection) -> int:
    """A number that changes once another connection commits to the file (SQLite's).

    >>> _data_version(sqlite3.connect(":memory:"))
    1
    """
    found: int = connection.execute("PRAGMA data_version").fetchone()[0]
    return found


def _drop(connection: sqlite3.Connection, edit: rewrite.Edit) -> int:
    """Delete the summaries ``edit`` changes, found under the same lock; how many."""
    with immediate(connection):
        stale = _stale_summaries(connection, edit)
        if stale:  # a file that never cached a summary has no table to delete from
            connection.executemany(_DROP_SUMMARY, stale)
    return len(stale)


def _lineage_summaries(connection: sqlite3.Connection, changed: list[Conversation], *,
                       drop: bool) -> list[Key]:
    """The summaries cached for the lineages of the ``changed`` sessions (see
    :mod:`~harkback.adapters.stores.sql.lineage_cache`), deleted when ``drop``."""
    if connection.execute(HAS_SUMMARY_CACHE).fetchone() is None:
        return []  # nothing was ever cached in this file
    ids = json_list(c.session.id for c in changed)
    found = [tuple(row) for row in connection.execute(_ABOVE, (ids,))]
    if found and drop:
        connection.executemany(_DROP_SUMMARY, found)
    return found


def _stale_summaries(connection: sqlite3.Connection, edit: rewrite.Edit
                     ) -> list[tuple[str, ...]]:
    if connection.execute(HAS_SUMMARY_CACHE).fetchone() is None:
        return []  # nothing was ever cached in this file
    return [tuple(row[:5]) for row in connection.execute(_SUMMARIES)
            if rewrite.changes_summary(edit, str(row[2]), str(row[5]), str(row[6]))]
