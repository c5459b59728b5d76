"""SQLite files as both the store and the Hermes reader meet them: read-only opening, ids.

Reading a file that may belong to another program must create and change nothing: a
plain ``mode=ro`` open of a WAL-mode file whose ``-wal`` file is absent *creates* its
``-wal`` and ``-shm`` files (and fails in a folder the reader may not write). With no
``-wal`` every commit is in the main file, so it is read as ``immutable`` instead. A
``-wal`` holding commits without its ``-shm`` (a copy that left the ``-shm`` out) is read
with ``mode=ro``, which makes the ``-shm``: read immutable, its commits would be missed.
Where the ``-shm`` cannot be made (a folder this user may not write) it is read
``unlocked`` (:func:`connect_read_only`): SQLite's ``unix-none`` file system, which takes
no lock, so that exclusive locking mode keeps the ``-wal``'s index in the process's
memory, no ``-shm`` needed.

>>> wal_header = b"SQLite format 3\\x00" + bytes(2) + bytes([2, 2])
>>> open_mode(wal_header, wal=False, shm=False), open_mode(wal_header, wal=True, shm=True)
('immutable', 'ro')
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

from harkback.stages.shell_words import shell_quoted

Mode = Literal["ro", "immutable", "unlocked"]
"""How a file is opened read-only: ``unlocked`` is for the store alone (see the module)."""

APPLICATION_ID = 0x6861726B
"""Stored in ``PRAGMA application_id`` ("hark"): marks a file as a harkback database."""


def open_mode(header: bytes, *, wal: bool, shm: bool) -> Mode:
    """How to open a file with this 100-byte header and these side files (see the module)."""
    in_wal_mode = len(header) >= 20 and header[18] == 2
    if not in_wal_mode or (wal and shm):
        return "ro"
    return "immutable"


def side_file(path: Path, suffix: str) -> Path:
    """Where SQLite keeps ``path``'s ``-wal``, ``-shm`` or ``-journal``: beside the file that
    a symlink names, not beside the link.

    >>> side_file(Path("/no/such/h.db"), "-wal")
    PosixPath('/no/such/h.db-wal')
    """
    return Path(f"{os.path.realpath(path)}{suffix}")


WAL_HEADER_BYTES = 32
"""A ``-wal`` file no longer than its header holds no commit."""


def holds_frames(wal: Path) -> bool:
    """Whether the ``-wal`` file ``wal`` holds a commit: one gone (its last connection
    checkpointed and removed it), or unreadable, holds none that can be read."""
    try:
        return wal.stat().st_size > WAL_HEADER_BYTES
    except OSError:
        return False


def read_only_mode(path: Path) -> Mode:
    """How the store reads ``path`` without creating or changing a file (see the module).

    >>> read_only_mode(Path("/no/such/h.db"))  # SQLite's own open reports the problem
    'ro'
    """
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        return "ro"
    wal = side_file(path, "-wal")
    mode = open_mode(header, wal=wal.exists(), shm=side_file(path, "-shm").exists())
    if mode == "immutable" and holds_frames(wal):
        # A -wal holding commits without its -shm (copied without it): an immutable read
        # would miss them. The plain read-only open reads them, making the -shm as any
        # reader of a WAL file does (the main file stays unwritten); where it cannot be
        # made, the unlocked open reads them without it. A -wal this user may not read
        # cannot be read either way: the main file alone is read, as before.
        if not os.access(wal, os.R_OK):
            return "immutable"
        return "ro" if os.access(wal.parent, os.W_OK) else "unlocked"
    return mode


def read_only_uri(path: Path, mode: Mode | None = None) -> str:
    """The ``file:`` URI that reads ``path`` in ``mode`` (default :func:`read_only_mode`):
    open it with :func:`connect_read_only`, which an ``unlocked`` one needs.

    >>> read_only_uri(Path("/no/such/h.db"))
    'file:///no/such/h.db?mode=ro'
    >>> read_only_uri(Path("/no/such/h.db"), "unlocked")
    'file:///no/such/h.db?mode=ro&vfs=unix-none'
    """
    options = {"ro": "?mode=ro", "immutable": "?mode=ro&immutable=1",
               "unlocked": "?mode=ro&vfs=unix-none"}[mode or read_only_mode(path)]
    # Path.as_uri() quotes what a hand-built URI would break on (``?``, ``#`` in a path).
    return path.resolve().as_uri() + options


def connect_read_only(path: Path, mode: Mode | None = None, *, timeout: float = 5.0
                      ) -> sqlite3.Connection:
    """A connection reading ``path`` in ``mode`` (default :func:`read_only_mode`) that
    creates and changes no file; ``sqlite3.Error`` when it cannot be opened.

    Unlocked, exclusive locking mode is set before the first read, which keeps the
    ``-wal``'s index in memory (with a lock taken, as every lock of ``unix-none``, at no
    cost). SQLite's checkpoint when such a connection closes cannot write either: the
    main file is open read-only.
    """
    mode = mode or read_only_mode(path)
    connection = sqlite3.connect(read_only_uri(path, mode), uri=True, timeout=timeout,
                                 isolation_level=None)
    if mode == "unlocked":
        connection.execute("PRAGMA locking_mode = EXCLUSIVE")
    return connection


def is_undecodable(error: sqlite3.Error) -> bool:
    """Is this :mod:`sqlite3` failing to read TEXT that is not UTF-8?

    >>> is_undecodable(sqlite3.OperationalError("Could not decode to UTF-8 column 'x' "
    ...                                         "with text 'caf?'"))
    True
    """
    return str(error).startswith("Could not decode to UTF-8")


def is_hot_journal(error: sqlite3.Error) -> bool:
    """Is this a read-only open meeting a killed writer's ``-journal`` (only a writer may
    roll it back)?

    >>> error = sqlite3.OperationalError("attempt to write a readonly database")
    >>> error.sqlite_errorname = "SQLITE_READONLY_ROLLBACK"
    >>> is_hot_journal(error), is_hot_journal(sqlite3.OperationalError("boom"))
    (True, False)
    """
    return getattr(error, "sqlite_errorname", "") == "SQLITE_READONLY_ROLLBACK"


T = TypeVar("T")


def read_replacing(connection: sqlite3.Connection, work: Callable[[sqlite3.Connection], T]) -> T:
    """``work`` run again with each byte of stored TEXT that is not UTF-8 read as U+FFFD:
    for after it failed on such text (:func:`is_undecodable`; a flipped bit in a file),
    so one damaged message neither blocks its session's reads nor the ingest that repairs
    it. Only then: the replacing reader costs about a microsecond a value.

    >>> connection = sqlite3.connect(":memory:")
    >>> read_replacing(connection, lambda c: c.execute("SELECT CAST(X'77ff41' AS TEXT)").fetchone())
    ('w\ufffdA',)
    """
    connection.text_factory = lambda data: data.decode("utf-8", "replace")
    try:
        return work(connection)
    finally:
        connection.text_factory = str


_HERMES_TABLES = frozenset({"schema_version", "sessions", "messages"})
"""Tables every era of Hermes' ``state.db`` has, as no harkback file does."""


def not_ours(connection: sqlite3.Connection, where: str) -> str:
    """The line refusing a SQLite file that is not a harkback store; a Hermes ``state.db``
    (which a Hermes user may well name as ``--db``) says how it becomes one.

    >>> connection = sqlite3.connect(":memory:")
    >>> not_ours(connection, "x.db")
    'x.db is not a harkback database'
    >>> for table in _HERMES_TABLES:
    ...     _ = connection.execute(f"CREATE TABLE {table} (id)")
    >>> not_ours(connection, "state.db")  # doctest: +NORMALIZE_WHITESPACE
    "state.db is Hermes' state.db, not a harkback database: import it into one with
     harkback import hermes state.db"
    """
    try:
        tables = {name for (name,) in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error:
        tables = set()
    if tables >= _HERMES_TABLES:
        return (f"{where} is Hermes' state.db, not a harkback database: import it into one "
                f"with harkback import hermes {shell_quoted(where)}")
    return f"{where} is not a harkback database"
