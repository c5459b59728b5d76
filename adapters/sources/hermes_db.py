"""Strictly read-only access to a Hermes Agent ``state.db`` (any schema era).

The file belongs to Hermes, which may be writing it while harkback reads, and whose
folder may be read-only. So the reader never writes, creates or migrates anything:

* It opens a ``file:`` URI built with ``Path.resolve().as_uri()`` (a hand-built one
  breaks on paths holding ``?`` or ``#``), always with ``mode=ro``, a busy timeout,
  and ``PRAGMA query_only``; a transient ``disk I/O error`` (a writer checkpointing
  while the reader opens) is retried three times with a short backoff.
* ``mode=ro`` alone is not enough for a WAL-mode file whose ``-wal`` file is absent
  (Hermes is not running): SQLite then *creates* ``state.db-wal`` and
  ``state.db-shm`` beside it and leaves them behind, or fails when the folder is
  read-only. In that case nothing waits in a WAL, the main file holds every commit,
  and the reader adds ``immutable=1``: no locks, no side files. Since immutable
  reads cannot see a writer that starts meanwhile, the reader checks afterwards that
  the main file's size and mtime did not change (a checkpoint would change them) and
  the import reports a failure to be retried otherwise. A ``-wal`` without its
  ``-shm`` (a crashed writer, folder read-only) is read the same way, with a note
  that the un-checkpointed commits were not seen; with both present (Hermes running)
  the ordinary ``mode=ro`` reader joins the WAL, as Hermes' own readers do.
* Rollback-journal files (Hermes' fallback for network file systems) are read with
  ``mode=ro``, which creates nothing.

Every column but a handful is optional: the reader introspects ``PRAGMA table_info``.

>>> open_mode(b"SQLite format 3\\x00" + bytes(2) + bytes([2, 2]), wal=False, shm=False)
'immutable'
>>> open_mode(b"SQLite format 3\\x00" + bytes(2) + bytes([2, 2]), wal=True, shm=True)
'ro'
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.file_kinds import special_kind
from harkback.adapters.sources.encodings import escaped
from harkback.adapters.sqlite_files import (
    APPLICATION_ID,
    Mode,
    holds_frames,
    is_hot_journal,
    is_undecodable,
    open_mode,
    side_file,
)
from harkback.stages.errors import SourceUnreadable, StoreUnavailable

T = TypeVar("T")

MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 5.0
TRIES = 3
BACKOFF_S = 0.05

SESSION_CORE = frozenset({"id"})
MESSAGE_CORE = frozenset({"id", "session_id", "role"})


def is_transient(error: sqlite3.Error) -> bool:
    """Is this the transient I/O error a reader meets while a writer checkpoints?

    >>> is_transient(sqlite3.OperationalError("disk I/O error"))
    True
    """
    name = getattr(error, "sqlite_errorname", None) or ""
    return name.startswith("SQLITE_IOERR") or "disk I/O error" in str(error)


def retrying(work: Callable[[], T], *, tries: int = TRIES, backoff_s: float = BACKOFF_S,
             sleep: Callable[[float], None] = time.sleep) -> T:
    """Run ``work``, again after a short pause when it fails with a transient I/O error.

    >>> calls = []
    >>> def flaky():
    ...     calls.append(1)
    ...     if len(calls) < 3:
    ...         raise sqlite3.OperationalError("disk I/O error")
    ...     return "read"
    >>> retrying(flaky, sleep=lambda _: None), len(calls)
    ('read', 3)
    """
    for attempt in range(1, tries + 1):
        try:
            return work()
        except sqlite3.OperationalError as error:
            if attempt >= tries or not is_transient(error):
                raise
            sleep(backoff_s * attempt)
    raise AssertionError("unreachable")  # the loop returns or raises


@attrs.frozen
class FileStamp:
    """Size and modification time of a file, to notice that it was written."""

    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        """The stamp of ``path`` now."""
        stat = path.stat()
        return cls(stat.st_size, stat.st_mtime_ns)


def _columns(connection: sqlite3.Connection, table: str) -> frozenset[str]:
    return frozenset(row[1] for row in connection.execute(f'PRAGMA table_info("{table}")'))


class HermesDb:
    """An open, read-only Hermes database and the columns its tables have.

    Build it with :meth:`open`. All calls must come from one thread at a time.
    """

    def __init__(self, *, path: Path, mode: Mode, connection: sqlite3.Connection,
                 stamp: FileStamp, session_columns: frozenset[str],
                 message_columns: frozenset[str], notes: tuple[str, ...]) -> None:
        """Wrap an open connection; use :meth:`open` instead."""
        self.path = path
        self.mode = mode
        self.connection = connection
        self.stamp = stamp
        self.session_columns = session_columns
        self.message_columns = message_columns
        self.notes = notes

    @classmethod
    def open(cls, path: Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S
             ) -> Result[HermesDb, StoreUnavailable]:
        """Open ``path`` read-only (see the module for how); never creates a file."""
        location = Path(os.path.expanduser(path)).resolve()
        if not location.is_file():
            return Failure(SourceUnreadable(no_file_at(location)))
        try:
            stamp = FileStamp.of(location)
            with location.open("rb") as handle:
                header = handle.read(100)
        except OSError as error:
            return Failure(SourceUnreadable(
                f"cannot read {location}: {error.strerror or error}"))
        if not header and holds_frames(side_file(location, "-wal")):
            # SQLite reads a -wal only over its database's pages: over none it reads an
            # empty database (and a writer would drop the -wal).
            return Failure(SourceUnreadable(
                f"{location} is empty (0 bytes) but {location.name}-wal holds commits, "
                "which SQLite reads only beside the database they belong to: nothing was "
                "read (a copy made without the database's pages?)"))
        if not header.startswith(MAGIC):
            return Failure(SourceUnreadable(f"{location} is not a SQLite database"))
        wal = Path(f"{location}-wal").exists()
        shm = Path(f"{location}-shm").exists()
        mode = open_mode(header, wal=wal, shm=shm)
        notes: tuple[str, ...] = ()
        if mode == "immutable" and wal:
            notes = (f"{location.name}-wal was not read (its -shm file is missing); commits "
                     "still in it appear once Hermes checkpoints them",)
        uri = location.as_uri() + "?mode=ro" + ("&immutable=1" if mode == "immutable" else "")

        def connect() -> tuple[sqlite3.Connection, frozenset[str], frozenset[str]]:
            # check_same_thread is off only so that closing from a finalizer is safe;
            # every read still happens on the importer's one thread.
            connection = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s,
                                         isolation_level=None, check_same_thread=False)
            try:
                connection.execute("PRAGMA query_only = ON")
                return (connection, _columns(connection, "sessions"),
                        _columns(connection, "messages"))
            except BaseException:
                connection.close()
                raise

        try:
            connection, sessions, messages = retrying(connect)
        except sqlite3.Error as error:
            if is_hot_journal(error):
                # A hot -journal: Hermes was killed mid-write; only a writer rolls it back.
                return Failure(SourceUnreadable(
                    f"cannot read the Hermes database {location} yet: a write of Hermes was "
                    f"interrupted ({location.name}-journal) and only a writer may roll it "
                    "back; start Hermes once, then import again"))
            return Failure(SourceUnreadable(f"cannot read the Hermes database {location}: "
                                            f"{error}"))
        try:
            application = connection.execute("PRAGMA application_id").fetchone()[0]
        except sqlite3.Error:
            application = 0
        if application == APPLICATION_ID:  # a harkback file: not read as a Hermes file
            connection.close()
            return Failure(SourceUnreadable(
                f"{location} is a harkback database, not a Hermes state.db"))
        missing = sorted((SESSION_CORE - sessions) | (MESSAGE_CORE - messages))
        if not sessions or not messages or missing:
            connection.close()
            what = ("no sessions and messages tables" if not sessions or not messages
                    else f"missing columns {', '.join(missing)}")
            return Failure(SourceUnreadable(f"{location} is not a Hermes state.db ({what})"))
        return Success(cls(path=location, mode=mode, connection=connection, stamp=stamp,
                           session_columns=sessions, message_columns=messages, notes=notes))

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` on the connection, retrying transient I/O errors.

        SQLite keeps whatever bytes a writer gave as TEXT; where they are not UTF-8,
        :mod:`sqlite3` raises on the row and would lose the whole read. ``work`` then
        runs once more with such bytes escaped (see
        :func:`~harkback.adapters.sources.encodings.escaped`), for the rows' reader to
        name and replace. Raises ``sqlite3.Error`` when the read fails for good (the
        importer translates it).
        """
        try:
            return retrying(lambda: work(self.connection))
        except sqlite3.OperationalError as error:
            if not is_undecodable(error):
                raise
        self.connection.text_factory = escaped  # only now: it costs ~1 us a value
        try:
            return retrying(lambda: work(self.connection))
        finally:
            self.connection.text_factory = str

    def changed_since_open(self) -> bool:
        """True when an unlocked (immutable) read may have seen a half-written file."""
        if self.mode != "immutable":
            return False
        try:
            return FileStamp.of(self.path) != self.stamp
        except OSError:
            return True

    def schema_version(self) -> int | None:
        """Hermes' ``schema_version`` (None when the table is missing or empty)."""
        try:
            row = self.read(lambda c: c.execute("SELECT MAX(version) FROM schema_version")
                            .fetchone())
        except sqlite3.Error:
            return None
        return int(row[0]) if row and isinstance(row[0], int) else None

    def close(self) -> None:
        """Close the connection; closing twice is harmless."""
        self.connection.close()


