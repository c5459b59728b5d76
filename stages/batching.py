"""Write batches bounded by count, by bytes and by time, so no writer holds the lock long.

An ingest or import stores its sessions in batches, one store transaction each, and while
one runs every other writer waits (see :mod:`~harkback.adapters.stores.write_turns`); a
``redact`` (SQLite or PostgreSQL) writes its rewritten sessions the same way. A
batch is cut when it reaches :attr:`Budget.count` sessions or :attr:`Budget.size` bytes of
input, whichever comes first; and the byte budget follows the time the last write took:
halved when a write took longer than :attr:`Budget.target_s`, grown back (up to its
ceiling) when writes are quick. A 100 MB import thus commits in steps of about a
second, and a one-session ingest started meanwhile gets its turn between them.

>>> budget = Budget(count=3, size=10, floor=1)
>>> [len(b) for b in batched([(4, "a"), (4, "b"), (4, "c"), (1, "d"), (1, "e")], budget)]
[3, 2]
>>> budget.took(5.0); budget.size
5
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

import attrs

T = TypeVar("T")

BATCH = 500
"""Sessions in one write, at most."""

BATCH_BYTES = 8 * 1024 * 1024
"""Bytes of input in one write, at most (the ceiling of the adaptive budget)."""

TARGET_S = 1.0
"""How long one write should hold the lock, roughly."""

SMALLEST_BYTES = 64 * 1024
"""The byte budget never shrinks below this (a batch always holds one session anyway)."""


@attrs.define
class Budget:
    """How much the next batch may hold; :meth:`took` adapts it to the last write's time."""

    count: int = BATCH
    size: int = BATCH_BYTES
    target_s: float = TARGET_S
    floor: int = SMALLEST_BYTES
    ceiling: int = attrs.field(default=0)

    def __attrs_post_init__(self) -> None:
        """The byte budget grows back at most to where it started."""
        self.ceiling = self.ceiling or self.size

    def took(self, seconds: float) -> None:
        """Adapt the byte budget to a write that held the lock ``seconds``.

        >>> budget = Budget(size=1 << 20, target_s=1.0)
        >>> budget.took(3.0); budget.size
        524288
        >>> budget.took(0.1); budget.size
        1048576
        """
        if seconds > self.target_s:
            self.size = max(self.floor, self.size // 2)
        elif seconds < self.target_s / 4:
            self.size = min(self.ceiling, self.size * 2)


def batched(items: Iterable[tuple[int, T]], budget: Budget) -> Iterator[list[T]]:
    """``items`` (each with its size in bytes) in lists cut by ``budget``, read lazily.

    The budget is read as each batch fills, so a change made by :meth:`Budget.took`
    between batches shapes the next one. A single item larger than the budget is a
    batch of its own.
    """
    batch: list[T] = []
    size = 0
    for item_size, item in items:
        batch.append(item)
        size += item_size
        if len(batch) >= budget.count or size >= budget.size:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
