"""The SQLite store's connection: opening a file, preparing its schema, running statements.

A writable open creates the file's schema when the file is blank and adds the vector
tables and the title index when they are missing
(:func:`~harkback.adapters.stores.sqlite_titles.prepare`); a read-only open creates and
changes nothing (see :func:`harkback.adapters.sqlite_files.read_only_uri`). Either refuses
a file that is not harkback's, or of another schema version.

>>> connection = connect(Path(":memory:"), readonly=False, busy_timeout=1.0).unwrap()
>>> execute(connection, Statement("PRAGMA user_version")).fetchone(), has_vector_schema(connection)
((1,), True)
>>> connection.close()
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from returns.result import Failure, Result, Success

from harkback.adapters.sqlite_files import APPLICATION_ID, read_only_uri
from harkback.adapters.stores import sqlite_titles
from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.statement import Statement
from harkback.stages.errors import StoreUnavailable

DEFAULT_BUSY_TIMEOUT = 5.0
"""Seconds a statement waits for another connection's lock before giving up."""

MAX_PAGES_ENV = "HARKBACK_TEST_MAX_PAGE_COUNT"
"""A test hook: when set, a writable connection may grow the file to this many pages only,
as a full disk would stop it (the fault suite uses it where it cannot mount a small disk)."""

CACHE_KIB = 64 * 1024
"""The most page cache a connection may use, in KiB (allocated only as pages are read)."""

_KINDS = {
    "SQLITE_BUSY": "the database is locked by another connection",
    "SQLITE_LOCKED": "the database is locked",
    "SQLITE_READONLY": "the database is read-only",
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
    """
    name = getattr(error, "sqlite_errorname", None) or ""
    kind = _KINDS.get("_".join(name.split("_")[:2]))
    return StoreUnavailable(f"{kind}: {path} ({error})" if kind else f"{path}: {error}")


def execute(connection: sqlite3.Connection, statement: Statement) -> sqlite3.Cursor:
    """Run ``statement`` with its values bound."""
    return connection.execute(statement.sql, statement.params)


def connect(path: Path, readonly: bool, busy_timeout: float
            ) -> Result[sqlite3.Connection, StoreUnavailable]:
    """A connection to ``path``, prepared for the store (see the module), or why not."""
    # Runs on the store's worker thread, which then owns the connection.
    target = read_only_uri(path) if readonly else str(path)
    try:
        connection = sqlite3.connect(target, uri=readonly, timeout=busy_timeout,
                                     isolation_level=None)
    except sqlite3.Error as error:
        return Failure(unavailable(path, error))
    try:
        problem = _prepare(connection, path, readonly)
    except sqlite3.Error as error:
        problem = unavailable(path, error)
    if problem is not None:
        connection.close()
        return Failure(problem)
    return Success(connection)


def _identity(connection: sqlite3.Connection) -> tuple[int, int]:
    application: int = connection.execute("PRAGMA application_id").fetchone()[0]
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    return application, version


def _is_blank(connection: sqlite3.Connection) -> bool:
    return _identity(connection) == (0, 0) and connection.execute(
        "SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0


def _prepare(connection: sqlite3.Connection, path: Path, readonly: bool
             ) -> StoreUnavailable | None:
    # A bigger page cache roughly halves the time SQLite spends on bulk ingests.
    connection.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    if readonly:
        connection.execute("PRAGMA query_only = ON")
    elif _is_blank(connection):
        _create_schema(connection)
    application, version = _identity(connection)
    if application != APPLICATION_ID:
        return StoreUnavailable(f"{path} is not a harkback database")
    if version != schema.SCHEMA_VERSION:
        return StoreUnavailable(
            f"{path} has harkback schema version {version}; this version of harkback reads "
            f"schema version {schema.SCHEMA_VERSION}")
    if not readonly:
        if pages := os.environ.get(MAX_PAGES_ENV, "").strip():
            connection.execute(f"PRAGMA max_page_count = {int(pages)}")
        connection.execute("PRAGMA synchronous = NORMAL")
        if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            connection.execute("PRAGMA journal_mode = WAL")
        if not has_vector_schema(connection):
            _add_vector_schema(connection)
        sqlite_titles.prepare(connection)
    return None


def has_vector_schema(connection: sqlite3.Connection) -> bool:
    """Whether the file has every table and trigger of the vector schema."""
    found: int = connection.execute(schema.VECTOR_OBJECT_COUNT,
                                    (json.dumps(schema.VECTOR_OBJECTS),)).fetchone()[0]
    return found == len(schema.VECTOR_OBJECTS)


def _add_vector_schema(connection: sqlite3.Connection) -> None:
    # Files of schema version 1 made before vectors existed gain the tables here; the
    # version stays, so older harkback versions keep opening the file (and the triggers
    # keep the vectors right when they write).
    connection.execute("BEGIN IMMEDIATE")
    try:
        for statement in schema.VECTOR_SCHEMA:
            connection.execute(statement)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise


def _create_schema(connection: sqlite3.Connection) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have created the schema while this one waited for the lock.
        if _is_blank(connection):
            for statement in schema.SCHEMA:
                connection.execute(statement)
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise
