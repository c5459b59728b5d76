"""Writers that wait their turn: a write that finds the file locked tries again, for a while.

In WAL mode readers go on while one connection writes, but writers take turns. SQLite's
busy timeout makes one statement wait for the lock; a writer that still finds it taken
(another process's long import) rolls its transaction back, pauses for a growing, jittered
back-off (so waiting writers do not retry in step) and tries the whole write again, until
its patience runs out. Only a busy file is retried: any other error ends the write at once.

>>> calls = []
>>> def work(connection):
...     calls.append(1)
...     if len(calls) < 3:
...         raise busy_error()
...     return "done"
>>> patiently(work, Patience(total_s=5.0), sleep=lambda _: None)(None)
'done'
>>> len(calls)
3
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import attrs

T = TypeVar("T")

TURNS = 12
"""Unless told otherwise, a writer waits this many busy timeouts for its turn (a minute at
the default busy timeout of 5 s)."""


@attrs.frozen
class Patience:
    """How long a writer waits for its turn in all, and how it paces its tries."""

    total_s: float
    """Seconds from the first try after which a busy file fails the write."""
    first_pause_s: float = 0.02
    longest_pause_s: float = 1.0

    def pause(self, attempt: int, draw: float) -> float:
        """The pause after failed try ``attempt`` (0-based), ``draw`` in [0, 1): a random
        share of a ceiling that doubles with each try ("full jitter").

        >>> Patience(10.0).pause(0, 0.5), Patience(10.0).pause(20, 0.5)
        (0.01, 0.5)
        """
        ceiling: float = min(self.longest_pause_s, self.first_pause_s * 2.0 ** min(attempt, 30))
        return ceiling * draw


def busy_error() -> sqlite3.OperationalError:
    """The error SQLite raises when another connection holds the lock (for tests and docs)."""
    error = sqlite3.OperationalError("database is locked")
    error.sqlite_errorname = "SQLITE_BUSY"
    return error


def is_busy(error: sqlite3.Error) -> bool:
    """Whether ``error`` says another connection holds the lock.

    >>> is_busy(busy_error()), is_busy(sqlite3.OperationalError("disk I/O error"))
    (True, False)
    """
    name = getattr(error, "sqlite_errorname", None) or ""
    return name.startswith("SQLITE_BUSY")


def patiently(work: Callable[[sqlite3.Connection], T], patience: Patience, *,
              clock: Callable[[], float] = time.monotonic,
              sleep: Callable[[float], None] = time.sleep,
              draw: Callable[[], float] = random.random,
              stop: Callable[[], bool] = lambda: False
              ) -> Callable[[sqlite3.Connection], T]:
    """``work`` tried again while the file is busy, until ``patience`` runs out or
    ``stop()`` says the writer is no longer wanted (its store is closing: Ctrl-C).

    ``work`` must be one whole transaction that rolls itself back when it fails (every
    write of the store is), so trying it again is safe.
    """
    def run(connection: sqlite3.Connection) -> T:
        deadline = clock() + patience.total_s
        attempt = 0
        while True:
            try:
                return work(connection)
            except sqlite3.OperationalError as error:
                if not is_busy(error):
                    raise
                left = deadline - clock()
                if left <= 0 or stop():
                    raise
                # The last pause is cut to the deadline: the writer uses all its patience.
                sleep(min(patience.pause(attempt, draw()), left))
                attempt += 1
    return run


STOP_STEPS = 10_000
"""How many SQLite instructions run between two looks at ``stop()`` (well under a
millisecond)."""


@contextmanager
def stoppable(connection: sqlite3.Connection, stop: Callable[[], bool]) -> Iterator[None]:
    """Within the block, a statement in flight ends once ``stop()`` says the store is
    closing (Ctrl-C, SIGTERM): SQLite's ``interrupted`` error, its transaction rolled back.
    Only :func:`patiently`'s waits looked at it, so a whole-file check went on to its end.

    >>> connection = sqlite3.connect(":memory:")
    >>> with stoppable(connection, lambda: True):
    ...     connection.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 "
    ...                        "FROM n LIMIT 10000000) SELECT count(*) FROM n").fetchone()
    Traceback (most recent call last):
    sqlite3.OperationalError: interrupted
    """
    connection.set_progress_handler(lambda: int(stop()), STOP_STEPS)
    try:
        yield
    finally:
        connection.set_progress_handler(None, 0)
