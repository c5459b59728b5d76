"""``harkback check`` on a SQLite store: read the whole file, read-only, and say what is
fine and what is damaged (:class:`~harkback.adapters.stores.store_check.Diagnosis`).

Five looks, each in its own function: SQLite's ``PRAGMA integrity_check`` (every page,
every B-tree index against its table, each line classified in
:mod:`~harkback.adapters.stores.sqlite_integrity`), the tables read past their indexes
(keys and rows no read takes: :mod:`~harkback.adapters.stores.sqlite_table_check`), the
two full-text indexes checked whole, harkback's own consistency (every message in the
index, every session's title, no vector of a message gone), and the schema version. The
file is opened read-only (:func:`~harkback.adapters.sqlite_files.connect_read_only`): a
check writes nothing.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     check(Path(folder) / "none.db").damaged
('the file cannot be read: unable to open database file',)
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import attrs

from harkback.adapters.sqlite_files import APPLICATION_ID, connect_read_only, is_hot_journal
from harkback.adapters.stores.read_watch import ReadWatch
from harkback.adapters.stores.sql.schema import SCHEMA_VERSION
from harkback.adapters.stores.sqlite_integrity import TORN_INDEX, pages
from harkback.adapters.stores.sqlite_table_check import keys_whole, rows_whole
from harkback.adapters.stores.sqlite_transaction import read_snapshot
from harkback.adapters.stores.store_check import Diagnosis, bounded, way_out
from harkback.stages.shell_words import shell_quoted

INDEXES = ("messages_fts", "session_titles_fts")
"""The full-text indexes: contentless, rebuilt from ``messages`` and ``session_titles``."""

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first bytes of every SQLite database file."""

OWN_CHECK_BYTES = 256 * 2**20
"""The largest file whose full-text indexes FTS5's own ``integrity-check`` checks, on a
temporary copy; a larger one's are read whole instead (:func:`_read_whole`)."""

_MISSING = ("SELECT COUNT(*) FROM messages "
            "WHERE id NOT IN (SELECT id FROM messages_fts_docsize)")
_EXTRA = ("SELECT COUNT(*) FROM messages_fts_docsize "
          "WHERE id NOT IN (SELECT id FROM messages)")
_UNTITLED = ("SELECT COUNT(*) FROM sessions "
             "WHERE id NOT IN (SELECT session_id FROM session_titles)")
_TITLES_UNINDEXED = ("SELECT (SELECT COUNT(*) FROM session_titles "
                     "WHERE id NOT IN (SELECT id FROM session_titles_fts_docsize)) + "
                     "(SELECT COUNT(*) FROM session_titles_fts_docsize "
                     "WHERE id NOT IN (SELECT id FROM session_titles))")
_EMPTY = "SELECT COUNT(*) FROM sessions WHERE id NOT IN (SELECT session_id FROM messages)"
_EMPTY_READ = ("SELECT COUNT(*) FROM sessions NOT INDEXED "
               "WHERE id NOT IN (SELECT +session_id FROM messages NOT INDEXED)")
""":data:`_EMPTY` from the tables alone, for when an index is damaged (as
:func:`~harkback.adapters.stores.sqlite_table_check.keys_whole` reads them)."""
_ORPHANS = ("SELECT COUNT(*) FROM message_vectors "
            "WHERE message_id NOT IN (SELECT id FROM messages)")
_HAS = "SELECT COUNT(*) FROM sqlite_master WHERE name = ?"


def check(path: Path) -> Diagnosis:
    """Check the store file at ``path`` (see the module); never writes it.

    Read as ``immutable`` or ``unlocked`` (no writer's ``-wal`` was there), the file may
    be moved by a sync starting meanwhile: its pages, read from two moments, look
    damaged. Damage found while the file moved is looked for once more
    (:class:`~harkback.adapters.stores.read_watch.ReadWatch`).
    """
    for _ in range(2):
        watch = ReadWatch.opening(path, readonly=True)
        found = _checked(path)
        if found.healthy or not watch.moved():
            return found
    return attrs.evolve(found, advice="the file was written while it was checked (a sync "
                                      "or ingest at work), which can look like damage: "
                                      "check again when it is done")


