"""A SQLite store closed while other threads still use it, or closed twice at once, or
closed from its own thread: each call ends as a value (its answer, or "closed"), never as
an executor's RuntimeError, and every close returns once the file is closed.

The windows are opened on purpose through the store's executor (the one seam the store
takes from outside): its ``submit`` can start a close on another thread and wait for it,
and its ``shutdown`` says when a close reached it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from returns.io import IOFailure, IOResult, IOSuccess
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_connection import DEFAULT_BUSY_TIMEOUT, connect
from harkback.adapters.stores.write_turns import Patience
from harkback.stages.errors import StoreUnavailable
from harkback.stages.records import Session
from tests.adapters.stores.store_contract import failed, ok
from tests.conftest import conversation

T = TypeVar("T")

QUEUED_WAIT_S = 1.0
"""How long a call being queued lets a close on another thread run: long enough for one
that is not kept out to shut the executor down, which it does in microseconds."""


class SeamExecutor(ThreadPoolExecutor):
    """The store's one-worker executor, with a close started from inside one ``submit``
    (:attr:`close_during_next_submit`) and each ``shutdown`` heard (:attr:`shutdowns`)."""

    def __init__(self) -> None:
        """One worker, as the store's own."""
        super().__init__(max_workers=1, thread_name_prefix="harkback-sqlite")
        self.close_during_next_submit: Callable[[], None] | None = None
        self.closer: threading.Thread | None = None
        self.shut = threading.Event()
        self.shutdowns = 0
        self.heard = threading.Condition()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Queue ``fn``; the first time after :attr:`close_during_next_submit` is set, start
        that close first and give it time to shut the executor down."""
        close, self.close_during_next_submit = self.close_during_next_submit, None
        if close is not None:
            self.closer = threading.Thread(target=close)
            self.closer.start()
            self.shut.wait(QUEUED_WAIT_S)
        return super().submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Refuse new work, say so, then wait as asked."""
        super().shutdown(wait=False, cancel_futures=cancel_futures)
        with self.heard:
            self.shutdowns += 1
            self.heard.notify_all()
        self.shut.set()
        if wait:
            super().shutdown(wait=True, cancel_futures=cancel_futures)


def _store(path: Path) -> tuple[SqliteStore, SeamExecutor]:
    """A writable store at ``path`` on a :class:`SeamExecutor`, holding session s1."""
    SqliteStore.open(path).unwrap().close()
    executor = SeamExecutor()
    opened = executor.submit(connect, path, False, DEFAULT_BUSY_TIMEOUT).result().unwrap()
    store = SqliteStore(path=path, readonly=False, executor=executor,
                        connection=opened.connection, patience=Patience(total_s=10.0))
    asyncio.run(ok(store.ingest([conversation("s1", ("user", "heron at the pond"))])))
    return store, executor


def _file_closed(path: Path) -> bool:
    """SQLite removes the write-ahead log when the last connection to the file closes."""
    return not Path(f"{path}-wal").exists()


Read = IOResult[tuple[Session, ...], StoreUnavailable]


def _sessions(store: SqliteStore) -> Awaitable[Read]:
    return store.sessions(["s1"]).awaitable()


def _on_own_thread(store: SqliteStore) -> Awaitable[Read]:
    # A whole search run on the store's thread, as harkback runs one (one trip there).
    return store.on_own_thread(lambda: _sessions(store))


def _answered(read: Read, path: Path) -> bool:
    """s1 read, or the store's usual "closed" failure."""
    if isinstance(read, IOSuccess):
        return [s.id for s in unsafe_perform_io(read.unwrap())] == ["s1"]
    return isinstance(read, IOFailure) and (
        unsafe_perform_io(read.failure()).reason == f"the store at {path} is closed")


@pytest.mark.parametrize("call", [_sessions, _on_own_thread], ids=["call", "own-thread"])
def test_a_call_being_queued_as_another_thread_closes_the_store_is_answered(
        tmp_path: Path, call: Callable[[SqliteStore], Awaitable[Read]]) -> None:
    """A close on another thread between a call's closed check and its queueing: the call
    is answered (or, run on the store's thread after the close began, told "closed") and
    the close then ends with the file closed; the executor, shut down in between, raised
    RuntimeError at the caller."""
    path = tmp_path / "h.db"
    store, executor = _store(path)
    executor.close_during_next_submit = store.close

    async def asked() -> Read:
        return await call(store)
    read = asyncio.run(asked())
    assert executor.closer is not None
    executor.closer.join()
    assert _answered(read, path), read
    assert "closed" in asyncio.run(failed(store.sessions(["s1"]))).reason
    assert _file_closed(path)


def test_two_closes_at_once_from_two_threads_each_return_once_the_file_is_closed(
        tmp_path: Path) -> None:
    """Two threads close the store while its thread still works: neither raises and
    neither returns before the work and the close are done (the second returned at once,
    the file still open, or met a shut-down executor)."""
    path = tmp_path / "h.db"
    store, executor = _store(path)
    returned: list[str] = []
    raised: list[BaseException] = []
    settled = threading.Condition()

    def closing(name: str) -> None:
        try:
            store.close()
        except BaseException as error:  # the test reports it below
            raised.append(error)
        with settled:
            returned.append(name)
            settled.notify_all()

    def busy(_: sqlite3.Connection) -> list[str]:
        # Both closes have either returned or reached the executor's shutdown (where a
        # close waits for this work); which had returned is kept.
        for closer in closers:
            closer.start()
        with settled:
            settled.wait_for(lambda: executor.shutdowns + len(returned) >= 2, timeout=30)
            return list(returned)

    closers = [threading.Thread(target=closing, args=(name,)) for name in ("a", "b")]
    early = asyncio.run(ok(store.run(busy)))
    for closer in closers:
        closer.join()
    assert early == []
    assert raised == []
    assert _file_closed(path)


def test_a_close_on_the_stores_own_thread_is_done_after_the_search(tmp_path: Path) -> None:
    """An observer of a search run on the store's thread closes the store: the search's
    later calls fail as closed and the close is done once the search ends; it raised
    "cannot join current thread"."""
    path = tmp_path / "h.db"
    store, _ = _store(path)

    async def search() -> Read:
        store.close()
        return await _sessions(store)

    async def asked() -> Read:
        return await store.on_own_thread(search)
    read = asyncio.run(asked())
    assert isinstance(read, IOFailure) and _answered(read, path), read
    store.close()  # another close waits for the one queued
    assert _file_closed(path)
