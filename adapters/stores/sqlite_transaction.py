"""The SQLite store's transactions, in one place: a write (``BEGIN IMMEDIATE`` … ``COMMIT``),
a search's one read snapshot (:func:`one_snapshot`) and a few reads' (:func:`read_snapshot`).

Kept apart from :mod:`~harkback.adapters.stores.sqlite_connection` so that the modules it
imports (migrations, titles) can use it too.

A write checks, under its lock, that the file is still at the schema version this harkback
writes (:class:`SchemaMoved` otherwise): a harkback that opened the file before another one
migrated it must not add rows or index tokens of the old layout to it. A search reads the
version too (:func:`read_version`), and refuses a file migrated past what it knows.

>>> connection = sqlite3.connect(":memory:", isolation_level=None)
>>> _ = connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
>>> with immediate(connection):
...     _ = connection.execute("CREATE TABLE t (x)")
>>> try:
...     with immediate(connection):
...         _ = connection.execute("INSERT INTO t VALUES (1)")
...         raise ValueError("no")
... except ValueError:
...     pass
>>> connection.execute("SELECT COUNT(*) FROM t").fetchone(), connection.in_transaction
((0,), False)
>>> _ = connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")  # migrated meanwhile
>>> try:
...     with immediate(connection):
...         _ = connection.execute("INSERT INTO t VALUES (1)")
... except SchemaMoved as refused:
...     print(str(refused)[:43])
the store is now at harkback schema version
>>> connection.execute("SELECT COUNT(*) FROM t").fetchone(), connection.in_transaction
((0,), False)
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

from harkback.adapters.stores.migration import moved_on
from harkback.adapters.stores.sql.schema import SCHEMA_VERSION

T = TypeVar("T")


class SchemaMoved(sqlite3.DatabaseError):
    """The file's schema version is not the one this harkback writes (see the module)."""


def read_version(connection: sqlite3.Connection) -> int:
    """The file's schema version, read for a search (one pragma: the header is read anyway).

    A read-only open reads older files through their steps' views, so only a version newer
    than this harkback's refuses (:class:`SchemaMoved`): another harkback migrated the file
    while this one had it open, and its questions may no longer match what the file holds.

    >>> connection = sqlite3.connect(":memory:")
    >>> read_version(connection)
    0
    >>> _ = connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    >>> try:
    ...     read_version(connection)
    ... except SchemaMoved as refused:
    ...     print(str(refused).split(": ")[1][:20])
    nothing was searched
    """
    found: int = connection.execute("PRAGMA user_version").fetchone()[0]
    if found > SCHEMA_VERSION:
        raise SchemaMoved(moved_on(found, SCHEMA_VERSION, refused="nothing was searched"))
    return found


def versioned(work: Callable[[sqlite3.Connection], T]) -> Callable[[sqlite3.Connection], T]:
    """``work`` after :func:`read_version` (for a read that does no search, e.g. browsing)."""
    def checked(connection: sqlite3.Connection) -> T:
        read_version(connection)
        return work(connection)
    return checked


@contextlib.contextmanager
def immediate(connection: sqlite3.Connection, *, version: int | None = SCHEMA_VERSION
              ) -> Iterator[None]:
    """One write transaction (``BEGIN IMMEDIATE``): committed at the end of the block
    (unless the block rolled it back itself), rolled back when anything escapes it.

    The file must be at schema ``version`` (None for the migration that changes it)."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        if version is not None:
            # One read of the file's header, under the write lock: no migration can come
            # between this check and the commit.
            found: int = connection.execute("PRAGMA user_version").fetchone()[0]
            if found != version:
                raise SchemaMoved(moved_on(found, version))
        yield
        if connection.in_transaction:
            connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise


@contextlib.contextmanager
def read_snapshot(connection: sqlite3.Connection) -> Iterator[None]:
    """The block's statements read in one read transaction (``BEGIN`` … ``COMMIT``), so
    that they see one state of the file; inside a transaction already, that one.

    >>> connection = sqlite3.connect(":memory:", isolation_level=None)
    >>> with read_snapshot(connection):
    ...     connection.in_transaction
    True
    >>> connection.in_transaction
    False
    """
    if connection.in_transaction:
        yield
        return
    connection.execute("BEGIN")
    try:
        yield
    finally:
        if connection.in_transaction:  # it only read: nothing to keep or undo
            connection.execute("COMMIT")


def one_snapshot(connection: Callable[[], sqlite3.Connection],
                 make: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T]]:
    """``make``, its statements read in one read transaction of ``connection()`` (on its
    thread; a read-only connection: nothing else can write on it meanwhile).

    Each statement outside a transaction is a read transaction of its own: the WAL's
    locks taken and released, the file checked for changes, and after another
    connection's commit the page cache dropped. A search's 20-100 statements in one
    snapshot pay that once (~5 % of a search's CPU), and see one state of the file. An
    error ends nothing early: the statements that follow still run in the snapshot.
    """
    async def in_snapshot() -> T:
        begun = False
        with contextlib.suppress(sqlite3.Error):  # closed: the store calls say so
            if not connection().in_transaction:
                connection().execute("BEGIN")
                begun = True
        try:
            return await make()
        finally:
            # The connection may be a new one (reopened after a writer moved the file).
            if begun and connection().in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    connection().execute("COMMIT")
    return in_snapshot
