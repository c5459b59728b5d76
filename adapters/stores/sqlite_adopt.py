"""Which files a writable open may use, checked before SQLite touches them, and the side
files a failed open leaves, taken away.

A writable SQLite open of a file that is not harkback's could write it (a checkpoint of
another program's ``-wal``, harkback's schema in an empty file) and leaves ``-wal`` and
``-shm`` files beside a read-only one. So, before a writable open, an existing file is
checked without writing: it must be writable, and be harkback's, or be empty (no bytes,
or a SQLite file with no tables) with a name that says it is a database (:data:`SUFFIXES`)
or a caller that asked to create a store there.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     notes = Path(folder) / "notes.txt"
...     _ = notes.write_bytes(b"")
...     refusal(notes, create=False).reason.endswith("pass --create to make it a harkback store")
...     refusal(notes, create=True) is None, refusal(Path(folder) / "new.txt", create=False)
True
(True, None)
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from pathlib import Path

from harkback.adapters.file_kinds import special_kind
from harkback.adapters.sqlite_files import (
    APPLICATION_ID,
    WAL_HEADER_BYTES,
    connect_read_only,
    is_hot_journal,
    not_ours,
    side_file,
)
from harkback.adapters.stores.sqlite_errors import not_writable, read_only_place, unavailable
from harkback.stages.errors import NoStore, StoreUnavailable
from harkback.stages.shell_words import shell_joined

SUFFIXES = (".db", ".sqlite", ".sqlite3")
"""Names of empty files a writable open adopts as a new store without being asked."""

SIDE_FILES = ("-wal", "-shm", "-journal")


def odd_kind(path: Path) -> str | None:
    """Why ``path`` cannot hold a store when it exists but is no regular file (a FIFO, a
    socket, a device such as ``/dev/null``: :func:`~harkback.adapters.file_kinds.special_kind`),
    or None. SQLite's writes would go to whatever reads a FIFO, and ``/dev/null`` swallows
    them: a "store" that keeps nothing.

    >>> odd_kind(Path("/dev/null"))
    '/dev/null is a character device, not a regular file: name a database file, such as harkback.db'
    >>> odd_kind(Path("/no/such/file")) is None, odd_kind(Path("/")) is None
    (True, True)
    """
    kind = special_kind(path)
    if kind is None:  # a regular file, or a folder (named by its own message)
        return None
    return f"{path} is {kind}, not a regular file: name a database file, such as harkback.db"


def no_store_yet(target: str) -> str:
    """What a command that reads a store no one has made yet says, naming how to make it:
    "ingest sessions first" sent a user with Claude Code or Codex history looking for a
    JSON-lines file, when ``harkback sync`` reads those histories.

    >>> print(no_store_yet("my store.db"))
    no harkback database at my store.db; import sessions into it first: harkback sync --db \
