"""How long the PostgreSQL store waits for its server: a watchdog over the statements in
flight (the time each has waited for the server; what this process does between
statements does not count).

Nothing else bounds that wait. A stopped server's kernel still accepts connections and
acknowledges what is sent, so TCP keepalives and ``tcp_user_timeout`` see nothing wrong
(and a Unix socket has neither), and a cancel request goes unanswered too. So a statement
still waiting after ``patience`` seconds makes the watchdog ask whether the server answers
at all: ``answers(patience)``, a new connection that must be accepted within that time.
When it is not (the server is frozen, or the network drops the packets), the waiting
connections are cut (their sockets shut down) and their statements fail at once, as
:class:`Unanswered`. A server that answers may take its time: a bulk write or a
``VACUUM`` is left alone, unless its work has a ``limit``; past it, the server is asked
to cancel the statement, and the connection is cut if even that goes unanswered.

>>> import socket
>>> ours, theirs = socket.socketpair()
>>> class Held:  # what the watchdog uses of a psycopg connection
...     class pgconn:
...         socket = ours.fileno()
...         transaction_status = ACTIVE
...     def cancel_safe(self, *, timeout: float = 30.0) -> None:
...         pass
>>> watchdog = Watchdog(answers=lambda timeout: False, patience=0.1)
>>> with watchdog.watching(Held(), limit=None):  # a statement the server never answers
...     ours.recv(1)  # returns at once, empty, once the watchdog has cut the connection
b''
>>> watchdog.close()
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from time import monotonic
from typing import Protocol

import attrs
import psycopg
from psycopg.pq import TransactionStatus

ACTIVE = TransactionStatus.ACTIVE
"""libpq's state of a connection whose statement is sent and not yet answered."""


class _PgConn(Protocol):
    @property
    def socket(self) -> int: ...

    @property
    def transaction_status(self) -> int: ...


class Watched(Protocol):
    """What the watchdog uses of a connection (a :class:`psycopg.Connection` has it)."""

    @property
    def pgconn(self) -> _PgConn:
        """libpq's connection, for its socket."""
        ...

    def cancel_safe(self, *, timeout: float = 30.0) -> None:
        """Ask the server to cancel the statement running."""


class Unanswered(Exception):
    """A statement the watchdog gave up on; the message says why."""


class Overran(Unanswered):
    """A statement the watchdog cancelled: it ran past its limit (the server answers)."""


@attrs.define
class _Watch:
    connection: Watched
    limit: float | None
    waiting_since: float | None = None
    """When the watchdog first saw the connection waiting for its server, this time."""
    why: str | None = None
    cancelled: float | None = None

    def waited(self, now: float) -> float:
        """How long the connection has been waiting for its server, as last seen at ``now``:
        what this process does between statements (scoring rows, say) does not count."""
        if self.connection.pgconn.transaction_status != ACTIVE:
            self.waiting_since = None
            return 0.0
        if self.waiting_since is None:
            self.waiting_since = now
        return now - self.waiting_since

    def given_up(self) -> Unanswered:
        """Why the watchdog gave up on this statement, as the error to raise."""
        if self.cancelled is not None:
            return Overran(self.why)
        return Unanswered(self.why)


class Watchdog:
    """Bounds the statements run inside :meth:`watching` (see the module)."""

    def __init__(self, answers: Callable[[float], bool], patience: float) -> None:
        """``answers(timeout)`` says whether the server accepts a new connection in time."""
        self._answers = answers
        self.patience = patience
        self._tick = min(1.0, patience / 4)
        self._watched: list[_Watch] = []
        self._changed = threading.Condition()
        self._next_check = 0.0
        self._closed = False
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def watching(self, connection: Watched, limit: float | None) -> Iterator[None]:
        """Run the block's statements on ``connection`` under watch: a psycopg error of a
        statement given up on (cut, or cancelled past ``limit`` seconds) comes out as
        :class:`Unanswered`."""
        watch = _Watch(connection=connection, limit=limit)
        with self._changed:
            # Not woken: it looks every tick, and nothing is due before `patience`.
            self._watched.append(watch)
            if self._thread is None:
                # Kept once started: one refused (ulimit -v) is tried again by the next
                # statement, and close() does not join a thread that never ran.
                thread = threading.Thread(target=self._run, name="harkback-pg-watchdog",
                                          daemon=True)
                thread.start()
                self._thread = thread
        try:
            yield
        except psycopg.Error as error:
            if watch.why is not None:
                raise watch.given_up() from error
            raise
        finally:
            with self._changed:
                self._watched.remove(watch)

    def close(self) -> None:
        """Stop the watchdog's thread (statements still running are no longer watched)."""
        with self._changed:
            self._closed = True
            self._changed.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._changed:
                # Looked at before waiting too: a close() may come before the first wait.
                if not self._closed:
                    self._changed.wait(self._tick)
                if self._closed:
                    return
                now = monotonic()
                waited = {id(w): w.waited(now) for w in self._watched}
                self._end_overdue(now, waited)
                silent = [w for w in self._watched
                          if w.why is None and waited[id(w)] >= self.patience]
                if not silent or now < self._next_check:
                    continue
            # Outside the lock: the check takes up to `patience`, and statements end meanwhile.
            alive = self._answers(self.patience)
            with self._changed:
                self._next_check = monotonic() + self.patience
                if alive:
                    continue
                why = (f"no answer for {self.patience:g} s, nor to a new connection within "
                       f"{self.patience:g} s (is the server stopped, or out of reach?)")
                for watch in silent:
                    if watch in self._watched and watch.why is None:
                        watch.why = why
                        _cut(watch.connection)

    def _end_overdue(self, now: float, waited: dict[int, float]) -> None:
        """Cancel the statements past their limit; cut those whose cancel went unheard."""
        for watch in self._watched:
            if watch.cancelled is not None and now - watch.cancelled >= self.patience:
                watch.cancelled = float("inf")
                _cut(watch.connection)
            elif (watch.why is None and watch.limit is not None
                  and waited[id(watch)] >= watch.limit):
                # The server answers, so the time went on the statement's work or on a
                # lock another connection holds: the reader is told to look at both.
                watch.why = (f"a statement took longer than {watch.limit:g} s (its work, or "
                             f"a wait for a lock another connection holds) and was cancelled")
                watch.cancelled = now
                # Under the lock, so the cancel cannot reach the connection's next work.
                with contextlib.suppress(psycopg.Error):
                    watch.connection.cancel_safe(timeout=min(self.patience, 5.0))


def _cut(connection: Watched) -> None:
    """Shut the connection's socket down: libpq's wait for it returns, with an error.

    The socket is shut on a duplicate of its descriptor: closing libpq's own would let the
    number be reused under it."""
    with (contextlib.suppress(OSError, psycopg.Error),
          socket.socket(fileno=os.dup(connection.pgconn.socket)) as duplicate):
        duplicate.shutdown(socket.SHUT_RDWR)
