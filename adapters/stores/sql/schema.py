"""The SQLite store's tables: the first schema (version 1) and the vector and title tables
added later.

A file is harkback's when its ``application_id`` is
:data:`~harkback.adapters.sqlite_files.APPLICATION_ID`; its ``user_version`` is its schema
version, brought to :data:`SCHEMA_VERSION` by the steps of
:mod:`~harkback.adapters.stores.sql.migrations`. Tables that came after version 1 without
a version step (vectors, titles) are created ``IF NOT EXISTS`` by any writer that finds
them missing.

>>> import re
>>> sorted(re.findall(r"IF NOT EXISTS (\\w+)", " ".join(VECTOR_SCHEMA))) == sorted(VECTOR_OBJECTS)
True
>>> sorted(re.findall(r"IF NOT EXISTS (\\w+)", " ".join(TITLE_SCHEMA))) == sorted(TITLE_OBJECTS)
True
"""

from __future__ import annotations

from harkback.adapters.stores.migration import latest
from harkback.adapters.stores.sql.migrations import MIGRATIONS

SCHEMA_VERSION = latest(MIGRATIONS)
"""The version this harkback writes (``PRAGMA user_version``); a migration step moves it,
and so must a change to the indexed text."""

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT '',
        started_at REAL,
        ended_at REAL,
        parent_session_id TEXT,
        end_reason TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX sessions_parent ON sessions (parent_session_id)",
    "CREATE INDEX sessions_started ON sessions (started_at)",
    # UNIQUE (session_id, position) is also the index that serves lookups by session_id.
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        position INTEGER NOT NULL CHECK (position >= 0),
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
        content TEXT NOT NULL DEFAULT '',
        tool_name TEXT NOT NULL DEFAULT '',
        tool_call_id TEXT NOT NULL DEFAULT '',
        tool_calls TEXT,
        timestamp REAL,
        UNIQUE (session_id, position)
    )""",
    # Contentless: the text lives in messages; the index holds index_text() of it, and
    # rows are deleted by recomputing that same text.
    """CREATE VIRTUAL TABLE messages_fts USING fts5(
        body, content='', tokenize='unicode61 remove_diacritics 2'
    )""",
)

SESSION_COLUMNS = ("id, source, model, title, started_at, ended_at, parent_session_id, "
                   "end_reason, project")
MESSAGE_COLUMNS = ("session_id, position, role, content, tool_name, tool_call_id, tool_calls, "
                   "timestamp")
"""The columns of ``sessions`` and ``messages`` (but the row id) in the order rows carry them,
at :data:`SCHEMA_VERSION`."""

VECTOR_SCHEMA: tuple[str, ...] = (
    # One row per embedding model. The triggers below keep ``vectors`` (so counting is one
    # lookup) and ``generation`` (bumped by every change to the model's vectors, so a
    # matrix cached in memory knows when it is stale, whichever connection wrote).
    """CREATE TABLE IF NOT EXISTS vector_models (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        dimensions INTEGER NOT NULL CHECK (dimensions > 0),
        vectors INTEGER NOT NULL DEFAULT 0,
        generation INTEGER NOT NULL DEFAULT 0
    )""",
    # Keyed by the message's row id. A rowid table keeps a vector of a few KiB in its leaf
    # page; WITHOUT ROWID would push every row of that size to an overflow page.
    """CREATE TABLE IF NOT EXISTS message_vectors (
        model_id INTEGER NOT NULL,
        message_id INTEGER NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (model_id, message_id)
    )""",
    "CREATE INDEX IF NOT EXISTS message_vectors_message ON message_vectors (message_id)",
    """CREATE TRIGGER IF NOT EXISTS message_vectors_added AFTER INSERT ON message_vectors
    BEGIN
        UPDATE vector_models SET vectors = vectors + 1, generation = generation + 1
        WHERE id = new.model_id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS message_vectors_removed AFTER DELETE ON message_vectors
    BEGIN
        UPDATE vector_models SET vectors = vectors - 1, generation = generation + 1
        WHERE id = old.model_id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS message_vectors_replaced AFTER UPDATE ON message_vectors
    BEGIN
        UPDATE vector_models SET generation = generation + 1
        WHERE id IN (old.model_id, new.model_id);
    END""",
    # A vector describes its message's content: it goes with the message, or when the
    # content changes. These live in the file, so every writer of it obeys them (an older
    # harkback that knows nothing of vectors too).
    """CREATE TRIGGER IF NOT EXISTS message_vectors_message_removed AFTER DELETE ON messages
    BEGIN
        DELETE FROM message_vectors WHERE message_id = old.id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS message_vectors_message_changed
    AFTER UPDATE OF id, content ON messages
    WHEN old.id IS NOT new.id OR old.content IS NOT new.content
    BEGIN
        DELETE FROM message_vectors WHERE message_id = old.id;
    END""",
)
"""Tables for dense vectors, added to any writable database that lacks them.

Every statement is ``IF NOT EXISTS``, so files of schema version 1 made before vectors
existed gain them without a version bump (older harkback versions still open them).
"""

VECTOR_OBJECTS = ("vector_models", "message_vectors", "message_vectors_message",
                  "message_vectors_added", "message_vectors_removed",
                  "message_vectors_replaced", "message_vectors_message_removed",
                  "message_vectors_message_changed")
"""The names :data:`VECTOR_SCHEMA` creates."""

VECTOR_OBJECT_COUNT = (
    "SELECT COUNT(*) FROM sqlite_master WHERE name IN (SELECT value FROM json_each(?))")
"""How many of the names bound (as a JSON list) exist in the schema."""

TITLE_SCHEMA: tuple[str, ...] = (
    # One row per session: the index text of its title, source and project's name
    # (index_text() of Session.text_for_search(), kept so the contentless index below can
    # delete it whatever the tokenizer later becomes).
    # Its own integer key, because a sessions row's implicit rowid may change on VACUUM.
    """CREATE TABLE IF NOT EXISTS session_titles (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL UNIQUE,
        body TEXT NOT NULL
    )""",
    """CREATE VIRTUAL TABLE IF NOT EXISTS session_titles_fts USING fts5(
        body, content='', tokenize='unicode61 remove_diacritics 2'
    )""",
    # A writer that knows nothing of titles (an older harkback) may change a title, a
    # source or a project (whose name is indexed too, since version 6): its stale index row
    # goes, and the next writable open indexes the session again.
    """CREATE TRIGGER IF NOT EXISTS session_titles_stale
    AFTER UPDATE OF title, source, project ON sessions
    WHEN old.title IS NOT new.title OR old.source IS NOT new.source
        OR old.project IS NOT new.project
    BEGIN
        INSERT INTO session_titles_fts (session_titles_fts, rowid, body)
            SELECT 'delete', id, body FROM session_titles WHERE session_id = old.id;
        DELETE FROM session_titles WHERE session_id = old.id;
    END""",
)
"""The title index, added to any writable database that lacks it (``IF NOT EXISTS``, as
:data:`VECTOR_SCHEMA`), then filled for the sessions it misses."""

TITLE_OBJECTS = ("session_titles", "session_titles_fts", "session_titles_stale")
"""The names :data:`TITLE_SCHEMA` creates."""
