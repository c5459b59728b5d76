"""A store's own thread: where its connection lives and, when asked, a whole search runs.

A search makes six to eight store calls. Each is a trip from the caller's event loop to the
connection's thread and back (two thread wake-ups, a self-pipe write, the records made on
one core and read on the other), ~0.1 ms of CPU a trip on this project's two-core machine
once the cache traffic is counted. Run on the connection's thread, in an event loop of its
own, the search makes its store calls in place: one trip in all, and the caller's loop
still never blocks, neither on SQLite nor on the ranking.

>>> from concurrent.futures import ThreadPoolExecutor
>>> async def where(own: OwnThread) -> bool:
...     return await own.run(_here_of(own))
>>> with ThreadPoolExecutor(max_workers=1) as pool:
...     own = OwnThread.of(pool)
...     asyncio.run(where(own)), own.here()
(True, False)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

_RUNNING = threading.local()  # .here: this thread is some store's, running a search now


def inside_a_store_search() -> bool:
    """Is the caller code that a store's own thread runs as part of a search (a stage or
    the observer)? A synchronous call to that store from there waits for its own thread,
    which waits for it: a search_sync in an observer hung, and the store with it, for good.

    >>> inside_a_store_search()
    False
    """
    return bool(getattr(_RUNNING, "here", False))


class OwnThread:
    """The one worker thread of ``executor``, and an event loop there, made at first use."""

    def __init__(self, executor: ThreadPoolExecutor, ident: int) -> None:
        """Use :meth:`of`."""
        self._executor = executor
        self.ident = ident
        self._loop: asyncio.AbstractEventLoop | None = None  # touched on the thread only
        # Held while ``closed`` is read then work queued, or set then the last work queued:
        # a close on another thread cannot come between a call's check and its queueing
        # (the executor, shut down meanwhile, raised RuntimeError at the caller).
        self._gate = threading.Lock()
        self.closed = False

    @classmethod
    def of(cls, executor: ThreadPoolExecutor) -> OwnThread:
        """The thread of a one-worker ``executor`` (started now if it was not)."""
        return cls(executor, executor.submit(threading.get_ident).result())

    def here(self) -> bool:
        """Is the caller on this thread?"""
        return threading.get_ident() == self.ident

    async def run(self, make: Callable[[], Awaitable[T]]) -> T:
        """Await ``make()`` in this thread's event loop (in place when already there, or
        once closed: the store's calls then fail as a closed store's do).

        Whatever else was queued for the thread waits until it finishes.
        """
        queued = None if self.here() else self.submit(self._run_here, make)
        if queued is None:
            return await make()
        return await asyncio.wrap_future(queued)

    def submit(self, work: Callable[..., T], *args: Any) -> Future[T] | None:
        """Queue ``work(*args)`` for the thread, or None once closed (even by another
        thread at this moment).

        >>> with ThreadPoolExecutor(max_workers=1) as pool:
        ...     own = OwnThread.of(pool)
        ...     first = own.submit(sum, (1, 2)).result()
        ...     _ = own.close()
        ...     first, own.submit(sum, (1, 2))
        (3, None)
        """
        with self._gate:
            if self.closed:
                return None
            return self._executor.submit(work, *args)

    def _run_here(self, make: Callable[[], Awaitable[T]]) -> T:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()

        async def main() -> T:
            return await make()
        _RUNNING.here = True
        try:
            return self._loop.run_until_complete(main())
        finally:
            _RUNNING.here = False

    def close(self, *last: Callable[[], T]) -> tuple[Future[T], ...] | None:
        """Queue nothing more here but ``last``, run in order after the work already queued,
        then close the thread's event loop; None if it was closed before (by any thread),
        nothing queued once the interpreter is exiting (it has ended the thread).

        >>> with ThreadPoolExecutor(max_workers=1) as pool:
        ...     own = OwnThread.of(pool)
        ...     [step.result() for step in own.close(lambda: "last")], own.close()
        (['last'], None)
        """
        with self._gate:
            if self.closed:
                return None
            self.closed = True
            try:
                queued = tuple(self._executor.submit(step) for step in last)
                self._executor.submit(self._close_loop)
            except RuntimeError:
                # A close left to ``atexit``: Python has ended the executor's threads before
                # (their queued work done); what they held goes with the process.
                return ()
        return queued

    def _close_loop(self) -> None:
        if self._loop is not None:
            self._loop.close()
            self._loop = None


def _here_of(own: OwnThread) -> Callable[[], Awaitable[bool]]:
    async def here() -> bool:
        return own.here()
    return here
