"""The PostgreSQL store's tables, and what an open checks before it trusts a database.

A database is harkback's when it holds the ``harkback_schema`` table; its one row names the
schema version. A writable open of an empty database creates every table; a database
holding other tables and no ``harkback_schema`` is someone else's and is never written to.

>>> SCHEMA_VERSION
1
>>> all(statement.startswith("CREATE") for statement in SCHEMA)
True
"""

from __future__ import annotations

SCHEMA_VERSION = 1
"""The version this harkback reads and writes; bump it when a table or the indexed text
changes."""

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE harkback_schema (
        singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
        version INTEGER NOT NULL
    )""",
    # ``tokens``/``length``: the title and source as the title index sees them.
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT '',
        started_at DOUBLE PRECISION,
        ended_at DOUBLE PRECISION,
        parent_session_id TEXT,
        end_reason TEXT NOT NULL DEFAULT '',
        tokens TSVECTOR NOT NULL,
        length INTEGER NOT NULL
    )""",
    "CREATE INDEX sessions_parent ON sessions (parent_session_id)",
    "CREATE INDEX sessions_started ON sessions (started_at)",
    "CREATE INDEX sessions_tokens ON sessions USING GIN (tokens)",
    # ``id`` is given by the ingest in write order, as SQLite's row id is: ties in score
    # go to the older row in both stores, and the newest rows come first in the fill.
    """CREATE TABLE messages (
        id BIGINT PRIMARY KEY,
        session_id TEXT NOT NULL,
        position INTEGER NOT NULL CHECK (position >= 0),
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
        content TEXT NOT NULL DEFAULT '',
        tool_name TEXT NOT NULL DEFAULT '',
        tool_call_id TEXT NOT NULL DEFAULT '',
        tool_calls TEXT,
        timestamp DOUBLE PRECISION,
        tokens TSVECTOR NOT NULL,
        length INTEGER NOT NULL,
        UNIQUE (session_id, position)
    )""",
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
    """CREATE TABLE summary_cache (
        root_session_id TEXT NOT NULL,
        content TEXT NOT NULL,
        query TEXT NOT NULL,
        model TEXT NOT NULL,
        prompt_version TEXT NOT NULL,
        kind TEXT NOT NULL,
        text TEXT NOT NULL,
        note TEXT NOT NULL,
        cited TEXT NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (root_session_id, content, query, model, prompt_version)
    )""",
    """CREATE TABLE import_sources (
        location TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        first_imported_at DOUBLE PRECISION NOT NULL,
        last_imported_at DOUBLE PRECISION NOT NULL,
        cursor TEXT NOT NULL DEFAULT ''
    )""",
    """CREATE TABLE import_marks (
        location TEXT NOT NULL,
        item TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        sessions INTEGER NOT NULL DEFAULT 0,
        messages INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (location, item)
    )""",
)

TABLES = ("harkback_schema", "sessions", "messages", "index_totals", "vector_models",
          "message_vectors", "summary_cache", "import_sources", "import_marks")
"""Every table :data:`SCHEMA` creates."""

FIRST_ROWS: tuple[str, ...] = (
    f"INSERT INTO harkback_schema (version) VALUES ({SCHEMA_VERSION})",
    "INSERT INTO index_totals DEFAULT VALUES",
)

WRITE_LOCK = 0x6861726B  # "hark"
"""The advisory lock every ingest holds for its transaction: writers take turns (readers
never wait), so row ids grow in write order and the totals stay exact."""

HAS_SCHEMA = "SELECT to_regclass('harkback_schema') IS NOT NULL"
VERSION = "SELECT version FROM harkback_schema"
OTHER_TABLES = (
    "SELECT count(*) FROM pg_catalog.pg_tables "
    "WHERE schemaname = ANY (current_schemas(false))")
"""Tables visible on the search path: an empty database has none."""


def version_problem(found: int, where: str) -> str | None:
    """Why a database of schema version ``found`` cannot be used, or None.

    >>> version_problem(2, "db").split(";")[0]
    'db has harkback schema version 2, newer than this harkback knows (1)'
    """
    if found == SCHEMA_VERSION:
        return None
    if found > SCHEMA_VERSION:
        return (f"{where} has harkback schema version {found}, newer than this harkback "
                f"knows ({SCHEMA_VERSION}); upgrade harkback to use it")
    return (f"{where} has harkback schema version {found}; this harkback reads version "
            f"{SCHEMA_VERSION}")
