"""The SQLite store's schema versions: the forward steps from the first layout, in order.

Version 1 is :data:`~harkback.adapters.stores.sql.schema.SCHEMA` (every file harkback
wrote before versions moved; the vector and title tables it may lack are added by any
writable open, ``IF NOT EXISTS``). A new file is made at version 1 and brought forward by
these same steps, so a new file and a migrated one cannot differ. The version lives in
``PRAGMA user_version``: it sits in the file's header, which every harkback (older ones
too) reads before anything else, and it changes in the same transaction as the steps.

To change the schema, or what the index is given for a text (the tokens), add a step at
the end; never edit one that shipped. A step may rewrite rows in Python in the same
transaction (version 3 re-indexes the texts whose tokens changed).

>>> from harkback.adapters.stores.migration import check_order, latest
>>> check_order(MIGRATIONS) is None, latest(MIGRATIONS)
(True, 3)
"""

from __future__ import annotations

import sqlite3

from harkback.adapters.stores import sqlite_voicing
from harkback.adapters.stores.migration import Migration

MIGRATIONS: tuple[Migration[sqlite3.Connection], ...] = (
    Migration(
        version=2, about="sessions.project: the folder a session worked in",
        # Adding a column with a constant default rewrites no row: instant at any size.
        statements=("ALTER TABLE sessions ADD COLUMN project TEXT NOT NULL DEFAULT ''",),
        # TEMP objects are found before the file's own, so reads see the column (empty);
        # SQLite flattens the view, so the table's indexes still serve every query.
        read_view=("CREATE TEMP VIEW sessions AS SELECT *, '' AS project FROM main.sessions",),
    ),
    Migration(
        version=sqlite_voicing.VOICED_VERSION, about=sqlite_voicing.ABOUT, statements=(),
        rewrite=sqlite_voicing.reindex,
        # Read-only, the index is read as it is: each query word is devoiced as this
        # version's index holds it (sqlite_voicing.readable); nothing to make in memory.
        read_view=(),
    ),
)
"""Every step, oldest first; step *n* leads to version *n + 1*."""
