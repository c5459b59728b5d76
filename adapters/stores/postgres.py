"""The PostgreSQL session store: one database shared by many machines, readers and writers.

Statements run on a small thread pool, each thread with its connection
(:mod:`~harkback.adapters.stores.postgres_per_thread`), so the event loop never blocks on
the server, and every wait is bounded
(:mod:`~harkback.adapters.stores.postgres_watchdog`). Every failure of the server
(unreachable, frozen, gone mid-statement, refusing a write) comes back as one
:class:`StoreUnavailable` line; a transaction that fails is rolled back whole. The work
lives beside it: connections, bounds and the schema check in
:mod:`~harkback.adapters.stores.postgres_connection` (tables in
:mod:`~harkback.adapters.stores.postgres_schema`), search and term statistics in
:mod:`~harkback.adapters.stores.postgres_search`, reads in
:mod:`~harkback.adapters.stores.postgres_reads` (titles in
:mod:`~harkback.adapters.stores.postgres_titles`, messages in
:mod:`~harkback.adapters.stores.postgres_messages`), ingests in
:mod:`~harkback.adapters.stores.postgres_writes` (a large one beside a merge of the
index's pending list, :mod:`~harkback.adapters.stores.postgres_merging`), vectors in
:mod:`~harkback.adapters.stores.postgres_vectors`, the summary cache and import ledger in
:mod:`~harkback.adapters.stores.postgres_extras`, removals in
:mod:`~harkback.adapters.stores.postgres_removal` and rewrites in
:mod:`~harkback.adapters.stores.postgres_rewrite`.

>>> PostgresStore.open("postgresql://host:port/db").failure().reason.split(" (")[0]
'not a PostgreSQL URL: postgresql://host:port/db'
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, Self, TypeVar

import attrs
import psycopg
from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters.stores import (
    postgres_connection,
    postgres_pending,
    postgres_reads,
    postgres_removal,
    postgres_rewrite,
    postgres_search,
    postgres_titles,
    postgres_vectors,
    postgres_writes,
)
from harkback.adapters.stores.closing import Closing
from harkback.adapters.stores.damaged_rows import DamagedRecord
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres_extras import PostgresImportLedger, PostgresSummaryCache
from harkback.adapters.stores.postgres_memo import CountMemo
from harkback.adapters.stores.postgres_merging import PendingListMerge
from harkback.adapters.stores.postgres_messages import PostgresMessages
from harkback.adapters.stores.postgres_per_thread import PerThread
from harkback.adapters.stores.postgres_vacuum import NOT_VACUUMABLE
from harkback.adapters.stores.postgres_watchdog import Unanswered, Watchdog
from harkback.adapters.stores.sql.vectors import StartKey, unit_vector, vector_problem
from harkback.stages import ports, records, rewrite
from harkback.stages.errors import StoreUnavailable
from harkback.stages.stats import StoreStats
from harkback.stages.storable import storable
from harkback.stages.tails import Tail, mended_tails

T = TypeVar("T")

_VACUUMED = ("messages", "sessions", "message_vectors")
Connection = psycopg.Connection[tuple[Any, ...]]


class PostgresStore(Closing, PostgresMessages, PendingListMerge):
    """A :class:`~harkback.stages.ports.SessionStore` and
    :class:`~harkback.stages.ports.VectorStore` in a PostgreSQL database.

    Build it with :meth:`open`; close it with :meth:`close` or a ``with`` block.
    """

    def __init__(self, *, url: str, readonly: bool, connections: PerThread,
                 watchdog: Watchdog, bounds: postgres_connection.Bounds,
                 schema: Migrated, environ: Mapping[str, str] = os.environ) -> None:
        """Wrap checked connections; use :meth:`open` instead."""
        self.url = url
        self.schema = schema
        """The database's schema version when opened, and now (see :meth:`open`)."""
        self.where = postgres_connection.where(url)
        self.readonly = readonly
        self.bounds = bounds
        self._connections = connections
        self._environ = environ  # its $PGOPTIONS, as connections use them, in error hints
        self._watchdog = watchdog
        self._executor = ThreadPoolExecutor(max_workers=postgres_connection.POOL_SIZE,
                                            thread_name_prefix="harkback-postgres")
        self._closed = False
        self._memo = CountMemo()
        self._merge_lock = threading.Lock()
        self._merge: Literal["running", "refused"] | None = None
        """The background merge of the index's pending list (see :meth:`ingest`)."""
        self._large_writes = 0
        self._starts: dict[StartKey, postgres_vectors.Resume] = {}
        """Where :meth:`unembedded` resumes (see :class:`~.postgres_vectors.Resume`)."""
        self._starts_lock = threading.Lock()

    @classmethod
    def open(cls, url: str, *, readonly: bool = False, timeout: float | None = None,
             environ: Mapping[str, str] | None = None, create: bool = True
             ) -> Result[PostgresStore, StoreUnavailable]:
        """Connect to the database at ``url``; blocks briefly, so call it off the loop.

        Writable mode creates the schema in an empty database (unless not ``create``: then
        it fails with ``NoStore``, as read-only mode does) and migrates one of an older
        schema version (:attr:`schema` says from which). Read-only mode never writes (the
        server enforces it) and fails on a database that holds no harkback store or an
        older one; either refuses a database holding other tables, or a newer schema.

        How long it waits (:class:`~harkback.adapters.stores.postgres_connection.Bounds`)
        comes from the URL's ``connect_timeout`` and ``environ`` (default: the process's);
        ``timeout``, when given, replaces the connect bound: how long a statement waits
        for a server that does not answer before the server is checked.
        """
        problem = postgres_connection.check_url(url)
        if problem is not None:
            return Failure(problem)
        settings = os.environ if environ is None else environ
        found = postgres_connection.Bounds.of(url, settings)
        if isinstance(found, Failure):
            return Failure(found.failure())
        bounds = found.unwrap()
        if timeout is not None:
            bounds = attrs.evolve(bounds, connect=timeout)
        watchdog = Watchdog(lambda within: postgres_connection.answers(url, within),
                            patience=bounds.connect or float("inf"))
        prepared = postgres_connection.prepare(url, readonly, settings, watchdog,
                                               create=create)
        if isinstance(prepared, Failure):
            watchdog.close()
            return Failure(prepared.failure())
        connections = PerThread(postgres_connection.connector(url, readonly, settings),
                                watchdog)
        return Success(cls(url=url, readonly=readonly, connections=connections,
                           watchdog=watchdog, bounds=bounds, schema=prepared.unwrap(),
                           environ=settings))

    def close(self) -> None:
        """Finish queued work and close the connections. Closing twice is harmless, from two
        threads at once too: each close returns once the connections are closed."""
        with self._merge_lock:  # no call is queued, nor a merge started, once this is set
            self._closed = True
        # Each step is done once, whichever close comes first; every close waits for them.
        self._executor.shutdown(wait=True)
        self._connections.close()
        self._watchdog.close()

    def run(self, work: Callable[[Connection], T], *, long: bool = False
            ) -> FutureResult[T, StoreUnavailable]:
        """Run ``work`` with the store's connection on one of its threads, in a transaction
        committed when it returns and rolled back when it raises; a database error comes
        back as :class:`StoreUnavailable`. Its statements may run for ``bounds.read``
        seconds, or ``bounds.write`` when ``long`` (a write or upkeep)."""
        return FutureResult(self._call(work, long))

    async def _call(self, work: Callable[[Connection], T], long: bool
                    ) -> Result[T, StoreUnavailable]:
        # Checked and queued under close's lock: a close on another thread cannot shut the
        # executor down in between (the call raised RuntimeError, not "closed").
        with self._merge_lock:
            if self._closed:
                return Failure(StoreUnavailable(f"the store at {self.where} is closed"))
            queued = self._executor.submit(self._connections.run, work,
                                           self.bounds.write if long else self.bounds.read)
        try:
            return Success(await asyncio.wrap_future(queued))
        except (psycopg.Error, Unanswered, DamagedRecord) as error:  # damaged: a row, not a bug
            return Failure(postgres_connection.unavailable(
                self.url, error, limit=postgres_connection.WRITE_TIMEOUT_ENV if long
                else postgres_connection.READ_TIMEOUT_ENV, environ=self._environ))

    def _run_checked(self, work: Callable[[Connection], Result[T, StoreUnavailable]], *,
                     long: bool = False) -> FutureResult[T, StoreUnavailable]:
        return self.run(work, long=long).bind_result(lambda outcome: outcome)

    def _refused(self, what: str) -> FutureResult[Any, StoreUnavailable]:
        return FutureResult.from_failure(StoreUnavailable(
            f"the store at {self.where} was opened read-only; it cannot {what}"))

    # --- the SessionStore port ---------------------------------------------------------------

    def search(self, query: ports.MatchQuery
               ) -> FutureResult[tuple[records.MessageHit, ...], StoreUnavailable]:
        """Messages matching the query, best first; ``score`` is FTS5's BM25 (as SQLite's)."""
        return self.run(lambda connection: postgres_search.search(connection, query, self._memo))

    def search_titles(self, query: ports.MatchQuery
                      ) -> FutureResult[tuple[records.TitleHit, ...], StoreUnavailable]:
        """Sessions whose title or source matches, best first (BM25 over titles)."""
        return self.run(lambda connection: postgres_titles.search_titles(connection, query,
                                                                       self._memo))

    def term_stats(self, terms: Sequence[str], prefixes: Sequence[str] = ()
                   ) -> FutureResult[ports.TermStats, StoreUnavailable]:
        """Index statistics: kept totals, and counts exact up to a cap, estimated above."""
        return self.run(lambda connection: postgres_search.term_stats(connection, terms,
                                                                     self._memo, prefixes))

    def sessions(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """The sessions with these ids, in the order asked; unknown ids are left out."""
        return self.run(lambda connection: postgres_reads.sessions(connection, ids))

    def session_links(self, ids: Sequence[str]
                      ) -> FutureResult[tuple[records.SessionLink, ...], StoreUnavailable]:
        """The links of the sessions with these ids, in the order asked (unknown left out)."""
        return self.run(lambda connection: postgres_reads.session_links(connection, ids))

    def children(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """Sessions whose parent is one of ``ids``, earliest first."""
        return self.run(lambda connection: postgres_reads.children(connection, ids))

    def recent(self, query: ports.RecentQuery
               ) -> FutureResult[tuple[records.SessionOverview, ...], StoreUnavailable]:
        """Root sessions (no parent, or a parent not stored), newest first; ``parts``: the rest."""
        return self.run(lambda connection: postgres_reads.recent(connection, query))

    def ingest(self, conversations: Sequence[records.Conversation]
               ) -> FutureResult[ports.IngestReport, StoreUnavailable]:
        """Store conversations in one transaction; a session id already stored is replaced.

        Beside a batch of at least ``BULK_MESSAGES`` messages, another connection merges
        the message index's pending list (:mod:`~harkback.adapters.stores.postgres_pending`)
        until it is empty; :meth:`close` waits for that merge."""
        if self.readonly:
            return self._refused("ingest")
        batch = storable(conversations)
        if sum(len(c.messages) for c in batch) < postgres_pending.BULK_MESSAGES:
            return self.run(lambda connection: postgres_writes.write(connection, batch),
                            long=True)
        return FutureResult(self._write_merging(batch))

    def ingest_tails(self, tails: Sequence[Tail]
                     ) -> FutureResult[ports.IngestReport | None, StoreUnavailable]:
        """Store the tails of sessions that grew (:class:`~harkback.stages.tails.TailWriter`)."""
        if self.readonly:
            return self._refused("ingest")
        batch = mended_tails(tails)
        return self.run(lambda connection: postgres_writes.write_tails(connection, batch),
                        long=True)

    # --- capabilities ----------------------------------------------------------------------

    def optimize(self) -> FutureResult[None, StoreUnavailable]:
        """Refresh the planner's statistics and the visibility map (``VACUUM ANALYZE``), so
        counts and searches use the index well after large writes; a role that may not
        vacuum the tables is told so, nothing done."""
        if self.readonly:
            return self._refused("optimize")

        def work(connection: Connection) -> Result[None, StoreUnavailable]:
            # The server skips a table its role may not vacuum with a mere warning, and
            # the command said "vacuumed" having done nothing.
            barred = connection.execute(NOT_VACUUMABLE, (list(_VACUUMED),)).fetchone()
            if barred is not None and barred[0]:
                return Failure(StoreUnavailable(
                    f"{self.where}: {connection.info.user} may not vacuum {barred[0]}; run "
                    "optimize as their owner (nothing was done)"))
            connection.commit()  # VACUUM runs outside a transaction
            connection.autocommit = True
            try:
                for table in _VACUUMED:
                    connection.execute(f"VACUUM ANALYZE {table}")
            finally:
                connection.autocommit = False
            return Success(None)
        return self._run_checked(work, long=True)

    def session_remover(self) -> Self:
        """This store: it removes whole sessions (:meth:`remove_sessions`)."""
        return self

    def remove_sessions(self, ids: Sequence[str]) -> FutureResult[int, StoreUnavailable]:
        """Remove these sessions with everything kept for them, in one transaction;
        returns how many were stored."""
        if self.readonly:
            return self._refused("remove sessions")
        wanted = tuple(ids)
        return self.run(lambda connection: postgres_removal.remove(connection, wanted),
                        long=True)

    def text_rewriter(self) -> Self:
        """This store: its texts are rewritten in place (:meth:`rewrite_texts`)."""
        return self

    def rewrite_texts(self, edit: rewrite.Edit, *, dry_run: bool = False
                      ) -> FutureResult[rewrite.RewriteReport, StoreUnavailable]:
        """Apply ``edit`` to every title, message and cached summary, in place (see
        :mod:`~harkback.adapters.stores.postgres_rewrite`); a read-only store only counts."""
        if self.readonly and not dry_run:
            return self._refused("be rewritten")

        def work(connection: Connection) -> Result[rewrite.RewriteReport, StoreUnavailable]:
            try:  # Ctrl-C closes the store: no other chunk starts
                return Success(postgres_rewrite.rewrite_all(
                    connection, edit, dry_run=dry_run, stop=lambda: self._closed))
            except postgres_rewrite.Stopped:
                return Failure(StoreUnavailable(f"{self.where}: interrupted"))
        return self._run_checked(work, long=True)

    def stats(self) -> FutureResult[StoreStats, StoreUnavailable]:
        """What the database holds (``harkback stats``)."""
        return self.run(postgres_reads.stats, long=True)

    def source_names(self) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """The sources held, sorted (the sessions read, not the messages)."""
        return self.run(postgres_reads.source_names)

    def summary_cache(self) -> PostgresSummaryCache:
        """A cache in this database (a read-only store only reads it)."""
        return PostgresSummaryCache(self)

    def import_ledger(self) -> PostgresImportLedger:
        """A ledger in this database."""
        return PostgresImportLedger(self)

    def vector_store(self) -> Self:
        """This store: vectors live in the same database."""
        return self

    # --- dense vectors (the VectorStore port) -------------------------------------------------

    def unembedded(self, model: str, roles: tuple[records.Role, ...], limit: int, *,
                   sessions: Sequence[str] | None = None
                   ) -> FutureResult[tuple[records.Message, ...], StoreUnavailable]:
        """Up to ``limit`` messages of ``roles`` (of ``sessions`` only, when given) with
        non-blank content and no vector of ``model``, in stored order."""
        wanted = None if sessions is None else sorted(set(sessions))

        def work(connection: Connection) -> tuple[records.Message, ...]:
            with self._starts_lock:  # the hints are shared by the pool's threads
                return postgres_vectors.unembedded(connection, model, roles, limit,
                                                   sessions=wanted, starts=self._starts)
        return self.run(work, long=True)

    def keep_vectors(self, model: str,
                     vectors: Sequence[tuple[ports.MessageKey, ports.Vector]]
                     ) -> FutureResult[int, StoreUnavailable]:
        """Store vectors of ``model`` (replacing older ones) at unit length, in one
        transaction; returns how many messages gained one (a vector replaced is not
        counted again). Keys of messages not stored (or no longer holding the key's
        ``content``) are skipped, and vectors unlike the
        model's stored ones (or each other), or not finite, fail the whole batch."""
        if self.readonly:
            return self._refused("keep vectors")
        pairs = tuple(vectors)
        problem = vector_problem(model, [vector for _, vector in pairs])
        if problem is not None:
            return FutureResult.from_failure(StoreUnavailable(problem))
        latest = {(key.session_id, key.position): unit_vector(vector) for key, vector in pairs}
        made_from = {(key.session_id, key.position): key.content for key, _ in pairs}
        return self._run_checked(lambda connection: postgres_vectors.keep(
            connection, model, latest, made_from), long=True)

    def nearest(self, query: ports.NearestQuery
                ) -> FutureResult[tuple[records.MessageHit, ...], StoreUnavailable]:
        """Messages whose vectors of ``query.model`` are nearest, best first; ``score`` is
        the cosine similarity."""
        return self._run_checked(lambda connection: postgres_vectors.nearest(connection, query))

    def vector_count(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """How many messages have a vector of ``model``."""
        return self.run(lambda connection: postgres_vectors.vector_count(connection, model))

    def drop_vectors(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """Remove every vector of ``model`` in one transaction; how many there were."""
        if self.readonly:
            return self._refused("drop vectors")
        return self._run_checked(lambda connection: postgres_vectors.drop(connection, model),
                                 long=True)

    def holds_vectors(self, model: str) -> FutureResult[bool, StoreUnavailable]:
        """Whether any message has a vector of ``model`` (one index lookup, no count)."""
        return self.run(lambda connection: postgres_vectors.holds_vectors(connection, model))
