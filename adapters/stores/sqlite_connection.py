"""The SQLite store's connection: opening a file, preparing its schema, running statements.

A writable open creates the file's schema when the file is blank, migrates an older
harkback file to this version (:mod:`~harkback.adapters.stores.sqlite_migrations`) and adds
the vector tables and the title index when they are missing
(:func:`~harkback.adapters.stores.sqlite_titles.prepare`); a read-only open creates and
changes nothing (see :func:`harkback.adapters.sqlite_files.connect_read_only`) and reads an
older file through views in memory. Either refuses a file that is not harkback's, or of a
newer schema version.

>>> opened = connect(Path(":memory:"), readonly=False, busy_timeout=1.0).unwrap()
>>> connection = opened.connection
>>> execute(connection, Statement("PRAGMA user_version")).fetchone(), has_vector_schema(connection)
((6,), True)
>>> opened.schema
Migrated(before=0, after=6, applied=(), latest=6)
>>> connection.close()
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sqlite_files import connect_read_only
from harkback.adapters.stores import sqlite_adopt, sqlite_titles
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.sql import fulltext, schema
from harkback.adapters.stores.sql.statement import Row, Statement
from harkback.adapters.stores.sqlite_errors import damage_behind, unavailable
from harkback.adapters.stores.sqlite_migrations import SchemaProblem, bring_forward, read_forward
from harkback.adapters.stores.sqlite_transaction import immediate
from harkback.adapters.stores.write_turns import Patience, patiently
from harkback.stages.errors import StoreUnavailable

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 5.0
"""Seconds a statement waits for another connection's lock before giving up."""

MAX_PAGES_ENV = "HARKBACK_TEST_MAX_PAGE_COUNT"
"""A test hook: when set, a writable connection may grow the file to this many pages only,
as a full disk would stop it (the fault suite uses it where it cannot mount a small disk)."""

CACHE_KIB = 64 * 1024
"""The most page cache a connection may use, in KiB (allocated only as pages are read)."""

MAP_BYTES = 1 << 40
"""How much of the file a ``mapped`` read-only connection maps (SQLite caps it at its
build's limit, 2 GiB here; the rest is read as usual)."""

def execute(connection: sqlite3.Connection, statement: Statement) -> sqlite3.Cursor:
    """Run ``statement`` with its values bound."""
    return connection.execute(statement.sql, statement.params)


def fetch(statement: Statement, convert: Callable[[Row], T]
              ) -> Callable[[sqlite3.Connection], tuple[T, ...]]:
    """Work for a store's thread: ``statement``'s rows, each made a record by ``convert``."""
    def work(connection: sqlite3.Connection) -> tuple[T, ...]:
        return tuple(convert(row) for row in connection.execute(statement.sql, statement.params))
    return work


@attrs.frozen
class Opened:
    """An open connection, and the schema versions its file had before and after opening."""

    connection: sqlite3.Connection
    schema: Migrated


def connect(path: Path, readonly: bool, busy_timeout: float, *, create: bool = False,
            mapped: bool = False, stop: Callable[[], bool] | None = None
            ) -> Result[Opened, StoreUnavailable]:
    """A connection to ``path``, prepared for the store (see the module), or why not.

    A writable open first checks an existing file without writing it
    (:func:`~harkback.adapters.stores.sqlite_adopt.refusal`; ``create`` lets it adopt an
    empty file of any name); a failed open removes the side files it made. A ``mapped``
    read-only connection reads the file through a memory map (:data:`MAP_BYTES`). With
    ``stop``, a migration waiting for the write lock gives up once ``stop()`` says so
    (:func:`_forward`).
    """
    # Runs on the store's worker thread, which then owns the connection.
    if not readonly:
        refused = sqlite_adopt.refusal(path, create=create)
        if refused is not None:
            return Failure(refused)
    before = sqlite_adopt.present_side_files(path)
    try:
        connection = (connect_read_only(path, timeout=busy_timeout) if readonly else
                      sqlite3.connect(_as_written(path), timeout=busy_timeout,
                                      isolation_level=None))
    except sqlite3.Error as error:
        sqlite_adopt.remove_new_side_files(path, before)
        return Failure(unavailable(path, error))
    try:
        return Success(Opened(connection, _prepare(connection, path, readonly, mapped, stop)))
    except SchemaProblem as problem:
        failure = StoreUnavailable(str(problem))
    except sqlite3.Error as error:
        failure = unavailable(path, damage_behind(connection, error))
    connection.close()
    sqlite_adopt.remove_new_side_files(path, before)
    return Failure(failure)


