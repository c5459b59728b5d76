"""The PostgreSQL store's connections: one for each of the store's threads, made when the
thread first needs it, checked before it is used after being idle or when the server has
said something since (one that died meanwhile, as a restarted server's do, is replaced),
every wait bounded by the store's watchdog.

The store runs its statements on a few threads, each holding one connection at a time, so a
shared pool would only add its own waits: a pool that cannot connect keeps retrying in the
background while the statement waits out the pool's timeout. Here a refused connection
fails the statement that asked for it, as fast as the refusal comes.
"""

from __future__ import annotations

import contextlib
import select
import threading
from collections.abc import Callable
from time import monotonic
from typing import Any, TypeVar

import psycopg

from harkback.adapters.stores.postgres_watchdog import Watchdog

T = TypeVar("T")

CHECK_AFTER_IDLE_S = 5.0
"""A connection idle this long is checked (one round trip) before it is used again: a
server restarted meanwhile has closed it."""
Connection = psycopg.Connection[tuple[Any, ...]]


class PerThread:
    """Runs work in a transaction on the calling thread's connection (see the module)."""

    def __init__(self, connect: Callable[[], Connection], watchdog: Watchdog) -> None:
        """``connect`` opens a new connection (bounded by its ``connect_timeout``)."""
        self._connect = connect
        self._watchdog = watchdog
        self._local = threading.local()
        self._made: list[Connection] = []
        self._lock = threading.Lock()

    def run(self, work: Callable[[Connection], T], limit: float | None) -> T:
        """``work`` in a transaction, committed when it returns and rolled back when it
        raises; its statements are given up on past ``limit`` seconds (None: only when the
        server stops answering)."""
        connection = self._ready()
        with self._watchdog.watching(connection, limit):
            try:
                result = work(connection)
            except BaseException:
                if not connection.closed:
                    with contextlib.suppress(psycopg.Error):
                        connection.rollback()
                raise
            connection.commit()
        self._local.used = monotonic()
        return result

    def close(self) -> None:
        """Close every connection made (once no work runs on them); a close from another
        thread meanwhile returns once they are closed."""
        # Closed under the lock: a second close found the list already taken and returned
        # while the first still closed them. No thread makes a connection by now.
        with self._lock:
            made, self._made = self._made, []
            for connection in made:
                with contextlib.suppress(psycopg.Error):
                    connection.close()

    def _ready(self) -> Connection:
        held: Connection | None = getattr(self._local, "connection", None)
        if held is not None and not held.closed:
            if (monotonic() - getattr(self._local, "used", 0.0) < CHECK_AFTER_IDLE_S
                    and not _spoke(held)):
                # Answered a moment ago: a check would cost a round trip on every call,
                # a search's dozen of them over a network.
                return held
            try:
                with self._watchdog.watching(held, None):
                    _check(held)
                return held
            except psycopg.OperationalError:
                held.close()  # it died while idle: a new one takes its place
        made = self._connect()
        with self._lock:
            self._made = [c for c in self._made if not c.closed] + [made]
        self._local.connection = made
        return made


def _spoke(connection: Connection) -> bool:
    """Whether the server sent something to this idle connection (a look at its socket, no
    round trip): a server shutting down or a ``pg_terminate_backend`` sends its reason and
    closes, so the next statement would fail on a server that answers again."""
    try:
        socket = connection.pgconn.socket
        if not hasattr(select, "poll"):  # Windows
            return bool(select.select([socket], [], [], 0)[0])
        said = select.poll()  # no limit on the descriptor's number, unlike select()
        said.register(socket, select.POLLIN)
        return bool(said.poll(0))
    except (OSError, ValueError, psycopg.Error):
        return True  # no socket to look at: the check says what became of it


def _check(connection: Connection) -> None:
    """One round trip (an empty statement, outside any transaction)."""
    connection.autocommit = True
    try:
        connection.execute("")
    finally:
        with contextlib.suppress(psycopg.Error):
            connection.autocommit = False
