"""The PostgreSQL store's side of the pending-list merge: a large write starts it on
another of the store's connections, and it stops once no large write is under way (how
it merges: :mod:`~harkback.adapters.stores.postgres_pending`).

:class:`PendingListMerge` is that part of
:class:`~harkback.adapters.stores.postgres.PostgresStore`; the store holds the state it
reads (the lock, the merge's state, the count of large writes under way), and its
``close`` waits for the merge.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal, TypeVar

import psycopg
from returns.result import Result

from harkback.adapters.stores import postgres_connection, postgres_pending, postgres_writes
from harkback.adapters.stores.postgres_per_thread import PerThread
from harkback.stages import ports, records
from harkback.stages.errors import StoreUnavailable

T = TypeVar("T")

Connection = psycopg.Connection[tuple[Any, ...]]


class PendingListMerge:
    """Large writes of the PostgreSQL store, with the index's pending list merged beside."""

    bounds: postgres_connection.Bounds
    _connections: PerThread
    _executor: ThreadPoolExecutor
    _closed: bool
    _merge_lock: threading.Lock
    _merge: Literal["running", "refused"] | None
    _large_writes: int

    async def _call(self, work: Callable[[Connection], T], long: bool
                    ) -> Result[T, StoreUnavailable]:
        raise NotImplementedError

    async def _write_merging(self, batch: Sequence[records.Conversation]
                             ) -> Result[ports.IngestReport, StoreUnavailable]:
        """Write ``batch`` with the index's pending list merged on another of the store's
        connections meanwhile (:mod:`~harkback.adapters.stores.postgres_pending`)."""
        with self._merge_lock:
            self._large_writes += 1
            if self._merge is None and not self._closed:
                self._merge = "running"
                # On the store's threads (its connections, its bounds); the write waits for
                # no merge, and ``close`` waits for the merge (the executor's shutdown).
                self._executor.submit(self._start_merge)
        try:
            return await self._call(
                lambda connection: postgres_writes.write(connection, batch), long=True)
        finally:
            with self._merge_lock:
                self._large_writes -= 1

    def _start_merge(self) -> None:
        started = False

        def merge(connection: Connection) -> None:
            nonlocal started
            started = True
            self._merge_pending(connection)
        try:
            self._connections.run(merge, self.bounds.write)
        except BaseException:
            if not started:
                # No connection to merge on (the server refused one): the next large
                # write tries again, rather than finding a merge "running" for good.
                with self._merge_lock:
                    self._merge = None
            raise

    def _merge_pending(self, connection: Connection) -> None:
        try:
            merged = postgres_pending.merge_until(connection, self._merge_ended)
        except BaseException:
            # Upkeep, not the write's outcome: the writers merge, as they can anyway.
            with self._merge_lock:
                self._merge = None
            raise
        if merged is None:
            with self._merge_lock:
                self._merge = "refused"  # not the index's owner: never asked again

    def _merge_ended(self) -> bool:
        """Whether the merge may stop (no large write under way, or the store closing);
        if so it has stopped."""
        with self._merge_lock:
            # Closing: ``close`` waits for the writes themselves. A write's count drops on
            # the event loop, which a close called there holds until the merge has ended.
            if self._large_writes and not self._closed:
                return False
            self._merge = None
            return True
