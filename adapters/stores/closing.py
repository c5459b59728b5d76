"""What every store that holds a resource shares: ``with`` and ``async with`` blocks that
close it.

>>> class Door(Closing):
...     shut = False
...     def close(self) -> None:
...         self.shut = True
>>> with Door() as door:
...     pass
>>> door.shut
True
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar

from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore

T = TypeVar("T")


class Closing:
    """A store usable in a ``with`` or ``async with`` block that calls :meth:`close`."""

    def close(self) -> None:
        """Release what the store holds; closing twice is harmless."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        """Use the store in a ``with`` block that closes it."""
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Close the store."""
        self.close()

    async def __aenter__(self) -> Self:
        """Use the store in an ``async with`` block that closes it."""
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        """Close the store without blocking the loop on queued work."""
        await asyncio.to_thread(self.close)


class ClosingStore(SessionStore, Protocol):
    """A :class:`~harkback.stages.ports.SessionStore` that is also a ``with`` (and
    ``async with``) block closing it: every store ``open_store`` opens."""

    def __enter__(self) -> Self:
        """The store itself."""
        ...

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Close the store."""
        ...

    async def __aenter__(self) -> Self:
        """The store itself."""
        ...

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        """Close the store."""
        ...


def memory_closed() -> StoreUnavailable:
    """What every call to a closed in-memory store (its cache and ledger too) gives, as a
    closed SQLite or PostgreSQL store says it is closed."""
    return StoreUnavailable("the in-memory store is closed")


def never_closed() -> bool:
    """The closed check of an in-memory cache or ledger that belongs to no store."""
    return False


def in_turn(lock: AbstractContextManager[Any], closed: Callable[[], bool],
            work: Callable[[], T]) -> FutureResult[T, StoreUnavailable]:
    """``work()``, done now while ``lock`` is held (an in-memory cache's or ledger's: its
    store's, so that one call at a time reads or changes what the store holds), or the
    failure of a store ``closed``.

    >>> import threading
    >>> asyncio.run(in_turn(threading.RLock(), never_closed, lambda: 2).awaitable())
    <IOResult: <Success: 2>>
    """
    with lock:
        if closed():
            return FutureResult.from_failure(memory_closed())
        return FutureResult.from_value(work())
