"""What a SQLite error means for the store, in words: the lines a failed open or statement
shows, naming the file.

>>> error = sqlite3.OperationalError("database is locked")
>>> error.sqlite_errorname = "SQLITE_BUSY"
>>> unavailable(Path("h.db"), error).reason
'the database is locked by another connection: h.db (database is locked)'
>>> unavailable(Path("h.db"), error).transient  # another writer's lock is let go in time
True
"""

from __future__ import annotations

import errno
import os
import resource
import sqlite3
from pathlib import Path

from harkback.stages.errors import StoreUnavailable
from harkback.stages.shell_words import shell_quoted

_KINDS = {
    "SQLITE_BUSY": "the database is locked by another connection",
    "SQLITE_LOCKED": "the database is locked",
    "SQLITE_READONLY": "the database is read-only",
    # A hot -journal: a killed writer's changes, which only a writable open can undo.
    "SQLITE_READONLY_ROLLBACK": ("a write to the database was interrupted and must be rolled "
                                 "back first (any writable command does it, such as "
                                 "harkback migrate)"),
    # The file may be writable: SQLite must also create its -wal and -shm files beside it.
    "SQLITE_READONLY_DIRECTORY": "the database's folder is read-only",
    "SQLITE_CORRUPT": "the database file is corrupt",
    "SQLITE_NOTADB": "the file is not a SQLite database",
    "SQLITE_FULL": "the disk is full",
    "SQLITE_IOERR": "disk I/O error",
    "SQLITE_CANTOPEN": "the database file cannot be opened",
    "SQLITE_PERM": "permission denied",
}


_TRANSIENT = ("SQLITE_BUSY", "SQLITE_LOCKED")
"""The errors that pass by themselves (:attr:`StoreUnavailable.transient`): a lock another
connection holds. A full disk, a read-only or corrupt file need someone to act."""


def unavailable(path: Path, error: sqlite3.Error) -> StoreUnavailable:
    """Translate a SQLite error into a :class:`StoreUnavailable` that says what went wrong.

    >>> unavailable(Path("h.db"), sqlite3.OperationalError("boom")).reason
    'h.db: boom'
    >>> unavailable(Path("h.db"), sqlite3.OperationalError("h.db has version 9")).reason
    'h.db has version 9'
    """
    name = getattr(error, "sqlite_errorname", None) or ""
    kind = _KINDS.get(name) or _KINDS.get("_".join(name.split("_")[:2]))
    if name.startswith("SQLITE_IOERR") and _no_space_left(path):
        # A disk full before the open: SQLite cannot size its -shm and says only "I/O".
        kind = _KINDS["SQLITE_FULL"]
    elif name in _WRITES and (most := _file_size_limit(path)) is not None:
        # A write past ``ulimit -f`` fails with EFBIG, which SQLite says only as "I/O".
        kind = (f"disk I/O error (this process may write files of at most {most:,} bytes; "
                f"raise the limit, ulimit -f, if a file of the store reached it)")
    if name.startswith("SQLITE_CANTOPEN") and (unopened := _not_opened(path)):
        reason, way_out = unopened
        return StoreUnavailable(f"cannot open the database {path}: {reason} ({error}); {way_out}")
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")) \
            and name != "SQLITE_READONLY_ROLLBACK" \
            and (cause := _dangling_link(path) or read_only_place(path)
                 or _takes_no_new_file(path, name)):
        return not_writable(path, f"{cause} ({error})")
    if kind:
        # Another connection's lock (SQLITE_BUSY, SQLITE_LOCKED and their extended codes)
        # is let go when its transaction ends: the one failure here that passes by itself.
        return StoreUnavailable(f"{kind}: {path} ({error}){_next_step(path, name)}",
                                transient=name.startswith(_TRANSIENT))
    # A line of our own that names the file already (a reopen refused, see read_watch).
    said = str(error)
    return StoreUnavailable(said if said.startswith(f"{path} ") else f"{path}: {said}")


