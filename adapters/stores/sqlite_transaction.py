"""The SQLite store's write transaction: ``BEGIN IMMEDIATE`` … ``COMMIT``, in one place.

Kept apart from :mod:`~harkback.adapters.stores.sqlite_connection` so that the modules it
imports (migrations, titles) can use it too.

>>> connection = sqlite3.connect(":memory:", isolation_level=None)
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
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator


@contextlib.contextmanager
def immediate(connection: sqlite3.Connection) -> Iterator[None]:
    """One write transaction (``BEGIN IMMEDIATE``): committed at the end of the block
    (unless the block rolled it back itself), rolled back when anything escapes it."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
        if connection.in_transaction:
            connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise
