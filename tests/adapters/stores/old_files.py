"""SQLite files as older harkback versions left them, and how to tell a file was not written."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from harkback.adapters.sqlite_files import APPLICATION_ID
from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.tool_calls import encode_tool_calls
from harkback.stages.records import Conversation
from tests.support.old_tokens import first_index_text, first_split

FileState = tuple[list[str], bytes, int]

V1_SESSION = ("INSERT INTO sessions (id, source, model, title, started_at, ended_at, "
              "parent_session_id, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
V1_MESSAGE = ("INSERT INTO messages (session_id, position, role, content, tool_name, "
              "tool_call_id, tool_calls, timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
V1_INDEXED = "INSERT INTO messages_fts (rowid, body) VALUES (?, ?)"


def file_state(path: Path) -> FileState:
    """The files next to ``path``, its bytes and its modification time."""
    return sorted(p.name for p in path.parent.iterdir()), path.read_bytes(), \
        path.stat().st_mtime_ns


def schema_names(path: Path) -> set[str]:
    """The names of every table, index and trigger in the file."""
    with sqlite3.connect(path) as raw:
        names = {row[0] for row in raw.execute("SELECT name FROM sqlite_master")}
    raw.close()
    return names


def old_file(path: Path, conversations: Sequence[Conversation]) -> None:
    """A database holding ``conversations`` as the first harkback wrote it: schema version 1
    (its DDL, :data:`~harkback.adapters.stores.sql.schema.SCHEMA`, and its insert
    statements, here), in WAL mode, with no vector or title tables and no ``project``, its
    index given the tokens of that time (kana devoiced: :mod:`tests.support.old_tokens`)."""
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        raw.execute("PRAGMA journal_mode = WAL")
        raw.execute("BEGIN")
        for statement in schema.SCHEMA:
            raw.execute(statement)
        raw.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        raw.execute("PRAGMA user_version = 1")
        for conversation in conversations:
            s = conversation.session
            raw.execute(V1_SESSION, (s.id, s.source, s.model, s.title, s.started_at,
                                     s.ended_at, s.parent_session_id, s.end_reason))
            for m in conversation.messages:
                row_id = raw.execute(V1_MESSAGE, (
                    m.session_id, m.position, m.role, m.content, m.tool_name, m.tool_call_id,
                    encode_tool_calls(m.tool_calls), m.timestamp)).lastrowid
                raw.execute(V1_INDEXED, (row_id, first_index_text(m.text_for_search())))
        raw.execute("COMMIT")
    finally:
        raw.close()


def version_2_file(path: Path, conversations: Sequence[Conversation]) -> None:
    """A database holding ``conversations`` as harkback left it at schema version 2: the
    version-1 file, ``sessions.project`` (empty), and the title index, every index given
    the tokens of versions 1 and 2 (kana devoiced)."""
    old_file(path, conversations)
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        raw.execute("BEGIN")
        raw.execute("ALTER TABLE sessions ADD COLUMN project TEXT NOT NULL DEFAULT ''")
        for statement in (*schema.VECTOR_SCHEMA, *schema.TITLE_SCHEMA):
            raw.execute(statement)
        for conversation in conversations:
            body = " ".join(first_split(conversation.session.text_for_search(), index=True))
            row_id = raw.execute("INSERT INTO session_titles (session_id, body) VALUES (?, ?)",
                                 (conversation.session.id, body)).lastrowid
            raw.execute("INSERT INTO session_titles_fts (rowid, body) VALUES (?, ?)",
                        (row_id, body))
        raw.execute("PRAGMA user_version = 2")
        raw.execute("COMMIT")
    finally:
        raw.close()
