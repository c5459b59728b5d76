"""One sync writes to a store at a time: the per-store sync lock.

Two syncs of one store (two ``sync --watch``, or cron and a watch) that interleave can lose
an append: the older read stores its copy of a session after the newer one did, and the
newer marks in the ledger then say it is current. :class:`SyncLock` makes them take turns:

- a SQLite store is locked by an advisory ``flock`` on a file beside it
  (``harkback.db.sync-lock``, holding the pid of the sync that writes); it is made only by
  a sync that writes, never by a read-only command; ``:memory:`` needs none;
- a PostgreSQL store by a session-level advisory lock (:data:`PG_LOCK_CLASS` and a key made
  of the store's schema), held on a connection of its own named after the process and
  bounded as the store's are: a server that stops answering ends the sync in one line.

``import`` and ``ingest`` write the marks a sync writes: they take the same lock, a
PostgreSQL store's always, a SQLite store's once a sync has made its file
(:meth:`SyncLock.joined`). One that finds the lock taken says once on stderr ``harkback:
another sync or import is writing to STORE (pid N); the sync waits its turn`` (``the
import``, ``the ingest``) and waits (Ctrl-C stops it, status 130). ``--watch`` takes the
lock for each round, not for the whole watch, so a cron job's sync gets its turn between
two rounds; a round says its wait only once it has lasted a while
(:data:`~harkback.pipeline.watch.WAIT_SAID_S`): each ingest beside a watch was a line.

>>> lock_file("/data/h.db").name
'h.db.sync-lock'
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harkback.adapters.stores.postgres_schema import SCHEMA_KEY
from harkback.pipeline import wiring
from harkback.pipeline.command_basics import CliError
from harkback.pipeline.terminal import line_of
from harkback.stages.ports import SessionStore

if TYPE_CHECKING:  # psycopg is imported only when a PostgreSQL store is synced
    from harkback.adapters.stores.postgres_connection import Bounds
    from harkback.adapters.stores.postgres_watchdog import Watchdog

POLL_S = 0.1
"""How often a waiting sync tries the lock again."""

REOPEN_TRIES = 50
"""How many times in a row a lock file found removed or replaced once locked is opened
again: a sync's removal happens once, so a name replaced every time is something else's."""

PG_LOCK_CLASS = 0x68617262
"""The first key of the PostgreSQL advisory lock ("harb"); the second is made of the schema."""

# Keyed by the store's schema (the one it would be made in when there is none yet), not the
# search path's first: two roles with schemas of their own sync one team store in turn.
PG_KEY = f"{PG_LOCK_CLASS}, {SCHEMA_KEY}"
PG_NAME = "harkback sync pid {}"
"""The lock connection's ``application_name``: how a waiting sync learns whose turn it is."""
PG_HOLDER = (
    "SELECT a.application_name FROM pg_locks AS l JOIN pg_stat_activity AS a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
    f"AND l.classid = {PG_LOCK_CLASS} AND l.objid = ({SCHEMA_KEY}) "
    "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())")


class StoreDown(CliError):
    """The store cannot be reached for now (its server stopped, starting or not answering):
    any command ends on it, a watch waits for the store
    (:mod:`~harkback.pipeline.watch_outage`)."""

    def __init__(self, message: str, where: str, reason: str) -> None:
        """``message``: the whole line; ``where``: the store; ``reason``: why, in short."""
        super().__init__(message)
        self.where, self.reason = where, reason


def lock_file(store_path: str) -> Path:
    """The lock file of the SQLite store at ``store_path`` (its real path: one file named
    two ways has one lock)."""
    real = Path(os.path.realpath(os.path.expanduser(store_path)))
    return real.with_name(real.name + ".sync-lock")


class Turn(Protocol):
    """How one kind of store is locked: try once (the holder's pid, or None when taken)."""

    def take(self) -> str | None:
        """Take the lock without waiting: None when taken, else who holds it (a pid, or
        ``unknown``)."""
        ...

    def give_back(self) -> None:
        """Release the lock (it is held)."""
        ...

    def close(self) -> None:
        """Release what the lock holds open."""
        ...