def _next_step(path: Path, name: str) -> str:
    """What to do about a corrupt file: ``harkback check`` says what is damaged, mends
    a damaged index and names the ways out of the rest.

    >>> _next_step(Path("my h.db"), "SQLITE_CORRUPT_INDEX")
    "; run harkback check --db 'my h.db' to learn what is damaged and what to do"
    """
    if not name.startswith("SQLITE_CORRUPT"):
        return ""
    return f"; run harkback check --db {shell_quoted(str(path))} to learn what is damaged " \
           f"and what to do"


def check_whole(connection: sqlite3.Connection) -> None:
    """Raise SQLite's corruption error when ``PRAGMA quick_check`` finds the file damaged:
    a write that never reads the damaged pages succeeds, while every search fails on them.
    It reads the whole file (about as long as a merge of the index), so only upkeep runs it.

    >>> check_whole(sqlite3.connect(":memory:"))
    """
    found = [str(row[0]) for row in connection.execute("PRAGMA quick_check(2)")]
    if found != ["ok"]:
        # Its rows may start "*** in database main ***" on a line of its own: one line.
        problems = [line for row in found for line in row.splitlines()
                    if not line.startswith("***")]
        error = sqlite3.DatabaseError(f"SQLite's quick_check: {'; '.join(problems)}")
        error.sqlite_errorname = "SQLITE_CORRUPT"
        raise error


def damage_behind(connection: sqlite3.Connection, error: sqlite3.Error) -> sqlite3.Error:
    """The error to report for ``error``: for a broken constraint of the schema, the
    damage :func:`check_whole` finds, if any; else ``error`` itself.

    harkback's own writes keep the schema's constraints (a session's title row is deleted
    before it is written again), so a write that breaks one met a damaged file: a copy
    taken mid-write without its ``-wal`` said "UNIQUE constraint failed", not "corrupt".

    >>> damage_behind(sqlite3.connect(":memory:"), sqlite3.IntegrityError("UNIQUE"))
    IntegrityError('UNIQUE')
    """
    if not isinstance(error, sqlite3.IntegrityError):
        return error
    try:
        check_whole(connection)
    except sqlite3.DatabaseError as damage:
        name = getattr(damage, "sqlite_errorname", None) or ""
        if not name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
            # The check did not run to its end (interrupted, locked): it found no damage,
            # and the write's own error is what is known.
            return error
        damage.args = (f"{damage.args[0]}; the write failed with: {error}",)
        return damage
    return error


def not_writable(path: Path, cause: str) -> StoreUnavailable:
    """The line for a database that cannot be written or created for ``cause``, with
    what to do.

    >>> not_writable(Path("d/h.db"), "the folder d is read-only for this user").reason[:60]
    'cannot create the database d/h.db: the folder d is read-only'
    """
    made = "write" if path.exists() else "create"
    return StoreUnavailable(f"cannot {made} the database {path}: {cause}; pass --db a path "
                            f"where this user may write, or run a command that only reads "
                            f"(search, recent, show, stats)")


def folder_not_made(path: Path, error: OSError) -> StoreUnavailable:
    """The line for a new store ``path`` whose folder could not be made (``error``): what
    stood in the way (a file where a folder should be), and what to do.

    >>> folder_not_made(Path("/dev/null/h.db"), NotADirectoryError(20, "Not a directory")
    ...                 ).reason[:68]
    'cannot create the database /dev/null/h.db: /dev/null is not a folder'
    """
    blocking = next((up for up in path.parents if up.exists() and not up.is_dir()), None)
    cause = (f"{blocking} is not a folder" if blocking is not None
             else f"its folder {path.parent} cannot be made ({error.strerror})")
    return not_writable(path, cause)


SQLITE_PATH_BYTES = 504
"""The longest full path SQLite's unix file system opens: 512 bytes, less room for the
``-journal`` it names after the file."""


