"""Titles in the SQLite store: the title index kept beside the sessions, and searched.

A writable open adds the index to a file made before it existed and fills it for every
session it misses (:func:`prepare`); each ingest replaces its sessions' rows in the same
transaction (:func:`replace`). A read-only open of such a file changes nothing: its title
search finds no sessions (:func:`search`).

>>> import sqlite3
>>> from harkback.adapters.stores.sql import schema
>>> connection = sqlite3.connect(":memory:", isolation_level=None)
>>> for statement in schema.SCHEMA:
...     _ = connection.execute(statement)
>>> _ = connection.execute("ALTER TABLE sessions ADD COLUMN project TEXT NOT NULL DEFAULT ''")
>>> _ = connection.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION}")
>>> _ = connection.execute("INSERT INTO sessions (id, title) VALUES ('s1', 'CORS fix')")
>>> has_title_schema(connection), prepare(connection), has_title_schema(connection)
(False, 1, True)
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Sequence

from harkback.adapters.stores import search_plan
from harkback.adapters.stores.damaged_rows import session_reader
from harkback.adapters.stores.sql import rows, schema, titles
from harkback.adapters.stores.sql.statement import Row, Statement
from harkback.adapters.stores.sqlite_transaction import immediate
from harkback.stages.ports import MatchQuery
from harkback.stages.records import Session, TitleHit, project_name
from harkback.stages.text.tokens import index_text

RANKED_FETCH_SHARE = 1.5
"""A title search joins FTS5's best ``share × limit`` titles (and every title tied with
the last of them) to their sessions, then filters them (see :func:`search`)."""


def has_title_schema(connection: sqlite3.Connection) -> bool:
    """Whether the file has every table and trigger of the title index."""
    found: int = connection.execute(schema.VECTOR_OBJECT_COUNT,
                                    (json.dumps(schema.TITLE_OBJECTS),)).fetchone()[0]
    return found == len(schema.TITLE_OBJECTS)


def prepare(connection: sqlite3.Connection) -> int:
    """Create the title index when missing and index the sessions it misses, in one
    transaction; returns how many were indexed. Only for a writable connection.

    Counting both tables first keeps an open of an up-to-date file at two counts.
    """
    if has_title_schema(connection):
        stored, indexed = connection.execute(titles.COUNTS).fetchone()
        if stored == indexed:
            _merge_as_written(connection)
            return 0
    with immediate(connection):
        for statement in schema.TITLE_SCHEMA:
            connection.execute(statement)
        # Checked as every read checks a session: a title stored as bytes (another
        # program's write, which also takes the session out of the index) is the store's
        # damage in one line, the open rolled back, not an internal error.
        missing = [session_reader(_title_row)(row) for row in connection.execute(titles.MISSING)]
        replace(connection, missing)
    _merge_as_written(connection)
    return len(missing)


_TITLED_PROJECTS = ("SELECT id, title, source, project FROM sessions WHERE project != '' "
                    "AND id IN (SELECT session_id FROM session_titles)")
_HAS_TITLES = "SELECT COUNT(*) FROM sqlite_master WHERE name = 'session_titles'"


def index_projects(connection: sqlite3.Connection) -> int:
    """The migration to schema version 6 (inside its transaction): the title index's
    trigger watches the project too, and each indexed session with a project is indexed
    again, its project's name now beside its title; returns how many. A file without the
    index gets it, with the names, from :func:`prepare` after the steps.
    """
    if not connection.execute(_HAS_TITLES).fetchone()[0]:
        return 0
    connection.execute("DROP TRIGGER IF EXISTS session_titles_stale")
    for statement in schema.TITLE_SCHEMA:
        connection.execute(statement)
    sessions = [s for s in map(session_reader(_title_row),
                               connection.execute(_TITLED_PROJECTS).fetchall())
                if project_name(s.project)]
    replace(connection, sessions)
    return len(sessions)


def _title_row(row: Row) -> Session:
    """A session of a :data:`~harkback.adapters.stores.sql.titles.MISSING` row (id, title,
    source, project), its texts checked as
    :func:`~harkback.adapters.stores.sql.rows.session_from_row` checks them."""
    session_id, title, source, project = row
    return rows.session_from_row((session_id, source, "", title, None, None, None, "", project))


def _merge_as_written(connection: sqlite3.Connection) -> None:
    # Kept in the index's own config table: set once per file, one read on later opens.
    # Each write's commit adds a segment that every title lookup then reads; merged as
    # they come, the index stays in a few (~0.06 ms a write; round 15).
    setting = connection.execute(titles.MERGE_SETTING).fetchone()
    if setting is None or setting[0] != titles.MERGE_AT:
        connection.execute(titles.SET_MERGE, (titles.MERGE_AT,))


def replace(connection: sqlite3.Connection, sessions: Sequence[Session]) -> None:
    """Index these sessions' titles, replacing what was indexed for them (inside the
    caller's transaction)."""
    if not sessions:
        return
    ids = [s.id for s in sessions]
    for statement in (titles.unindex(ids), titles.forget(ids)):
        _execute(connection, statement)
    connection.executemany(titles.INSERT_TITLE,
                           [(s.id, index_text(s.text_for_search())) for s in sessions])
    _execute(connection, titles.index(ids))


def search(connection: sqlite3.Connection, query: MatchQuery) -> tuple[TitleHit, ...]:
    """Sessions whose title, source or project's name matches, best first; ``score`` is
    ``-bm25``.

    A term or phrase found in more than ``query.max_scored`` titles selects none (BM25
    would score every one of them: 25 ms for a source shared by 10,000 sessions); the
    rest select, and the whole expression filters (:mod:`search_plan`). Only the best
    ranked titles are joined to their sessions
    (:func:`~harkback.adapters.stores.sql.titles.ranked_search`). A file without the index
    (opened read-only, made before it existed) has none.
    """
    if not has_title_schema(connection):
        return ()
    cap = query.max_scored
    common = frozenset() if cap is None else frozenset(
        unit for unit in search_plan.selecting_units(query.expression)
        if _execute(connection, titles.count_matches(unit, cap)).fetchone()[0] > cap)
    expression, within = query.expression, None
    if common:
        narrowed = search_plan.narrow(query.expression, common)
        if narrowed is None:
            return ()
        expression = narrowed
        within = None if search_plan.is_disjunction(query.expression) else query.expression
    # FTS5 ranks every match first and only the best are joined to their sessions (a
    # page of ``sessions`` each); when the filters leave too few of them, the full
    # statement decides. Scoped or time-bounded searches drop too many to try.
    rows: list[Row] = []
    left_out = 1
    if not (query.sources or query.projects or query.since is not None
            or query.until is not None):
        fetch = math.ceil(RANKED_FETCH_SHARE * query.limit)
        *rows, last = _execute(connection, titles.ranked_search(
            query, fetch, expression=expression, within=within)).fetchall()
        left_out = last[6]
    if len(rows) < query.limit and left_out > 0:
        rows = _execute(connection, titles.search(
            query, expression=expression, within=within)).fetchall()
    return tuple(TitleHit(session_id=row[0], title=row[1], source=row[2], started_at=row[3],
                          project=row[4], score=-row[5])
                 for row in rows)


def _execute(connection: sqlite3.Connection, statement: Statement) -> sqlite3.Cursor:
    return connection.execute(statement.sql, statement.params)