class FileTurn:
    """The SQLite store's lock: ``flock`` on the lock file beside it."""

    def __init__(self, path: Path) -> None:
        """Lock ``path`` (made on the first :meth:`take`, with the umask's permissions)."""
        self.path = path
        self._fd: int | None = None
        self._writable = False

    def take(self) -> str | None:
        """Lock the file, or read the pid its holder wrote."""
        try:
            fd = self._opened()
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            reopened = 0
            while not self._same_file(fd):
                # Removed (with a store a failed first sync made) or replaced after it was
                # opened: a lock on it keeps out no one who opens the name now.
                self.close()
                if reopened == REOPEN_TRIES:
                    raise CliError(f"cannot lock {self.path} for writing: it was removed or "
                                   f"replaced each of {REOPEN_TRIES + 1} times it was locked "
                                   "(does another program recreate it?)")
                reopened += 1
                fd = self._opened()
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return _pid_in(self._fd) if self._fd is not None else "unknown"
        except OSError as error:
            raise CliError(f"cannot lock {self.path} for writing: "
                           f"{error.strerror or error}") from None
        if self._writable:  # another user's lock file (a shared store) is only locked
            with contextlib.suppress(OSError):  # the pid only informs: a full disk is no bar
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return None

    def _opened(self) -> int:
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
                self._writable = True
            except PermissionError:  # flock needs no write access: a group's shared store
                self._fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
                self._writable = False
        return self._fd

    def _same_file(self, fd: int) -> bool:
        try:
            named = os.stat(self.path)
        except FileNotFoundError:
            return False
        held = os.fstat(fd)
        return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

    def remove(self) -> None:
        """Remove the lock file, if no one holds it: removed while held, a sync that opens
        the name afresh would take a second lock beside the first (:meth:`take` checks that
        the file it locked is still the one named)."""
        with contextlib.suppress(OSError):
            if self.take() is None:
                os.unlink(self.path)
        self.close()

    def give_back(self) -> None:
        """Unlock the file (it stays, for the next sync)."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file (which unlocks it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def connect_bound(url: str, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The store's default ``connect_timeout`` unless the URL or ``$PGCONNECT_TIMEOUT`` sets
    one: a server not answering must not keep a sync waiting, unstoppable, for the lock.

    >>> connect_bound("postgresql:///h?connect_timeout=3", {})
    {}
    >>> list(connect_bound("postgresql:///h", {}))
    ['connect_timeout']
    """
    from psycopg import conninfo

    from harkback.adapters.stores.postgres_connection import CONNECT_TIMEOUT_S

    env = os.environ if environ is None else environ
    if ("connect_timeout" in conninfo.conninfo_to_dict(url)
            or env.get("PGCONNECT_TIMEOUT", "").strip()):
        return {}
    return {"connect_timeout": CONNECT_TIMEOUT_S}