def _checked(path: Path) -> Diagnosis:
    fine: list[str] = []
    damaged: list[str] = []
    advice: str | None = None
    derived_only = rows_read = True
    try:
        with _reading(path) as connection:
            advice = _schema(connection, path, fine, damaged)
            if damaged:  # not harkback's, or from a newer harkback: nothing more to read
                return Diagnosis(tuple(fine), tuple(damaged), False, str(path), advice)
            # One read transaction: the counts agree with each other while a sync writes.
            with read_snapshot(connection):
                derived_only = pages(connection, fine, damaged)
                if derived_only and damaged:  # an index out of step: the index, or its table?
                    derived_only = keys_whole(connection, damaged)
                if advice is None:  # this harkback's columns: each row read as a read does
                    rows_read = rows_whole(connection, damaged)
                    derived_only = derived_only and rows_read
                if TORN_INDEX not in damaged:  # the looks below read through the indexes
                    _indexes(connection, path, fine, damaged)
                    _consistency(connection, fine, damaged)
    except sqlite3.Error as error:
        if is_hot_journal(error):  # no damage: a killed writer's change not yet undone
            return Diagnosis(damaged=("a write to the file was interrupted and is not yet "
                                      "rolled back (its -journal is beside it)",),
                             db=str(path), advice=f"roll it back with any writable command, "
                             f"such as harkback migrate --db {shell_quoted(str(path))}, then "
                             f"check again")
        if path.is_file() and not _has_sqlite_header(path):
            return Diagnosis(damaged=("the file is not a SQLite database: it does not start "
                                      "with SQLite's header",), db=str(path),
                             advice=f"pass --db the path of a harkback store; if this file "
                                    f"was one, {way_out(str(path))}")
        # What could not even be read (a page of the schema, a truncated file).
        damaged.append(f"the file cannot be read: {error}")
        derived_only = False
    if damaged and not derived_only:
        # Not "migrate" (which refuses a damaged file): the ways out.
        # A torn index's own way out says the rows read whole: not when one reads as none.
        torn_alone = TORN_INDEX in damaged and rows_read
        advice = way_out(str(path), rows_whole=True) if torn_alone else None
    return Diagnosis(tuple(fine), bounded(damaged), derived_only and bool(damaged),
                     str(path), advice)


