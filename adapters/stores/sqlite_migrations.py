"""Bringing a SQLite file to this harkback's schema version: made, migrated, or read as is.

A writable open runs :func:`bring_forward`: in one ``BEGIN IMMEDIATE`` transaction it makes
a blank file's first schema, then applies every pending step of
:data:`~harkback.adapters.stores.sql.migrations.MIGRATIONS` and sets ``user_version``, so a
kill at any point leaves the file at its old version or its new one, never between. A
read-only open runs :func:`read_forward` instead, which writes nothing to the file.

>>> connection = sqlite3.connect(":memory:", isolation_level=None)
>>> bring_forward(connection, "h.db")
Migrated(before=0, after=6, applied=(), latest=6)
>>> bring_forward(connection, "h.db")
Migrated(before=6, after=6, applied=(), latest=6)
"""

from __future__ import annotations

import sqlite3

from harkback.adapters.sqlite_files import APPLICATION_ID, not_ours
from harkback.adapters.stores.migration import (
    FIRST_VERSION,
    Migrated,
    needs_migrate,
    pending,
    too_new,
)
from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.migrations import MIGRATIONS
from harkback.adapters.stores.sqlite_transaction import immediate


class SchemaProblem(Exception):
    """A file this harkback must not open as it is; the message is the line to show.

    Raised inside this module's transaction (so it rolls back) and turned into a
    :class:`~harkback.stages.errors.StoreUnavailable` by the connection's opener.
    """


def identity(connection: sqlite3.Connection) -> tuple[int, int]:
    """The file's ``application_id`` and ``user_version``."""
    application: int = connection.execute("PRAGMA application_id").fetchone()[0]
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    return application, version


def is_blank(connection: sqlite3.Connection) -> bool:
    """Whether the file holds nothing at all (a new file)."""
    return identity(connection) == (0, 0) and connection.execute(
        "SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0


def _checked(connection: sqlite3.Connection, where: str) -> int:
    application, version = identity(connection)
    if application != APPLICATION_ID:
        raise SchemaProblem(not_ours(connection, where))
    if version > schema.SCHEMA_VERSION:
        raise SchemaProblem(too_new(where, version, schema.SCHEMA_VERSION))
    if version < FIRST_VERSION:
        raise SchemaProblem(f"{where} has no harkback schema version")
    return version


def bring_forward(connection: sqlite3.Connection, where: str) -> Migrated:
    """Make a blank file's schema or migrate an older one, in one transaction.

    A file that is not harkback's, or newer than this harkback, raises
    :class:`SchemaProblem` before anything is written. A file already current costs two
    pragma reads and takes no lock.
    """
    if identity(connection) == (APPLICATION_ID, schema.SCHEMA_VERSION):
        return Migrated(schema.SCHEMA_VERSION, schema.SCHEMA_VERSION, latest=schema.SCHEMA_VERSION)
    if not is_blank(connection):
        _checked(connection, where)  # a foreign file is refused before it is even locked
    with immediate(connection, version=None):
        # Another process may have made or migrated the file while this one waited.
        before = 0 if is_blank(connection) else _checked(connection, where)
        if before == 0:
            # Vectors and titles too, in this one transaction: a kill between two steps
            # must not leave a new file with only some of its tables.
            for statement in (*schema.SCHEMA, *schema.VECTOR_SCHEMA, *schema.TITLE_SCHEMA):
                connection.execute(statement)
            connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        steps = pending(MIGRATIONS, max(before, FIRST_VERSION))
        for step in steps:
            for statement in step.statements:
                connection.execute(statement)
            if step.rewrite is not None and before:
                step.rewrite(connection)  # a new file has no row to rewrite
        connection.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION}")
    return Migrated(before, schema.SCHEMA_VERSION,
                    tuple(step.about for step in steps) if before else (),
                    latest=schema.SCHEMA_VERSION)


def read_forward(connection: sqlite3.Connection, where: str) -> Migrated:
    """Let a read-only connection read an older file as the current version.

    Each pending step's read view is made in the connection's ``TEMP`` schema (memory, not
    the file). ``after`` is the version the file stays at. A step without a read view
    raises :class:`SchemaProblem` asking for ``harkback migrate``.
    """
    version = _checked(connection, where)
    for step in pending(MIGRATIONS, version):
        if step.read_view is None:
            raise SchemaProblem(needs_migrate(where, version, schema.SCHEMA_VERSION))
        for statement in step.read_view:
            connection.execute(statement)
    return Migrated(version, version, latest=schema.SCHEMA_VERSION)
