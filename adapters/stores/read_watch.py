"""A read-only store that notices a writer: its connection is opened again when the file moves.

A read-only open of a WAL-mode file with no ``-wal`` beside it is ``immutable`` (see
:mod:`harkback.adapters.sqlite_files`): SQLite then trusts that nothing changes the file.
A search process (a long-lived MCP server, a soak's searcher) may open the store so while
no writer is around; once one starts, the immutable connection would read pages from two
different moments ("database disk image is malformed") or stale ones. So a store opened
immutable looks at the file before each call, and when a ``-wal`` appeared or the file
changed, it opens its connection again (as plain ``mode=ro`` while the writer's WAL is
there); a corruption error on an immutable connection also reopens it, and the call is
tried once more.

>>> watch = ReadWatch.of(Path("/no/such.db"), immutable=False)
>>> watch.moved()
False
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import attrs
from returns.result import Failure

from harkback.adapters.sqlite_files import read_only_uri, side_file
from harkback.adapters.stores.sqlite_connection import connect

State = tuple[bool, int, int]
"""Whether a ``-wal`` exists, and the main file's size and modification time."""


def file_state(path: Path, wal: Path) -> State:
    """What says the file at ``path``, whose ``-wal`` is ``wal``, changed since last looked
    at (see :data:`State`)."""
    try:
        stat = os.stat(path)
    except OSError:
        return (False, -1, -1)
    return (wal.exists(), stat.st_size, stat.st_mtime_ns)


@attrs.define
class ReadWatch:
    """The state of an immutably opened file when its connection was (re)opened, and
    where its ``-wal`` would be (found once: a symlink resolved before every store call
    cost a ``realpath``, its system calls, each time)."""

    path: Path
    immutable: bool
    seen: State
    wal: Path

    @classmethod
    def of(cls, path: Path, *, immutable: bool) -> ReadWatch:
        """Start watching ``path`` (only an immutable connection needs it)."""
        wal = side_file(path, "-wal")
        return cls(path, immutable, file_state(path, wal) if immutable else (False, 0, 0),
                   wal)

    @classmethod
    def opening(cls, path: Path, *, readonly: bool) -> ReadWatch:
        """Watch ``path`` as a store opening it now will connect (looked at before
        connecting: a writer appearing in between only costs a reopen)."""
        return cls.of(path, immutable=readonly and path.is_file()
                      and "immutable=1" in read_only_uri(path))

    def moved(self) -> bool:
        """Whether the connection must be opened again before the next call."""
        return self.immutable and file_state(self.path, self.wal) != self.seen


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
    """A corruption error: on an immutable connection, most likely a writer moved the file.

    >>> is_corrupt(sqlite3.DatabaseError("database disk image is malformed"))
    True
    """
    name = getattr(error, "sqlite_errorname", None) or ""
    return name.startswith("SQLITE_CORRUPT") or "malformed" in str(error)
