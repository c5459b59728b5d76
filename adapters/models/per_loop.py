"""One object per running event loop: how a model client is shared between loops.

``asyncio`` clients, limiters and semaphores belong to the loop that made them, so a model
adapter that one agent's loop and synchronous callers (each running its own loop) share
keeps one of each per loop, made on first use there and released there.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerLoop(Generic[T]):
    """One ``T`` per running event loop: made on first use in that loop, released in it.

    A loop that ended without :meth:`release` cannot close its ``T`` any more; it is let
    go on the next use.

    >>> held = PerLoop(object, close=lambda _made: asyncio.sleep(0))
    >>> async def use() -> tuple[bool, int, int]:
    ...     same = held.get() is held.get()
    ...     count = held.count
    ...     await held.release()
    ...     return same, count, held.count
    >>> asyncio.run(use())
    (True, 1, 0)
    """

    def __init__(self, make: Callable[[], T], *, close: Callable[[T], Awaitable[None]]) -> None:
        """Make a loop's ``T`` with ``make`` (called in that loop), close it with ``close``."""
        self._make = make
        self._close = close
        self._made: dict[asyncio.AbstractEventLoop, T] = {}
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """How many running (not closed) event loops hold one."""
        with self._lock:
            return sum(1 for loop in self._made if not loop.is_closed())

    def get(self) -> T:
        """The running loop's ``T``, made now if it has none yet."""
        loop = asyncio.get_running_loop()
        with self._lock:
            # A loop that ended without release cannot close its T any more; letting go
            # of it is all that is left (and lets the loop be collected).
            for closed in [other for other in self._made if other.is_closed()]:
                del self._made[closed]
            if loop not in self._made:
                self._made[loop] = self._make()
            return self._made[loop]

    async def release(self) -> None:
        """Close the running loop's ``T`` (if it made one)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if loop not in self._made:
                return
            made = self._made.pop(loop)
        await self._close(made)