'my store.db' (the Claude Code, Codex and Hermes histories on this machine), or harkback \
ingest FILE --db 'my store.db' (a JSON-lines file)
    """
    named = shell_joined(["--db", target])
    return (f"no harkback database at {target}; import sessions into it first: harkback sync "
            f"{named} (the Claude Code, Codex and Hermes histories on this machine), or "
            f"harkback ingest FILE {named} (a JSON-lines file)")


def no_store_at(path: Path, *, readonly: bool) -> StoreUnavailable | None:
    """Why no open of ``path`` can find a store there: no regular file (:func:`odd_kind`),
    a folder, or, for a read-only open, none at all (None: it may be opened)."""
    odd = odd_kind(path)
    if odd is not None:
        return StoreUnavailable(odd)
    if path.is_dir():  # SQLite would say "disk I/O error", or "unable to open" read-only
        return StoreUnavailable(f"{path} is a folder, not a database file: name a file in "
                                f"it, such as {path / 'harkback.db'}")
    if readonly and not path.is_file():  # "ingest first" would meet left_commits' refusal
        # NoStore, as an empty PostgreSQL database: nothing is broken, none was made yet.
        return left_commits(path) or NoStore(no_store_yet(str(path)))
    if path.is_file() and not os.access(path, os.R_OK):
        # Another user's store (one a `sudo harkback` made): SQLite says only "unable to
        # open database file", or, writing, "read-only".
        return StoreUnavailable(f"{path}: Permission denied")
    return None


def refusal(path: Path, *, create: bool) -> StoreUnavailable | None:
    """Why a writable open must not use ``path`` (None: it may; a missing file is created).

    Reads the file read-only (:func:`~harkback.adapters.sqlite_files.connect_read_only`), so a
    refused file is never written. A harkback file of another schema version passes: the
    open itself says what to do about it.
    """
    odd = odd_kind(path)
    if odd is not None:
        return StoreUnavailable(odd)
    try:
        found = path.stat()
    except FileNotFoundError:
        return left_commits(path)
    except OSError as error:
        return StoreUnavailable(f"the database file cannot be opened: {path} ({error.strerror})")
    size = found.st_size
    if not os.access(path, os.W_OK):  # a read-only file system says so, else the file
        return not_writable(path, read_only_place(path) or "the file itself is read-only")
    if found.st_nlink > 1:
        return linked(path, found.st_nlink)
    for suffix in ("-wal", "-shm"):
        side = side_file(path, suffix)
        if side.exists() and not os.access(side, os.W_OK):
            # SQLite opens it read-only and every write said "the database is read-only",
            # of a file this user may write: an empty one too (another user's, kept as is).
            return not_writable(path, f"its {suffix} file {side} is read-only for this user "
                                      "(left by another user's harkback, or by a crash)")
    if size == 0:
        return _not_empty(path) or _adoptable(path, create)
    try:
        connection = connect_read_only(path)
        try:
            application: int = connection.execute("PRAGMA application_id").fetchone()[0]
            version: int = connection.execute("PRAGMA user_version").fetchone()[0]
            tables: int = connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
            refusal = not_ours(connection, str(path))
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        if is_hot_journal(error):
            return _interrupted(path)  # a killed writer's hot -journal
        return unavailable(path, error)  # locked, corrupt, not SQLite: as any open says
    if application == APPLICATION_ID:
        return None
    if (application, version, tables) == (0, 0, 0):
        return _adoptable(path, create)
    return StoreUnavailable(refusal)


def linked(path: Path, names: int) -> StoreUnavailable:
    """The line for a store file of several names (hard links: ``ln``, a ``cp -al``
    backup). SQLite keeps a write's ``-wal`` beside the name it opened: two writers through
    two names each reported every session stored, and one's were lost, the file damaged.

    The way out it gives copies the store with the commits still in its ``-wal`` (SQLite's
    backup reads them as any open does, here a read-only one), where a ``cp`` of the file
    alone left them behind, to a name where no file is (it overwrites nothing);
    it runs the Python harkback runs in, which has SQLite, unlike a machine without the
    ``sqlite3`` shell, and its words are quoted to work pasted.

    >>> linked(Path("h.db"), 2).reason[:63]
    'cannot write the database h.db: the file has 2 names (hard link'
    """
    copy = _unused_name(path)
    backup = shell_joined([sys.executable, "-c", _BACKUP, str(path), str(copy)])
    return StoreUnavailable(
        f"cannot write the database {path}: the file has {names} names (hard links), and "
        "writes through two names lose sessions and damage it (SQLite keeps a write's -wal "
        "beside the name it opened); make it one file of one name with the commits still in "
        f"its -wal (a cp of the file alone leaves them behind): {backup} and use {copy}; "
        "or run a command that only reads (search, recent, show, stats)")


# SQLite's online backup: a consistent copy of what the file and its -wal hold together.
# The store is opened read-only: a writable open checkpointed its -wal into the file of two
# names on close (old pages over newer ones, where the other name's writer had moved on) and
# made an empty store of a name moved away meanwhile. The copy is made only where no file is
# (O_EXCL): run again from the shell's history, the line put the old store back over the
# copy and the sessions stored in it since.
_BACKUP = ('import os, pathlib, sqlite3, sys; old = sqlite3.connect(pathlib.Path(sys.argv[1])'
           '.absolute().as_uri() + "?mode=ro", uri=True); new = sys.argv[2]; '
           'os.path.lexists(new) and sys.exit(new + " exists: nothing copied"); '
           "os.close(os.open(new, os.O_WRONLY | os.O_CREAT | os.O_EXCL)); "
           "old.backup(sqlite3.connect(new))")


def _unused_name(path: Path) -> Path:
    """``h-1.db`` beside ``h.db``, or the first of ``h-2.db``... that does not exist: the
    copy overwrites nothing."""
    number = 1
    while (found := path.with_name(f"{path.stem}-{number}{path.suffix}")).exists():
        number += 1
    return found


def _interrupted(path: Path) -> StoreUnavailable | None:
    """A file whose last write was interrupted (its ``-journal`` is hot), which only a
    writable open can roll back: harkback's own file may be opened (SQLite rolls the write
    back first), another program's is left to it. Its header tells whose it is."""
    with contextlib.suppress(OSError), path.open("rb") as handle:
        if handle.read(72)[68:72] == APPLICATION_ID.to_bytes(4, "big"):
            return None
    return StoreUnavailable(
        f"{path} has a write that was interrupted (its -journal file) and is not marked as "
        "harkback's: harkback leaves it as it is")