def _not_opened(path: Path) -> tuple[str, str] | None:
    """Why SQLite could not open ``path`` whatever the folder's permissions, and what to
    do: this process is out of file descriptors, or the full path is too long for SQLite;
    None when neither holds (a folder is refused before: ``sqlite_adopt.no_store_at``)."""
    try:
        os.close(os.open(os.devnull, os.O_RDONLY))
    except OSError as error:
        if error.errno in (errno.EMFILE, errno.ENFILE):
            limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            return (f"too many files are open ({error.strerror}; this process may have "
                    f"{limit})", "close some, or raise the limit (ulimit -n)")
    if len(os.fsencode(os.path.realpath(path))) > SQLITE_PATH_BYTES:
        return (f"its full path is longer than the {SQLITE_PATH_BYTES} bytes SQLite opens",
                "name a file on a shorter path")
    return None


def _dangling_link(path: Path) -> str | None:
    """Why a symbolic link at ``path`` names no file SQLite could make: SQLite makes it
    where the link points, and that cannot be done; None when ``path`` is no such link
    (a loop is refused before SQLite opens anything)."""
    if not path.is_symlink() or path.exists():
        return None
    target = Path(os.path.realpath(path))
    if not target.parent.is_dir():
        return f"{path} is a symbolic link to {target}, whose folder does not exist"
    return (f"{path} is a symbolic link to {target}, and "
            f"{read_only_place(target) or f'the folder {target.parent} takes no new files'}")


def _takes_no_new_file(path: Path, name: str) -> str | None:
    """Why SQLite could not create ``path`` in a folder that exists and looks writable,
    when no other cause (:func:`_not_opened`, :func:`_dangling_link`) did it: a file
    system such as /proc or /sys, which takes no new files whatever its permissions say;
    None when the open did not fail that way."""
    if name.startswith("SQLITE_CANTOPEN") and path.parent.is_dir() and not path.exists():
        return f"the folder {path.parent} takes no new files"
    return None


def read_only_place(path: Path) -> str | None:
    """Why nothing can be written where ``path`` is: a read-only file system, or a folder
    this user may not write (SQLite makes its -journal, -wal and -shm files beside the
    database, so the folder must be writable too); None when neither holds.

    A symbolic link is looked through: SQLite opens the file it points to and makes the
    side files beside that one, so that file's folder is the one that counts.

    >>> read_only_place(Path("/nonexistent/h.db")) is None  # SQLite's words say enough
    True
    """
    if not path.is_symlink():
        return _read_only_folder(path.parent)
    target = Path(os.path.realpath(path))
    cause = _read_only_folder(target.parent)
    return None if cause is None else f"{path} is a symbolic link to {target}, and {cause}"


def _read_only_folder(folder: Path) -> str | None:
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return None  # no such folder: SQLite's own words say enough
    if read_only:
        return f"the file system holding {folder} is read-only"
    # effective_ids: as the open itself is checked (root without CAP_DAC_OVERRIDE too).
    effective = os.access in os.supports_effective_ids
    if not os.access(folder, os.W_OK | os.X_OK, effective_ids=effective):
        return f"the folder {folder} is read-only for this user"
    return None


def _no_space_left(path: Path) -> bool:
    """Whether the file system holding ``path`` has no block left for this user."""
    try:
        found = os.statvfs(path.parent)
    except OSError:
        return False
    return (found.f_bfree if os.geteuid() == 0 else found.f_bavail) == 0


_WRITES = ("SQLITE_IOERR", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_TRUNCATE",
           "SQLITE_IOERR_SHMSIZE")
"""The I/O errors a write past ``ulimit -f`` (EFBIG) gives: a file written, cut to a
size or grown (the -shm); never a read's."""

_LARGEST_WRITE = 65_536 + 24
"""The most SQLite writes at once into a file: its largest page, with a WAL frame's header."""


def _file_size_limit(path: Path) -> int | None:
    """The most bytes this process may write in a file (``ulimit -f``) when a file of the
    store at ``path`` has reached it; None: no limit, or none reached (a disk failing under
    a limit set far above the store is not blamed on the limit).

    >>> _file_size_limit(Path("/nowhere/h.db"))
    """
    most = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if most == resource.RLIM_INFINITY:
        return None
    for suffix in ("", "-wal", "-journal", "-shm"):
        try:
            size = os.stat(f"{path}{suffix}").st_size
        except OSError:
            continue
        # A write stopped by the limit fills the file up to it; one page short at most.
        if size + _LARGEST_WRITE > most:
            return most
    return None