def database_files(path: Path) -> list[Path]:
    """The Hermes databases at ``path``: the file itself, or a Hermes home's ``state.db``
    and every ``profiles/<name>/state.db`` beside it.

    A profile this user may not read is listed (its import then fails, naming it, while
    the others are read), never passed over as if it held nothing; a ``profiles`` folder
    that cannot be listed raises :class:`PermissionError` naming it (``glob`` skipped both
    without a word).
    """
    if path.is_file() or special_kind(path) is not None:  # a pipe: its import names it
        return [path]
    try:
        # Anything of that name, a folder or a FIFO too (see _profile_db).
        found = [path / "state.db"] if (path / "state.db").exists() else []
    except PermissionError as error:  # the home cannot be entered: named, not its state.db
        raise PermissionError(error.errno, error.strerror, str(path)) from None
    try:
        profiles = sorted(os.scandir(path / "profiles"), key=lambda entry: entry.name)
    except (FileNotFoundError, NotADirectoryError):
        return found
    # A hidden folder is no profile: the ``profiles/*`` pattern read before never saw one.
    return found + [Path(entry.path) / "state.db" for entry in profiles
                    if not entry.name.startswith(".") and entry.is_dir()
                    and _profile_db(Path(entry.path) / "state.db")]


def _profile_db(path: Path) -> bool:
    """Whether a ``state.db`` is there, or may be (its folder cannot be read). Anything of
    that name counts, a folder or a FIFO too: its import says what it is, where passing it
    over said "no Hermes state.db" of a home that has one, just not a file."""
    try:
        return path.exists()
    except PermissionError:
        return True


def no_file_at(location: Path) -> str:
    """Why no Hermes database can be read at ``location``, which is no regular file.

    >>> no_file_at(Path("/"))
    '/ is a folder, not a Hermes state.db file'
    """
    kind = special_kind(location) or ("a folder" if location.is_dir() else None)
    if kind is None:
        return f"no Hermes database at {location}"
    return f"{location} is {kind}, not a Hermes state.db file"