def _not_empty(path: Path) -> StoreUnavailable | None:
    """A file whose size reads 0 but that holds bytes (``/proc/version``: the kernel makes
    them as they are read) is no empty file to adopt, but not a database either."""
    try:
        with path.open("rb") as handle:
            first = handle.read(1)
    except OSError as error:
        return StoreUnavailable(f"the database file cannot be opened: {path} "
                                f"({error.strerror or error})")
    if not first:
        return None
    return StoreUnavailable(f"{path} is not a database: its size reads 0, yet it holds bytes "
                            "(as files under /proc and /sys do): name a database file, such "
                            "as harkback.db")


def left_commits(path: Path) -> StoreUnavailable | None:
    """Why no store may be made at the missing ``path`` whose ``-wal`` holds commits, or None.

    A store moved or deleted while a connection had it open (a ``sync --watch``, an MCP
    server) leaves its last commits in the ``-wal`` beside the old name: SQLite does not
    checkpoint them into a file that moved. A new store there took that ``-wal`` away, and
    those sessions with it, though each ingest that wrote them had said it stored them.
    Moved back, the store has them again, but only if nothing wrote to it at its new name:
    the old ``-wal``'s pages then go over the newer ones, and those writes are lost.
    """
    wal = side_file(path, "-wal")
    try:
        size = wal.stat().st_size
    except OSError:  # none, or unreadable: no commit that can be read
        return None
    if size <= WAL_HEADER_BYTES:
        return None
    # Beside its -wal: a symlink's target (moved back over the link, the store's -wal
    # would be looked for beside the link, and these commits left unread).
    home = Path(str(wal).removesuffix("-wal"))
    return StoreUnavailable(
        f"there is no store at {path}, but its -wal file {wal} holds "
        f"{size} bytes of its last commits (the store was moved or deleted "
        "while a harkback had it open): to keep them, move that store back to "
        f"{home} while no harkback runs, before anything writes to it at its new name (the "
        f"old -wal would undo those writes); else delete {wal} and "
        f"{side_file(path, '-shm')}, losing those commits, to start a new store there")


def _adoptable(path: Path, create: bool) -> StoreUnavailable | None:
    if create or path.suffix.lower() in SUFFIXES:
        return None
    return StoreUnavailable(
        f"{path} is an empty file not named like a database ({', '.join(SUFFIXES)}): "
        "pass --create to make it a harkback store")


def remove_store(path: Path) -> bool:
    """Remove the closed store file ``path``: a store this process created and left empty
    (an import that failed before storing anything). Whether it was removed.

    A ``-wal`` or ``-shm`` beside it means another connection has it open (the last one to
    close a WAL file takes both away): another process started on the same new path, and
    the file is left to it.
    """
    if present_side_files(path):
        return False
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return True


def present_side_files(path: Path) -> frozenset[str]:
    """Which of ``path``'s side files exist now."""
    return frozenset(s for s in SIDE_FILES if side_file(path, s).exists())


def remove_new_side_files(path: Path, before: frozenset[str]) -> None:
    """Remove the side files a failed open created (absent in ``before``), when they hold
    nothing: an empty ``-wal`` or ``-journal``, and the ``-shm`` once no ``-wal`` is left.

    Files that were there before belong to whoever made them, and a ``-wal`` with bytes
    in it may hold another connection's commits: those stay.
    """
    for suffix in ("-journal", "-wal", "-shm"):
        side = side_file(path, suffix)
        if suffix in before or not side.exists():
            continue
        if suffix == "-shm" and side_file(path, "-wal").exists():
            continue
        with contextlib.suppress(OSError):
            if suffix == "-shm" or side.stat().st_size == 0:
                side.unlink()
