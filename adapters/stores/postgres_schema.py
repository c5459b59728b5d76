"""The PostgreSQL store's tables, and what an open checks before it trusts a database.

A database is harkback's when it holds the ``harkback_schema`` table; its one row names the
schema version. :data:`SCHEMA` is the first layout (version 1, never edited once shipped);
:mod:`~harkback.adapters.stores.postgres_migrations` holds the steps from it to this
harkback's version. A writable open of an empty database creates version 1 and applies
every step; a database holding other tables and no ``harkback_schema`` is someone else's
and is never written to.

>>> all(statement.startswith("CREATE") for statement in SCHEMA)
True
>>> [s.split("(")[0].split()[-1] for s in SCHEMA if s.startswith("CREATE TABLE")] == list(
...     TABLES[:len(FIRST_TABLES)])
True
"""

from __future__ import annotations

from harkback.adapters.stores import import_ledger, summary_cache
from harkback.adapters.stores.sql import schema as sqlite_schema


def from_sqlite(statement: str, extra: str = "") -> str:
    """A table of the SQLite store in PostgreSQL's words, with ``extra`` columns added.

    >>> from_sqlite("CREATE TABLE t (id INTEGER PRIMARY KEY, at REAL) WITHOUT ROWID", "x INT")
    'CREATE TABLE t (id BIGINT PRIMARY KEY, at DOUBLE PRECISION, x INT)'
    """
    body = statement.replace("WITHOUT ROWID", "").rstrip().removesuffix(")").rstrip()
    body = body.replace("id INTEGER PRIMARY KEY", "id BIGINT PRIMARY KEY").replace(
        " REAL", " DOUBLE PRECISION")
    return f"{body}, {extra})" if extra else f"{body})"


def _sqlite_table(name: str) -> str:
    return next(s for s in sqlite_schema.SCHEMA if s.startswith(f"CREATE TABLE {name} "))


def ledger_table(name: str) -> str:
    """The SQLite ledger's statement creating table ``name``."""
    return next(s for s in import_ledger.SCHEMA if s.split("(")[0].split()[-1] == name)


SCHEMA: tuple[str, ...] = (
    """CREATE TABLE harkback_schema (
        singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
        version INTEGER NOT NULL
    )""",
    # The SQLite store's tables, plus ``tokens``/``length``: the text as its index sees it
    # (a session's title and source, a message's searchable text) and its token count.
    from_sqlite(_sqlite_table("sessions"), "tokens TSVECTOR NOT NULL, length INTEGER NOT NULL"),
    "CREATE INDEX sessions_parent ON sessions (parent_session_id)",
    "CREATE INDEX sessions_started ON sessions (started_at)",
    "CREATE INDEX sessions_tokens ON sessions USING GIN (tokens)",
    from_sqlite(_sqlite_table("messages"), "tokens TSVECTOR NOT NULL, length INTEGER NOT NULL"),
    # ``id`` is given by the ingest in write order, as SQLite's row id is: ties in score
    # go to the older row in both stores, and the newest rows come first in the fill.
    "CREATE INDEX messages_tokens ON messages USING GIN (tokens) WITH (fastupdate = on)",
    # What BM25 needs of the whole index, kept by every ingest (one row); ``generation``
    # moves with every ingest, so counts remembered by a reader know when they went stale.
    """CREATE TABLE index_totals (
        singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
        messages BIGINT NOT NULL DEFAULT 0,
        message_tokens BIGINT NOT NULL DEFAULT 0,
        sessions BIGINT NOT NULL DEFAULT 0,
        session_tokens BIGINT NOT NULL DEFAULT 0,
        generation BIGINT NOT NULL DEFAULT 0
    )""",
    "CREATE TABLE vector_models (id SERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
    "dimensions INTEGER NOT NULL CHECK (dimensions > 0))",
    """CREATE TABLE message_vectors (
        model_id INTEGER NOT NULL REFERENCES vector_models (id) ON DELETE CASCADE,
        message_id BIGINT NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        vector REAL[] NOT NULL,
        PRIMARY KEY (model_id, message_id)
    )""",
    "CREATE INDEX message_vectors_message ON message_vectors (message_id)",
    from_sqlite(summary_cache.CREATE_TABLE),
    *(from_sqlite(ledger_table(name)) for name in ("import_sources", "import_marks")),
)
"""Version 1: the tables of the first PostgreSQL store."""

