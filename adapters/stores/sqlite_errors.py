"""What a SQLite error means for the store, in words: the lines a failed open or statement
shows, naming the file.

>>> error = sqlite3.OperationalError("database is locked")
>>> error.sqlite_errorname = "SQLITE_BUSY"
>>> unavailable(Path("h.db"), error).reason
'the database is locked by another connection: h.db (database is locked)'
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from harkback.stages.errors import StoreUnavailable

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
    if kind:
        return StoreUnavailable(f"{kind}: {path} ({error})")
    # A line of our own that names the file already (a reopen refused, see read_watch).
    said = str(error)
    return StoreUnavailable(said if said.startswith(f"{path} ") else f"{path}: {said}")


def _no_space_left(path: Path) -> bool:
    """Whether the file system holding ``path`` has no block left for this user."""
    try:
        found = os.statvfs(path.parent)
    except OSError:
        return False
    return (found.f_bfree if os.geteuid() == 0 else found.f_bavail) == 0
