"""The SQLite session store: one database file, messages indexed by FTS5.

Every statement runs on one worker thread that owns the connection, so the event loop never
blocks on SQLite and the connection is never shared between threads. Failures of SQLite (a
locked, missing, corrupt or foreign file) come back as :class:`StoreUnavailable` values.
The work itself lives beside it, over the statements of :mod:`~harkback.adapters.stores.sql`:
opening and preparing the file in :mod:`~harkback.adapters.stores.sqlite_connection`,
searching in :mod:`~harkback.adapters.stores.sqlite_search` (titles in
:mod:`~harkback.adapters.stores.sqlite_titles`), vectors in
:mod:`~harkback.adapters.stores.sqlite_vector_port`, ingests in
:mod:`~harkback.adapters.stores.sqlite_writes`.

>>> import asyncio, tempfile, pathlib
>>> from harkback.stages.records import Conversation, Message, Session
>>> async def demo(path):
...     with SqliteStore.open(path).unwrap() as store:
...         chat = Conversation(Session(id="s1"),
...                             (Message(session_id="s1", position=0, role="user", content="hi"),))
...         return await store.ingest([chat])
>>> with tempfile.TemporaryDirectory() as tmp:
...     asyncio.run(demo(pathlib.Path(tmp) / "h.db"))
<IOResult: <Success: IngestReport(added=1, updated=0, messages=1, replaced=frozenset())>>
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Self, TypeVar

from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters.sqlite_files import is_undecodable, read_replacing
from harkback.adapters.stores import sqlite_search, sqlite_stats, sqlite_titles, sqlite_vectors
from harkback.adapters.stores.closing import Closing
from harkback.adapters.stores.damaged_rows import session_reader
from harkback.adapters.stores.import_ledger import SqliteImportLedger
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.own_thread import OwnThread
from harkback.adapters.stores.read_watch import ReadWatch, is_corrupt, reopened
from harkback.adapters.stores.sql import fulltext, links, rows
from harkback.adapters.stores.sql.schema import SCHEMA_VERSION
from harkback.adapters.stores.sql.vectors import StartKey
from harkback.adapters.stores.sqlite_adopt import no_store_at
from harkback.adapters.stores.sqlite_checkpoints import Checkpoints
from harkback.adapters.stores.sqlite_connection import DEFAULT_BUSY_TIMEOUT, connect, fetch
from harkback.adapters.stores.sqlite_errors import (
    check_whole,
    damage_behind,
    folder_not_made,
    unavailable,
)
from harkback.adapters.stores.sqlite_merge import merged
from harkback.adapters.stores.sqlite_messages import SqliteMessages
from harkback.adapters.stores.sqlite_removal import remove
from harkback.adapters.stores.sqlite_rewrite import rewrite_all
from harkback.adapters.stores.sqlite_transaction import one_snapshot, versioned
from harkback.adapters.stores.sqlite_vector_port import SqliteVectorPort
from harkback.adapters.stores.sqlite_voicing import readable, readable_stats
from harkback.adapters.stores.sqlite_writes import merge_pending, write, write_tails
from harkback.adapters.stores.summary_cache import SqliteSummaryCache
from harkback.adapters.stores.write_turns import TURNS, Patience, patiently, stoppable
from harkback.adapters.thread_room import one_thread_pool
from harkback.stages import ports, records, rewrite
from harkback.stages.errors import StoreUnavailable
from harkback.stages.stats import StoreStats
from harkback.stages.storable import storable
from harkback.stages.tails import Tail, mended_tails

T = TypeVar("T")
R = TypeVar("R", bound=ports.IngestReport | None)


class SqliteStore(Closing, SqliteMessages, SqliteVectorPort):
    """A :class:`~harkback.stages.ports.SessionStore` and :class:`~harkback.stages.ports.
    VectorStore` (and :class:`~harkback.stages.tails.TailWriter`) kept in a SQLite file.
    Build it with :meth:`open`; close it with :meth:`close` or a ``with`` block."""

    def __init__(self, *, path: Path, readonly: bool, executor: ThreadPoolExecutor,
                 connection: sqlite3.Connection, patience: Patience,
                 watch: ReadWatch | None = None, busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
                 schema: Migrated | None = None, mapped: bool = False) -> None:
        """Wrap an open connection; use :meth:`open` instead."""
        self.path = path
        self.readonly = readonly
        self.mapped = mapped
        self.patience = patience
        self._watch = watch or ReadWatch.of(path, watched=False)
        self._busy_timeout = busy_timeout
        self._executor = executor
        self._own = OwnThread.of(executor)
        self._connection = connection
        self._checkpoints = Checkpoints(path)  # used on the connection's thread
        # Touched only on the connection's thread, like the connection itself.
        self._matrices: dict[str, sqlite_vectors.Matrix] = {}
        self._starts: dict[StartKey, sqlite_vectors.Start] = {}
        self._writes = 0
        self._written = 0  # messages ingested; BULK_ROWS or more: merge when closing
        self._reach: dict[sqlite_search.FilterKey, float] = {}
        self.schema = schema or Migrated(SCHEMA_VERSION, SCHEMA_VERSION, latest=SCHEMA_VERSION)
        """The file's schema version when opened, and now (see :meth:`open`)."""

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, readonly: bool = False,
             busy_timeout: float = DEFAULT_BUSY_TIMEOUT, create: bool = False,
             write_patience: float | None = None, mapped: bool = False,
             stop: Callable[[], bool] | None = None) -> Result[SqliteStore, StoreUnavailable]:
        """Open the database at ``path``; blocks briefly, so call it before or off the loop.

        Writable mode creates the file, its folders and the schema, and migrates a file of
        an older schema version (:attr:`schema` says from which). Read-only mode never
        creates or changes anything, reads an older file as it is, and fails when the file
        is missing or not harkback's. A newer harkback's file fails either way. An empty
        file is adopted only when named .db, .sqlite or .sqlite3, or with ``create``; a
        FIFO, a device or another program's file is refused, unwritten. A statement waits
        ``busy_timeout`` seconds for a lock; a write still finding it locked tries again for
        ``write_patience`` seconds in all (12 busy timeouts, a minute, by default). A ``mapped``
        read-only store reads the file through a memory map: quicker for a process searching
        once (its page cache starts empty), but every page it read counts in its resident
        size. ``stop``: a migration waiting for the lock gives up once it says so (Ctrl-C).
        """
        location = Path(os.path.expanduser(path))
        absent = no_store_at(location, readonly=readonly)
        if absent is not None:
            return Failure(absent)
        if not readonly:
            try:
                location.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                return Failure(folder_not_made(location, error))
        executor = one_thread_pool("harkback-sqlite")
        watch = ReadWatch.opening(location, readonly=readonly)
        mapped = mapped and readonly
        opened = executor.submit(connect, location, readonly, busy_timeout,
                                 create=create, mapped=mapped, stop=stop).result()
        if isinstance(opened, Failure):
            executor.shutdown()
            return Failure(opened.failure())
        patience = Patience(total_s=write_patience if write_patience is not None
                            else TURNS * busy_timeout)
        return Success(cls(path=location, readonly=readonly, executor=executor,
                           connection=opened.unwrap().connection, patience=patience,
                           watch=watch, busy_timeout=busy_timeout,
                           schema=opened.unwrap().schema, mapped=mapped))

    def close(self) -> None:
        """Finish queued work and close the connection. Closing twice is harmless, from two
        threads at once too: each close returns once the file is closed. Called on the
        store's own thread (by an observer of a search run there), it only queues the close,
        which runs once that search ends."""
        # Searches after a bulk load read fewer segments; a failure (the file locked by
        # another writer) leaves the merging to later writes, as FTS5 would. Decided on the
        # thread, after the writes still queued there have counted their messages. The
        # checkpoints close after queued writes (which may start one), before the writer's
        # connection closes.
        queued = self._own.close(self._checkpoints.close, self._merge_if_bulk,
                                 self._close_connection)
        # All of it queued before any wait: a Ctrl-C while queued writes finish still
        # leaves the thread to merge and close the connection after them. The thread
        # cannot wait for itself.
        here = self._own.here()
        self._executor.shutdown(wait=not here)
        if queued is None or here:
            return
        # The connection is gone either way; a failure to close leaves nothing to undo.
        for step in queued:
            with contextlib.suppress(sqlite3.Error):
                step.result()

    def _close_connection(self) -> None:
        self._matrices.clear()
        # Read on the thread: a queued reopen may still replace the connection.
        self._connection.close()

    @property
    def _closed(self) -> bool:
        return self._own.closed

    def _merge_if_bulk(self) -> None:
        if self._written >= fulltext.BULK_ROWS:
            merge_pending(self._connection)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> FutureResult[T, StoreUnavailable]:
        return FutureResult(self._call(work))

    async def _call(self, work: Callable[[sqlite3.Connection], T]
                    ) -> Result[T, StoreUnavailable]:
        if self._closed:
            return self._refused_closed()
        try:
            if self._own.here():  # in a search run on this thread: no trip to make
                return Success(self._watched(work))
            queued = self._own.submit(self._watched, work)
            if queued is None:  # closed on another thread since the check above
                return self._refused_closed()
            return Success(await asyncio.wrap_future(queued))
        except sqlite3.Error as error:
            return Failure(unavailable(self.path, error))

    def _refused_closed(self) -> Result[T, StoreUnavailable]:
        return Failure(StoreUnavailable(f"the store at {self.path} is closed"))

    async def on_own_thread(self, make: Callable[[], Awaitable[T]]) -> T:
        """Await ``make()`` in an event loop on the connection's thread, a whole search's store
        calls in place (:mod:`~harkback.adapters.stores.own_thread`), read-only in one snapshot."""
        snapshot = one_snapshot(lambda: self._connection, make)
        return await self._own.run(snapshot if self.readonly else make)

    def _watched(self, work: Callable[[sqlite3.Connection], T]) -> T:
        # On the connection's thread. See read_watch: a watched (immutable or unlocked)
        # connection is opened again once a writer moved the file, and a corruption error
        # then is tried again.
        if self._watch.moved():
            self._reopen()
        try:
            return work(self._connection)
        except sqlite3.IntegrityError as error:
            raise damage_behind(self._connection, error) from error
        except sqlite3.DatabaseError as error:
            if is_undecodable(error):
                return read_replacing(self._connection, work)
            if not (self._watch.watched and is_corrupt(error)):
                raise
            self._reopen()
            return work(self._connection)

    def _reopen(self) -> None:
        connection, watch = reopened(self.path, self._busy_timeout, mapped=self.mapped)
        with contextlib.suppress(sqlite3.Error):
            self._connection.close()
        self._connection, self._watch = connection, watch
        self._matrices.clear()

    def run(self, work: Callable[[sqlite3.Connection], T], *, write: bool = False
            ) -> FutureResult[T, StoreUnavailable]:
        """Run ``work`` on the store's connection thread (for adapters sharing the file).

        A ``sqlite3.Error`` raised by ``work`` comes back as :class:`StoreUnavailable`.
        A ``write`` (one whole transaction that rolls itself back on failure) is tried
        again while another connection holds the lock, as the store's own writes are.
        """
        def counted(connection: sqlite3.Connection) -> T:
            self._writes += 1  # it may write: forget what unembedded() knew
            return work(connection)
        return self._run(self._patiently(counted) if write else counted)

    def _patiently(self, work: Callable[[sqlite3.Connection], T]
                   ) -> Callable[[sqlite3.Connection], T]:
        return patiently(work, self.patience, stop=lambda: self._closed)  # Ctrl-C: no wait

    def search(self, query: ports.MatchQuery
               ) -> FutureResult[tuple[records.MessageHit, ...], StoreUnavailable]:
        """Messages matching the query, best first; ``score`` is ``-bm25``. Bounded by
        ``query.max_scored`` (see the port); every statement in one trip to the thread."""
        return self._run(lambda connection: sqlite_search.search_hits(
            connection, readable(connection, query), self._reach))

    def search_titles(self, query: ports.MatchQuery
                      ) -> FutureResult[tuple[records.TitleHit, ...], StoreUnavailable]:
        """Sessions whose title or source matches, best first; ``score`` is ``-bm25`` over
        the title index. A file opened read-only from before that index existed has none."""
        return self._run(lambda connection: sqlite_titles.search(
            connection, readable(connection, query)))

    def term_stats(self, terms: Sequence[str], prefixes: Sequence[str] = ()
                   ) -> FutureResult[ports.TermStats, StoreUnavailable]:
        """Index statistics from FTS5's own records: its totals row and its vocabulary."""
        return self._run(lambda db: readable_stats(db, terms, sqlite_search.term_stats, prefixes))

    def sessions(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """The sessions with these ids, in the order asked; unknown ids are left out."""
        return self._run(fetch(rows.sessions_by_id(ids), session_reader(rows.session_from_row)))

    def session_links(self, ids: Sequence[str]
                      ) -> FutureResult[tuple[records.SessionLink, ...], StoreUnavailable]:
        """The links of the sessions with these ids, in the order asked (unknown left out)."""
        return self._run(fetch(links.links_by_id(ids), session_reader(links.link_from_row)))

    def children(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """Sessions whose parent is one of ``ids``, earliest first."""
        return self._run(fetch(rows.children_of(ids), session_reader(rows.session_from_row)))

    def recent(self, query: ports.RecentQuery
               ) -> FutureResult[tuple[records.SessionOverview, ...], StoreUnavailable]:
        """Root sessions (no parent, or a parent not stored), newest first; ``parts``: the rest."""
        return self._run(versioned(fetch(rows.recent(query),
                                              session_reader(rows.overview_from_row))))

    def ingest(self, conversations: Sequence[records.Conversation]
               ) -> FutureResult[ports.IngestReport, StoreUnavailable]:
        """Store conversations in one transaction; a session id already stored is replaced."""
        batch = storable(conversations)
        large = sum(len(c.messages) for c in batch) >= fulltext.BULK_ROWS
        return self._write(lambda connection: write(connection, batch), large=large)

    def ingest_tails(self, tails: Sequence[Tail]
                     ) -> FutureResult[ports.IngestReport | None, StoreUnavailable]:
        """Store the tails of sessions that grew (:class:`~harkback.stages.tails.TailWriter`)."""
        batch = mended_tails(tails)
        return self._write(lambda connection: write_tails(connection, batch))

    def _write(self, work: Callable[[sqlite3.Connection], R], *, large: bool = False
               ) -> FutureResult[R, StoreUnavailable]:
        if self.readonly:
            return self._refused("cannot ingest")

        def counted(connection: sqlite3.Connection) -> R:
            # A large write's checkpoint runs on another thread (sqlite_checkpoints).
            with self._checkpoints.large_write(connection) if large else contextlib.nullcontext():
                report = work(connection)
            self._written += report.messages if report is not None else 0
            return report
        return self.run(counted, write=True)

    def _refused(self, why: str) -> FutureResult[T, StoreUnavailable]:
        return FutureResult.from_failure(StoreUnavailable(
            f"the store at {self.path} was opened read-only; it {why}"))

    def merge_index(self) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """Merge each full-text index of several segments into one, in one transaction;
        what was merged (:func:`~harkback.adapters.stores.sqlite_merge.merged`).

        Every write adds a segment; FTS5 merges some as it goes, but a store built by many imports
        keeps several, and a search reads each one. On the pooled LongMemEval store (110,000
        messages) the merge took 2 s and made searches 6-7 % faster; a million messages took
        17 s. It rewrites the whole index: run it after large imports, not after each one.
        Searches find the same rows before and after.
        """
        if self.readonly:
            return self._refused("cannot merge its index")

        def work(connection: sqlite3.Connection) -> tuple[str, ...]:
            # Ctrl-C ends the check or the merge in flight: each reads the whole file or index.
            with stoppable(connection, lambda: self._closed):
                # A damaged file would be "merged" (the merge reads only the index): said
                # first, once, not again at each try while another writer holds the lock.
                check_whole(connection)
                return self._patiently(merged)(connection)
        return self._run(work)

    # --- capabilities (the SessionStore port) ----------------------------------------------

    def summary_cache(self) -> SqliteSummaryCache:
        """A cache in this file (read-only stores only read it)."""
        return SqliteSummaryCache(self)

    def import_ledger(self) -> SqliteImportLedger:
        """A ledger in this file, on this store's connection thread."""
        return SqliteImportLedger(self)

    def session_remover(self) -> Self:
        """This store: it removes whole sessions (:meth:`remove_sessions`)."""
        return self

    def remove_sessions(self, ids: Sequence[str]) -> FutureResult[int, StoreUnavailable]:
        """Remove these sessions with everything kept for them, in one transaction;
        returns how many were stored (see :mod:`sqlite_removal`)."""
        if self.readonly:
            return self._refused("cannot remove sessions")
        wanted = tuple(dict.fromkeys(ids))
        return self.run(lambda connection: remove(connection, wanted), write=True)

    def text_rewriter(self) -> Self:
        """This store: its texts are rewritten in place (:meth:`rewrite_texts`)."""
        return self

    def rewrite_texts(self, edit: rewrite.Edit, *, dry_run: bool = False
                      ) -> FutureResult[rewrite.RewriteReport, StoreUnavailable]:
        """Apply ``edit`` to every title, message and cached summary, in place (see
        :mod:`~harkback.adapters.stores.sqlite_rewrite`); a read-only store only counts."""
        if self.readonly and not dry_run:
            return self._refused("cannot be rewritten")
        def work(connection: sqlite3.Connection) -> rewrite.RewriteReport:
            # Its last step empties the log (old texts stay nowhere): no checkpoint of a
            # large write may be copying it then, or that step would find it busy.
            self._checkpoints.wait()
            # Ctrl-C closes the store: its waits for the lock stop, as _patiently's do.
            return rewrite_all(connection, edit, dry_run=dry_run, patience=self.patience,
                               stop=lambda: self._closed)
        return self.run(work)

    def stats(self) -> FutureResult[StoreStats, StoreUnavailable]:
        """What the file holds (:func:`~harkback.adapters.stores.sqlite_stats.read_stats`)."""
        return self._run(lambda connection: sqlite_stats.read_stats(connection, self.path))

    def source_names(self) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """The sources held, sorted (the sessions read, not the messages)."""
        return self._run(sqlite_stats.source_names)

    def optimize(self) -> FutureResult[tuple[str, ...] | None, StoreUnavailable]:
        """:meth:`merge_index`."""
        return self.merge_index()
