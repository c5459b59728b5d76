"""The SQLite store's schema versions: the forward steps from the first layout, in order.

Version 1 is :data:`~harkback.adapters.stores.sql.schema.SCHEMA` (every file harkback
wrote before versions moved; the vector and title tables it may lack are added by any
writable open, ``IF NOT EXISTS``). A new file is made at version 1 and brought forward by
these same steps, so a new file and a migrated one cannot differ. The version lives in
``PRAGMA user_version``: it sits in the file's header, which every harkback (older ones
too) reads before anything else, and it changes in the same transaction as the steps.

To change the schema, or what the index is given for a text (the tokens), add a step at
the end; never edit one that shipped. A step may rewrite rows in Python in the same
transaction (version 3 re-indexes the texts whose tokens changed). A step may also
bring rows to what this harkback writes (version 4 dates the sessions stored undated;
version 6 indexes the sessions' project names beside their titles).

>>> from harkback.adapters.stores.migration import check_order, latest
>>> check_order(MIGRATIONS) is None, latest(MIGRATIONS)
(True, 6)
"""

from __future__ import annotations

import sqlite3

from harkback.adapters.stores import sqlite_voicing
from harkback.adapters.stores.migration import Migration

DATED_ABOUT = ("sessions stored with no start time start at their first dated message (or "
               "their end), as sessions stored since are dated")
DATE_UNDATED = (
    # What storable.dated gives a session at ingest: the earliest message time, else the end.
    "UPDATE sessions SET started_at = COALESCE((SELECT MIN(m.timestamp) FROM messages AS m "
    "WHERE m.session_id = sessions.id), ended_at) WHERE started_at IS NULL")
"""The step dating the sessions an older harkback stored undated (SQLite and PostgreSQL)."""

SOURCE_INDEX = "CREATE INDEX IF NOT EXISTS sessions_source ON sessions (source, started_at)"
"""The sessions by source (SQLite's version 5, PostgreSQL's 7): the sources held are read
from it, and a listing of the newest sessions of a source. ``IF NOT EXISTS``: one made by
hand under this name (a DBA's, before the step) does not stop the migration."""

PROJECT_ABOUT = ("the title index holds each session's project name (what --project "
                 "matches), so a search finds a session by it: the sessions with a project "
                 "are indexed again")


def _index_projects(connection: sqlite3.Connection) -> None:
    # Imported here: the title module reads the schema, which reads these migrations.
    from harkback.adapters.stores import sqlite_titles
    sqlite_titles.index_projects(connection)


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
    Migration(
        version=4, about=DATED_ABOUT, statements=(DATE_UNDATED,),
        # Read-only, the rows are read as they are: an undated session stays unlisted by
        # a time bound (and noted) until a writable open dates it.
        read_view=(),
    ),
    Migration(
        version=5, about="sessions_source: the sessions indexed by source",
        statements=(SOURCE_INDEX,),
        # Read-only, the sessions are read without it, as before (a scan): an index adds
        # no row and changes none.
        read_view=(),
    ),
    Migration(
        version=6, about=PROJECT_ABOUT, statements=(), rewrite=_index_projects,
        # Read-only, the title index is read as it is: a project's name finds nothing
        # there, as before, until a writable open indexes it.
        read_view=(),
    ),
)
"""Every step, oldest first; step *n* leads to version *n + 1*."""
