"""A store closed while other threads still use it, or closed twice at once, or (SQLite)
closed from its own thread or at interpreter exit: each call ends as a value (its answer,
or "closed"), never as an executor's RuntimeError, and every close returns once the file
or the connections are closed. The in-memory store holds no thread: its calls and close
take one lock.

The windows are opened on purpose through the store's executor (the SQLite store takes
it from outside; the PostgreSQL store's is swapped as it opens): its ``submit`` can start
a close on another thread and wait for it, and its ``shutdown`` says when a close reached it.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import attrs
import psycopg
import pytest
from returns.io import IOFailure, IOResult, IOSuccess
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores import postgres
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_connection import DEFAULT_BUSY_TIMEOUT, connect
from harkback.adapters.stores.write_turns import Patience
from harkback.stages.errors import StoreUnavailable
from harkback.stages.records import Session
from tests.adapters.stores.store_contract import failed, ok
from tests.conftest import conversation
from tests.support.new_stores import store_locations

T = TypeVar("T")

QUEUED_WAIT_S = 1.0
"""How long a call being queued lets a close on another thread run: long enough for one
that is not kept out to shut the executor down, which it does in microseconds."""


class SeamExecutor(ThreadPoolExecutor):
    """The store's one-worker executor, with a close started from inside one ``submit``
    (:attr:`close_during_next_submit`) and each ``shutdown`` heard (:attr:`shutdowns`)."""

    def __init__(self, max_workers: int = 1, thread_name_prefix: str = "harkback-sqlite"
                 ) -> None:
        """As many workers as the store's own (the SQLite store's one by default)."""
        super().__init__(max_workers=max_workers, thread_name_prefix=thread_name_prefix)
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


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


@attrs.frozen
class Opened:
    """A store holding session s1, on a :class:`SeamExecutor`; ``closed``: whether what it
    held outside (the file, the server's connections) is closed."""

    store: SqliteStore | PostgresStore
    executor: SeamExecutor
    closed: Callable[[], bool]


def _sqlite(path: Path) -> Opened:
    SqliteStore.open(path).unwrap().close()
    executor = SeamExecutor()
    opened = executor.submit(connect, path, False, DEFAULT_BUSY_TIMEOUT).result().unwrap()
    store = SqliteStore(path=path, readonly=False, executor=executor,
                        connection=opened.connection, patience=Patience(total_s=10.0))
    asyncio.run(ok(store.ingest([conversation("s1", ("user", "heron at the pond"))])))
    # SQLite removes the write-ahead log when the last connection to the file closes.
    return Opened(store, executor, lambda: not Path(f"{path}-wal").exists())


def _postgres(url: str, monkeypatch: pytest.MonkeyPatch) -> Opened:
    made: list[SeamExecutor] = []

    def seam(**settings: Any) -> SeamExecutor:
        made.append(SeamExecutor(**settings))
        return made[-1]
    with monkeypatch.context() as patched:
        patched.setattr(postgres, "ThreadPoolExecutor", seam)
        store = PostgresStore.open(url).unwrap()
    asyncio.run(ok(store.ingest([conversation("s1", ("user", "heron at the pond"))])))
    return Opened(store, made[0], lambda: _no_connections_but_ours(url))


def _no_connections_but_ours(url: str) -> bool:
    # The server ends a backend a moment after its client closed the connection.
    deadline = time.monotonic() + 10
    with psycopg.connect(url, autocommit=True) as ours:
        while True:
            row = ours.execute("SELECT count(*) FROM pg_stat_activity WHERE datname ="
                               " current_database() AND pid <> pg_backend_pid()").fetchone()
            if (row is not None and row[0] == 0) or time.monotonic() > deadline:
                return row is not None and row[0] == 0
            time.sleep(0.05)


@pytest.fixture(params=["sqlite", "postgres"])
def opened(request: pytest.FixtureRequest, tmp_path: Path,
           monkeypatch: pytest.MonkeyPatch) -> Opened:
    """A SQLite or a PostgreSQL store (see :class:`Opened`), closed by the test."""
    if request.param == "sqlite":
        return _sqlite(tmp_path / "h.db")
    return _postgres(request.getfixturevalue("url"), monkeypatch)


Read = IOResult[tuple[Session, ...], StoreUnavailable]


def _sessions(store: SqliteStore | PostgresStore) -> Awaitable[Read]:
    return store.sessions(["s1"]).awaitable()


def _on_own_thread(store: SqliteStore) -> Awaitable[Read]:
    # A whole search run on the store's thread, as harkback runs one (one trip there).
    return store.on_own_thread(lambda: _sessions(store))


def _answered(read: Read) -> bool:
    """s1 read, or the store's usual "closed" failure."""
    if isinstance(read, IOSuccess):
        return [s.id for s in unsafe_perform_io(read.unwrap())] == ["s1"]
    reason = unsafe_perform_io(read.failure()).reason
    return reason.startswith("the store at ") and reason.endswith(" is closed")


def _raced(opened: Opened, call: Callable[[Any], Awaitable[Read]]) -> Read:
    """``call``'s answer when a close on another thread starts as it is being queued (and
    is given time to shut the executor down); the close has ended by then."""
    opened.executor.close_during_next_submit = opened.store.close

    async def asked() -> Read:
        return await call(opened.store)
    read = asyncio.run(asked())
    assert opened.executor.closer is not None
    opened.executor.closer.join()
    return read


def test_a_call_being_queued_as_another_thread_closes_the_store_is_answered(
        opened: Opened) -> None:
    """A close on another thread between a call's closed check and its queueing: the call
    is answered (it was queued first) and the close then ends, the store closed; the
    executor, shut down in between, raised RuntimeError at the caller."""
    read = _raced(opened, _sessions)
    assert isinstance(read, IOSuccess) and _answered(read), read
    assert "closed" in asyncio.run(failed(opened.store.sessions(["s1"]))).reason
    assert opened.closed()


def test_a_search_being_queued_for_the_stores_thread_as_another_closes_it_is_answered(
        tmp_path: Path) -> None:
    """The same window for a search run on the SQLite store's thread: it is answered, or
    told "closed" when the close began before its first call, and the file is closed."""
    opened = _sqlite(tmp_path / "h.db")
    read = _raced(opened, _on_own_thread)
    assert _answered(read), read
    assert opened.closed()


def test_two_closes_at_once_from_two_threads_each_return_once_the_store_is_closed(
        opened: Opened) -> None:
    """Two threads close the store while its thread still works: neither raises and
    neither returns before the work and the close are done (the second returned at once,
    the store still open, or met a shut-down executor)."""
    store, executor = opened.store, opened.executor
    returned: list[str] = []
    raised: list[BaseException] = []
    settled = executor.heard  # told of each shutdown, and of each close that returned

    def closing(name: str) -> None:
        try:
            store.close()
        except BaseException as error:  # the test reports it below
            raised.append(error)
        with settled:
            returned.append(name)
            settled.notify_all()

    def busy(_: object) -> list[str]:
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
    assert opened.closed()


def test_a_close_on_the_stores_own_thread_is_done_after_the_search(tmp_path: Path) -> None:
    """An observer of a search run on the SQLite store's thread closes the store: the
    search's later calls fail as closed and the close is done once the search ends; it
    raised "cannot join current thread"."""
    opened = _sqlite(tmp_path / "h.db")
    store = opened.store
    assert isinstance(store, SqliteStore)

    async def search() -> Read:
        store.close()
        return await _sessions(store)

    async def asked() -> Read:
        return await store.on_own_thread(search)
    read = asyncio.run(asked())
    assert isinstance(read, IOFailure) and _answered(read), read
    store.close()  # another close waits for the one queued
    assert opened.closed()


def test_a_second_close_returns_only_once_the_first_has_closed_the_connections(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two closes of a PostgreSQL store at once: the one that comes second waits while
    the first still closes the store's connections (it found none left to close, and
    returned with them still open)."""
    closing, release = threading.Event(), threading.Event()

    class HeldClose(psycopg.Connection[tuple[Any, ...]]):
        """A connection whose close, the first time, waits for the test to let it go."""

        def close(self) -> None:
            closing.set()
            release.wait(30)
            super().close()

    store = PostgresStore.open(url).unwrap()
    with monkeypatch.context() as patched:  # the store's connections are made at first use
        patched.setattr(psycopg, "connect", HeldClose.connect)
        asyncio.run(ok(store.ingest([conversation("s1", ("user", "heron at the pond"))])))
    first = threading.Thread(target=store.close)
    first.start()
    assert closing.wait(30)
    second = threading.Thread(target=store.close)
    second.start()
    second.join(QUEUED_WAIT_S)  # the time a close finding nothing to close would need
    returned_early = not second.is_alive()
    release.set()
    first.join()
    second.join()
    assert not returned_early
    assert _no_connections_but_ours(url)


CLOSED_AT_EXIT = """
import asyncio, atexit, sys
from harkback.adapters.stores.sqlite import SqliteStore
from tests.conftest import conversation
store = SqliteStore.open(sys.argv[1]).unwrap()
asyncio.run(store.ingest([conversation("s1", ("user", "heron at the pond"))]).awaitable())
atexit.register(store.close)
"""


def test_a_sqlite_store_closed_at_interpreter_exit_closes_quietly(tmp_path: Path) -> None:
    """A program that leaves its store's close to ``atexit`` (which runs once Python has
    ended the store's thread): no traceback, the file closed. The close asked the ended
    thread for work: "cannot schedule new futures after shutdown", printed at exit."""
    path = tmp_path / "h.db"
    done = subprocess.run([sys.executable, "-c", CLOSED_AT_EXIT, str(path)],
                          capture_output=True, text=True, check=False, timeout=120,
                          cwd=Path(__file__).resolve().parents[3])
    assert (done.returncode, done.stderr) == (0, "")
    assert not Path(f"{path}-wal").exists()
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        assert [s.id for s in asyncio.run(ok(store.sessions(["s1"])))] == ["s1"]
