"""A read-only store that notices a writer: its connection is opened again when the file moves.

A read-only open of a WAL-mode file with no ``-wal`` beside it is ``immutable`` (see
:mod:`harkback.adapters.sqlite_files`): SQLite then trusts that nothing changes the file.
A search process (a long-lived MCP server, a soak's searcher) may open the store so while
no writer is around; once one starts, the immutable connection would read pages from two
different moments ("database disk image is malformed") or stale ones. An ``unlocked`` open
(a ``-wal`` whose ``-shm`` cannot be made) takes no lock, and a writer may move the file
under it the same way. So a store opened either way looks at the file before each call,
and when its ``-wal`` or ``-shm`` appeared, went or changed, or the file changed, it opens
its connection again (as plain ``mode=ro`` once the writer's ``-wal`` and ``-shm`` are
there); a corruption error on such a connection also reopens it, and the call is tried
once more.

>>> watch = ReadWatch.of(Path("/no/such.db"), watched=False)
>>> watch.moved()
False
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import attrs
from returns.result import Failure

from harkback.adapters.sqlite_files import read_only_mode, side_file
from harkback.adapters.stores.sqlite_connection import connect

State = tuple[int, int, int, int, bool]
"""The main file's size and modification time, its ``-wal``'s (-1 when absent), and
whether its ``-shm`` exists."""


def _size_and_time(path: Path) -> tuple[int, int]:
    try:
        stat = os.stat(path)
    except OSError:
        return (-1, -1)
    return (stat.st_size, stat.st_mtime_ns)


def file_state(path: Path, wal: Path, shm: Path) -> State:
    """What says the file at ``path``, whose ``-wal`` and ``-shm`` are ``wal`` and
    ``shm``, changed since last looked at (see :data:`State`)."""
    return (*_size_and_time(path), *_size_and_time(wal), shm.exists())


@attrs.define
class ReadWatch:
    """The state of a watched (immutable or unlocked) file when its connection was
    (re)opened, and where its ``-wal`` and ``-shm`` would be (found once: a symlink
    resolved before every store call cost a ``realpath``, its system calls, each time)."""

    path: Path
    watched: bool
    seen: State
    wal: Path
    shm: Path

    @classmethod
    def of(cls, path: Path, *, watched: bool) -> ReadWatch:
        """Start watching ``path`` (only an immutable or unlocked connection needs it)."""
        wal, shm = side_file(path, "-wal"), side_file(path, "-shm")
        return cls(path, watched,
                   file_state(path, wal, shm) if watched else (0, 0, 0, 0, False), wal, shm)

    @classmethod
    def opening(cls, path: Path, *, readonly: bool) -> ReadWatch:
        """Watch ``path`` as a store opening it now will connect (looked at before
        connecting: a writer appearing in between only costs a reopen)."""
        return cls.of(path, watched=readonly and path.is_file()
                      and read_only_mode(path) != "ro")

    def moved(self) -> bool:
        """Whether the connection must be opened again before the next call."""
        return self.watched and file_state(self.path, self.wal, self.shm) != self.seen


def reopened(path: Path, busy_timeout: float, *, mapped: bool = False
             ) -> tuple[sqlite3.Connection, ReadWatch]:
    """A new read-only connection to ``path`` (``mapped`` as the store's) and its watch;
    ``sqlite3.OperationalError`` when it cannot be opened (raised on the store's thread,
    reported as the call's error)."""
    watch = ReadWatch.opening(path, readonly=True)
    opened = connect(path, True, busy_timeout, mapped=mapped)
    if isinstance(opened, Failure):
        raise sqlite3.OperationalError(opened.failure().reason)  # the caller names the kind
    return opened.unwrap().connection, watch


def is_corrupt(error: sqlite3.Error) -> bool:
    """A corruption error, or a page read short: on a watched connection, most likely a
    writer moved the file (an owner's TRUNCATE checkpoint under an unlocked reader reads
    short), so the call reopens and is tried once more.

    >>> is_corrupt(sqlite3.DatabaseError("database disk image is malformed"))
    True
    >>> short = sqlite3.OperationalError("disk I/O error")
    >>> short.sqlite_errorname = "SQLITE_IOERR_SHORT_READ"
    >>> is_corrupt(short), is_corrupt(sqlite3.OperationalError("disk I/O error"))
    (True, False)
    """
    name = getattr(error, "sqlite_errorname", None) or ""
    return (name.startswith("SQLITE_CORRUPT") or name == "SQLITE_IOERR_SHORT_READ"
            or "malformed" in str(error))