def _as_written(path: Path) -> str:
    """``path`` as a name SQLite opens as written: a relative one starting ``file:`` (in any
    case) it would read as a URI and open another file (``file:h.db?mode=rwc``: ``h.db``).

    >>> _as_written(Path("file:h.db")), _as_written(Path("h.db"))
    ('./file:h.db', 'h.db')
    """
    text = str(path)
    return f".{os.sep}{text}" if text[:5].lower() == "file:" else text


def _prepare(connection: sqlite3.Connection, path: Path, readonly: bool,
             mapped: bool = False, stop: Callable[[], bool] | None = None) -> Migrated:
    # A bigger page cache roughly halves the time SQLite spends on bulk ingests.
    connection.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    if readonly:
        found = read_forward(connection, str(path))
        connection.execute("PRAGMA query_only = ON")
        if mapped:
            # A new process's first search reads thousands of pages, each copied into a
            # page cache it must first allocate; mapped, they are used in place. Every
            # mapped page read stays in the process's resident size, so only a process
            # that searches once maps (benchmarks/README.md, "Speed at scale").
            connection.execute(f"PRAGMA mmap_size = {MAP_BYTES}")
        return found
    found = _forward(connection, str(path), stop)
    if pages := os.environ.get(MAX_PAGES_ENV, "").strip():
        connection.execute(f"PRAGMA max_page_count = {int(pages)}")
    connection.execute("PRAGMA synchronous = NORMAL")
    if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        connection.execute("PRAGMA journal_mode = WAL")
    if not has_vector_schema(connection):
        _add_vector_schema(connection)
    sqlite_titles.prepare(connection)
    _gather_index_writes(connection)
    return found


LOCK_LOOK_S = 0.1
"""How often a migration waiting for the write lock looks whether it is still wanted."""


def _forward(connection: sqlite3.Connection, where: str,
             stop: Callable[[], bool] | None) -> Migrated:
    """:func:`bring_forward`; with ``stop``, its wait for the write lock taken in turns of
    :data:`LOCK_LOOK_S`, for the connection's busy timeout in all, until ``stop()``.

    SQLite's own wait (the busy timeout) cannot be cut short, ``interrupt()`` included: a
    Ctrl-C during ``harkback migrate`` took effect only when it ended, 5 s later.
    """
    if stop is None:
        return bring_forward(connection, where)
    waits_ms = int(connection.execute("PRAGMA busy_timeout").fetchone()[0])
    connection.execute(f"PRAGMA busy_timeout = {int(LOCK_LOOK_S * 1000)}")
    try:
        return patiently(lambda _: bring_forward(connection, where),
                         Patience(total_s=waits_ms / 1000, longest_pause_s=LOCK_LOOK_S),
                         stop=stop)(connection)
    finally:
        connection.execute(f"PRAGMA busy_timeout = {waits_ms}")


def _gather_index_writes(connection: sqlite3.Connection) -> None:
    # Kept in the index's own config table: set once per file, one read on later opens.
    setting = connection.execute(fulltext.PENDING_SETTING).fetchone()
    if setting is None or setting[0] != fulltext.PENDING_BYTES:
        connection.execute(fulltext.SET_PENDING, (fulltext.PENDING_BYTES,))


def has_vector_schema(connection: sqlite3.Connection) -> bool:
    """Whether the file has every table and trigger of the vector schema."""
    found: int = connection.execute(schema.VECTOR_OBJECT_COUNT,
                                    (json.dumps(schema.VECTOR_OBJECTS),)).fetchone()[0]
    return found == len(schema.VECTOR_OBJECTS)


def _add_vector_schema(connection: sqlite3.Connection) -> None:
    # Files of schema version 1 made before vectors existed gain the tables here (older
    # harkback versions of the same schema version keep opening the file, and the
    # triggers keep the vectors right when they write).
    with immediate(connection):
        for statement in schema.VECTOR_SCHEMA:
            connection.execute(statement)