def _has_sqlite_header(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[sqlite3.Connection]:
    if not path.is_file():
        raise sqlite3.OperationalError("unable to open database file")
    connection = connect_read_only(path)
    try:
        yield connection
    finally:
        connection.close()


def _schema(connection: sqlite3.Connection, path: Path, fine: list[str],
            damaged: list[str]) -> str | None:
    """The file's owner and schema version; the advice for an older version."""
    owner = connection.execute("PRAGMA application_id").fetchone()[0]
    if owner != APPLICATION_ID:
        damaged.append("the file is not a harkback store (its application_id is not "
                       "harkback's)")
        return "pass --db the path of a harkback store"
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        damaged.append(f"schema version {version} is newer than this harkback's "
                       f"({SCHEMA_VERSION})")
        return "check it with the newer harkback that wrote it"
    if version < SCHEMA_VERSION:
        fine.append(f"schema version {version}, older than this harkback's "
                    f"({SCHEMA_VERSION})")
        return f"harkback migrate --db {shell_quoted(str(path))}, then check again"
    fine.append(f"schema version {version} (this harkback's)")
    return None


def _indexes(connection: sqlite3.Connection, path: Path, fine: list[str],
             damaged: list[str]) -> None:
    """Each full-text index checked whole: by FTS5's own ``integrity-check`` on
    a temporary copy of a file up to :data:`OWN_CHECK_BYTES`, else by reading every term."""
    present = [i for i in INDEXES if connection.execute(_HAS, (i,)).fetchone()[0]]
    if path.stat().st_size <= OWN_CHECK_BYTES:
        _fts5_checked(connection, present, fine, damaged)
    else:
        _read_whole(connection, present, fine, damaged)


def _fts5_checked(connection: sqlite3.Connection, indexes: list[str], fine: list[str],
                  damaged: list[str]) -> None:
    # FTS5's integrity-check is a write statement, which a read-only connection refuses:
    # it runs on a copy. Of a contentless index it checks the structure (each segment,
    # each page, the page index against the pages): there is no text to compare. The
    # copy is SQLite's temporary file (in $TMPDIR, gone when closed), of which only the
    # page cache is held in memory: a copy in memory cost the file's size in RAM.
    copy = sqlite3.connect("", isolation_level=None)
    try:
        try:
            connection.backup(copy)
        except sqlite3.OperationalError:  # no room for the copy: the indexes read whole
            _read_whole(connection, indexes, fine, damaged)
            return
        for index in indexes:
            try:
                copy.execute(f"INSERT INTO {index}({index}) VALUES('integrity-check')")
                fine.append(f"the full-text index {index} passes FTS5's integrity-check")
            except sqlite3.DatabaseError as error:
                damaged.append(f"the full-text index {index} fails FTS5's integrity-check "
                               f"({error})")
    finally:
        copy.close()


def _read_whole(connection: sqlite3.Connection, indexes: list[str], fine: list[str],
                damaged: list[str]) -> None:
    """Read every term of each index (``fts5vocab``, in the connection's own temporary
    schema: the file is not written), which finds a broken page of postings, though not
    a page index out of step with its pages."""
    for index in indexes:
        vocabulary = f"temp.{index}_check"
        connection.execute(f"DROP TABLE IF EXISTS {vocabulary}")
        connection.execute(f"CREATE VIRTUAL TABLE {vocabulary} USING fts5vocab(main, {index}, row)")
        try:
            connection.execute(f"SELECT COUNT(*), SUM(cnt) FROM {vocabulary}").fetchone()
            fine.append(f"the full-text index {index} reads whole")
        except sqlite3.DatabaseError as error:
            damaged.append(f"the full-text index {index} cannot be read whole ({error})")
        finally:
            connection.execute(f"DROP TABLE {vocabulary}")


def _consistency(connection: sqlite3.Connection, fine: list[str], damaged: list[str]
                 ) -> None:
    """harkback's own consistency: what each write keeps in one transaction."""
    def count(statement: str) -> int:
        found: int = connection.execute(statement).fetchone()[0]
        return found

    messages = count("SELECT COUNT(*) FROM messages")
    missing, extra = count(_MISSING), count(_EXTRA)
    if missing or extra:
        damaged.append(f"the full-text index of messages is out of step: {missing} of "
                       f"{messages} messages are missing from it (searches miss them), "
                       f"{extra} rows index no stored message")
    else:
        fine.append(f"all {messages} messages are in the full-text index")
    if connection.execute(_HAS, ("session_titles",)).fetchone()[0]:
        untitled, unindexed = count(_UNTITLED), count(_TITLES_UNINDEXED)
        if untitled or unindexed:
            damaged.append(f"the titles' index is out of step: {untitled} sessions have no "
                           f"index text, {unindexed} title rows are not indexed as stored")
        else:
            fine.append("every session's title is indexed")
    # The index of messages by session, if damaged, miscounts: the tables then.
    empty = count(_EMPTY_READ if any("integrity_check" in line for line in damaged)
                  else _EMPTY)
    if empty:
        # An agent's session may hold no message: said, not counted as damage.
        fine.append(f"{empty} sessions hold no messages (kept as their source had them)")
    if connection.execute(_HAS, ("message_vectors",)).fetchone()[0]:
        orphans = count(_ORPHANS)
        if orphans:
            damaged.append(f"{orphans} vectors belong to no stored message")
        else:
            fine.append("every vector belongs to a stored message")