FIRST_TABLES = ("harkback_schema", "sessions", "messages", "index_totals", "vector_models",
                "message_vectors", "summary_cache", "import_sources", "import_marks")
"""The tables :data:`SCHEMA` creates."""

TABLES = (*FIRST_TABLES, "import_mark_sessions")
"""Every table of the current version."""

FIRST_ROWS: tuple[str, ...] = (
    "INSERT INTO harkback_schema (version) VALUES (1)",
    "INSERT INTO index_totals DEFAULT VALUES",
)

WRITE_LOCK = 0x6861726B  # "hark"
"""The first key of the advisory lock every ingest holds for its transaction: writers of
one store take turns (readers never wait), so row ids grow in write order and the totals
stay exact. Up to schema version 6 it was the whole lock, one for the database: stores in
two schemas of one database took turns (see :data:`WRITE_KEYS`)."""

STORE_SCHEMA = (
    "(SELECT n.nspname FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n "
    "ON n.oid = c.relnamespace WHERE c.oid = to_regclass('harkback_schema'))")
"""The schema holding the store, as an SQL expression (NULL: none on the search path). Not
``current_schema()``: a role's own schema may lead the path and hold none of its tables."""

SCHEMA_KEY = f"hashtext(coalesce({STORE_SCHEMA}, current_schema())) & 2147483647"
"""An advisory lock's second key made of the store's schema (the one it would be made in
when there is none yet), as SQL: the write lock's and the sync lock's."""

KEYED_WRITES = 7
"""The first schema version whose writers lock :data:`WRITE_KEYS`; an older harkback
refuses to write a store of a version it does not know, so none of them writes one of
this version under the old database-wide key (``pg_advisory_xact_lock(WRITE_LOCK)``)."""

WRITE_KEYS = f"{WRITE_LOCK}, {SCHEMA_KEY}"
"""The write lock's two keys, as SQL: stores in two schemas of one database write at
once, the writers of one store take turns."""
PLACES = (
    f"SELECT {STORE_SCHEMA}, "
    "current_schema(), current_setting('search_path'), current_user, "
    "coalesce(has_schema_privilege(current_schema(), 'CREATE'), false)")
"""The schema holding the store (NULL: none on the search path), the search path's first
schema that exists and this role may use (NULL: none; tables are created there, and every
statement names the store's tables unqualified, so they resolve there first), the search
path as set, this role, and whether it may create tables in that first schema."""
SHADOWED = (
    "SELECT n.nspname FROM unnest(%s::text[]) AS t (name) JOIN pg_catalog.pg_class AS c "
    "ON c.oid = to_regclass(t.name) JOIN pg_catalog.pg_namespace AS n "
    "ON n.oid = c.relnamespace WHERE n.nspname <> %s LIMIT 1")
"""The schema (NULL: none) whose table of a name of harkback's (``TABLES``, the first
parameter) the search path finds before the store's schema (the second)."""
VERSION = "SELECT version FROM harkback_schema"
HAS_STORE = "SELECT to_regclass('harkback_schema') IS NOT NULL"
OWNERS = (
    "SELECT pg_get_userbyid(c.relowner), pg_has_role(c.relowner, 'USAGE') "
    "FROM unnest(%s::text[]) AS t (name) JOIN pg_catalog.pg_class AS c "
    "ON c.oid = to_regclass(t.name) GROUP BY c.relowner ORDER BY 1")
"""The roles owning the store's tables (those of :data:`TABLES`, the parameter, it holds),
by name: who may migrate it, and for each whether this role holds its rights, being it or
a member inheriting them (a ``NOINHERIT`` member does not, as itself)."""
SET_VERSION = "UPDATE harkback_schema SET version = %s"
STORES_ELSEWHERE = (
    "SELECT n.nspname, has_schema_privilege(n.oid, 'USAGE') FROM pg_catalog.pg_class AS c "
    "JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
    "WHERE c.relname = 'harkback_schema' AND c.relkind IN ('r', 'p') "
    "AND NOT n.nspname = ANY (current_schemas(false)) ORDER BY 1 LIMIT 3")
"""Schemas of the database, off the search path, that hold a harkback store: where a URL
that left out its ``search_path`` option meant to go; and whether this role may use each
(one it may not is off ``current_schemas`` even when the URL names it)."""
OTHER_TABLES = (
    "SELECT count(*) FROM pg_catalog.pg_tables "
    "WHERE schemaname = ANY (current_schemas(false))")
"""Tables visible on the search path: an empty database has none."""