def _pid_in(fd: int) -> str:
    """The pid the lock's holder wrote (``unknown`` when it has not yet)."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return text if text.isdigit() else "unknown"


class PostgresTurn:
    """The PostgreSQL store's lock: an advisory lock on a connection of its own, bounded as
    the store's are (:class:`~harkback.adapters.stores.postgres_connection.Bounds`): its
    connect by ``connect_timeout``, each statement by the store's read bound and by a
    :class:`~harkback.adapters.stores.postgres_watchdog.Watchdog` that cuts it when the
    server stops answering (keepalives and a server-side ``statement_timeout`` see nothing
    wrong with a frozen server). A release the server does not answer closes the
    connection instead: the lock dies with its session."""

    def __init__(self, url: str, where: str, bounds: Bounds | None = None) -> None:
        """Lock the store at ``url`` (``where``: the URL as messages show it, its password
        masked), connected on the first :meth:`take`; ``bounds``: the store's (else the
        URL's and the environment's)."""
        from harkback.adapters.stores import postgres_connection as pg

        self.url = url
        self.where = where
        if bounds is None:  # the store has checked the environment: a fault is not ours
            found = pg.Bounds.of(url, os.environ).value_or(None)
            bounds = found or pg.Bounds(pg.CONNECT_TIMEOUT_S, pg.READ_TIMEOUT_S, None)
        self.bounds: Bounds = bounds
        self._connection: Any = None
        self._watchdog: Watchdog | None = None
        self._held = False
        """Taken and not given back: taken again, the server would count it twice."""

    def take(self) -> str | None:
        """Take the advisory lock, or name the process of the connection holding it."""
        import psycopg
        from psycopg import conninfo

        from harkback.adapters.stores.postgres_connection import first_line, passing
        from harkback.adapters.stores.postgres_watchdog import Unanswered

        if self._held:
            return None
        for attempt in (1, 2):
            kept = self._connection is not None
            try:
                if self._connection is None:
                    self._connection = psycopg.connect(conninfo.make_conninfo(
                        self.url, application_name=PG_NAME.format(os.getpid()),
                        **connect_bound(self.url)), autocommit=True)
                if self._asked(f"SELECT pg_try_advisory_lock({PG_KEY})")[0]:
                    self._held = True
                    return None
                row = self._asked(PG_HOLDER)
                break
            except (psycopg.Error, Unanswered) as error:
                self._drop()
                # A watch keeps the connection between rounds: one a restart or an idle
                # timeout closed is opened again, once (one the server left unanswered,
                # not: the watchdog's reason says more than a new connect timing out).
                if not (kept and attempt == 1) or isinstance(error, Unanswered):
                    message = (f"cannot lock the store at {self.where} for writing: "
                               f"{first_line(error)}")
                    if passing(error):  # a watch waits for the server to be back
                        raise StoreDown(message, self.where, first_line(error)) from None
                    raise CliError(message) from None
        pid = (str(row[0]) if row is not None else "").removeprefix(PG_NAME.format(""))
        return pid if pid.isdigit() else "unknown"

    def _asked(self, statement: str) -> Any:
        """The first row of ``statement``, run under the watchdog (see the class)."""
        from harkback.adapters.stores.postgres_connection import answers
        from harkback.adapters.stores.postgres_watchdog import Watchdog

        if self._watchdog is None:
            self._watchdog = Watchdog(lambda within: answers(self.url, within),
                                      patience=self.bounds.connect or float("inf"))
        with self._watchdog.watching(self._connection, self.bounds.read):
            return self._connection.execute(statement).fetchone()

    def give_back(self) -> None:
        """Release the advisory lock (a connection lost has released it already); when the
        server does not answer, by closing the connection."""
        import psycopg

        from harkback.adapters.stores.postgres_watchdog import Unanswered

        if self._connection is not None and self._held:
            self._held = False
            try:
                self._asked(f"SELECT pg_advisory_unlock({PG_KEY})")
            except (psycopg.Error, Unanswered):
                self._drop()

    def _drop(self) -> None:
        """Close the connection (which releases the lock)."""
        self._held = False
        if self._connection is not None:
            with contextlib.suppress(Exception):  # closing a broken connection
                self._connection.close()
            self._connection = None

    def close(self) -> None:
        """Close the connection (which releases the lock) and stop its watchdog."""
        self._drop()
        if self._watchdog is not None:
            self._watchdog.close()
            self._watchdog = None


class SyncLock:
    """The sync lock of one store, taken for a sync (or one round of a watch) at a time.

    >>> async def twice():
    ...     lock = SyncLock(None, ":memory:")
    ...     async with lock.held():
    ...         pass
    ...     return lock.turn
    >>> asyncio.run(twice()) is None
    True
    """

    def __init__(self, turn: Turn | None, where: str, *, command: str = "sync",
                 say: Callable[[str], None] | None = None, poll_s: float = POLL_S) -> None:
        """Take turns through ``turn`` (None: no lock needed) on the store ``where``, for
        ``command`` (named in the line a wait prints)."""
        self.turn = turn
        self.where = where
        self.command = command
        self.say = say or (lambda text: print(line_of(text), file=sys.stderr, flush=True))
        self.poll_s = poll_s

    @classmethod
    def of(cls, target: str, store: SessionStore, **options: Any) -> SyncLock:
        """The lock of ``store``, opened from the ``--db`` value ``target`` (none for
        ``:memory:``)."""
        kind = wiring.store_kind(target)
        if kind == "sqlite":
            return cls(FileTurn(lock_file(str(getattr(store, "path", target)))), target,
                       **options)
        url, where = getattr(store, "url", None), getattr(store, "where", None)
        if kind == "postgresql" and isinstance(url, str) and isinstance(where, str):
            return cls(PostgresTurn(url, where, getattr(store, "bounds", None)), where,
                       **options)
        return cls(None, target, **options)

    @classmethod
    def joined(cls, target: str, store: SessionStore, **options: Any) -> SyncLock:
        """The lock of ``store`` for ``import`` and ``ingest``: they take turns with the syncs
        of a PostgreSQL store (its lock leaves nothing behind) and of a SQLite store that has
        a sync lock, but make no lock file beside one never synced."""
        lock = cls.of(target, store, **options)
        if isinstance(lock.turn, FileTurn) and not lock.turn.path.exists():
            lock.close()
            return cls(None, target, **options)
        return lock

    @contextlib.asynccontextmanager
    async def held(self, *, quiet_s: float = 0.0) -> AsyncIterator[None]:
        """Hold the lock in the block, waiting while another holds it, and saying so once
        the wait has lasted ``quiet_s``."""
        turn = self.turn
        if turn is None:
            yield
            return
        said, since = False, time.monotonic()
        while (holder := await asyncio.to_thread(turn.take)) is not None:
            if not said and time.monotonic() - since >= quiet_s:
                self.say(f"harkback: another sync or import is writing to {self.where} "
                         f"(pid {holder}); the {self.command} waits its turn")
                said = True
            await asyncio.sleep(self.poll_s)
        try:
            yield
        finally:
            await asyncio.to_thread(turn.give_back)

    def close(self) -> None:
        """Release what the lock holds open (its file or connection)."""
        if self.turn is not None:
            self.turn.close()

    def discard(self) -> None:
        """Remove the lock file made with a store that is removed again, unless another sync
        holds it (nothing to remove for PostgreSQL)."""
        if isinstance(self.turn, FileTurn):
            self.turn.remove()
