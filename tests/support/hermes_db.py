"""Build Hermes Agent ``state.db`` files of several schema eras, as the reference describes.

Three eras: ``v9`` (April 2026: no visibility columns, external-content FTS, rollback
journal), ``v18`` (gateway metadata, a nullable ``active`` column, inline FTS, WAL) and
``v30`` (every column, external-content FTS over a view, WAL). Tests insert rows
through :class:`HermesFile`, which writes only the columns the era has.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

V9 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, model TEXT, model_config TEXT,
    system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0,
    cache_read_tokens INTEGER DEFAULT 0, cache_write_tokens INTEGER DEFAULT 0,
    reasoning_tokens INTEGER DEFAULT 0, billing_provider TEXT, billing_base_url TEXT,
    billing_mode TEXT, estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT,
    cost_source TEXT, pricing_version TEXT, title TEXT, api_call_count INTEGER DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    reasoning_details TEXT, codex_reasoning_items TEXT
);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE UNIQUE INDEX idx_sessions_title ON sessions(title) WHERE title IS NOT NULL;
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content=messages, content_rowid=id);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
INSERT INTO schema_version VALUES (9);
"""

V18 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, session_key TEXT, chat_id TEXT,
    chat_type TEXT, thread_id TEXT, display_name TEXT, origin_json TEXT, model TEXT,
    model_config TEXT, system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL,
    ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0, title TEXT, api_call_count INTEGER DEFAULT 0
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL,
    token_count INTEGER, finish_reason TEXT, reasoning TEXT, active INTEGER
);
CREATE INDEX idx_messages_session ON messages(session_id, timestamp);
CREATE VIRTUAL TABLE messages_fts USING fts5(body);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, body) VALUES (
        new.id, coalesce(new.content, '') || ' ' || coalesce(new.tool_name, '') || ' '
                || coalesce(new.tool_calls, ''));
END;
INSERT INTO schema_version VALUES (18);
"""

V30 = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, created_source TEXT, user_id TEXT,
    session_key TEXT, chat_id TEXT, chat_type TEXT, thread_id TEXT, display_name TEXT,
    origin_json TEXT, expiry_finalized INTEGER, model TEXT, model_config TEXT,
    system_prompt TEXT, system_prompt_hash TEXT, parent_session_id TEXT,
    started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0, input_tokens INTEGER DEFAULT 0,
    output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0,
    estimated_cost_usd REAL, actual_cost_usd REAL, cost_status TEXT, api_call_count INTEGER,
    cwd TEXT, git_branch TEXT, git_repo_root TEXT, title TEXT, title_source TEXT,
    last_activity_at REAL, last_activity_description TEXT, profile_name TEXT,
    rewind_count INTEGER DEFAULT 0, archived INTEGER DEFAULT 0, pinned INTEGER DEFAULT 0,
    hidden INTEGER DEFAULT 0, last_read_at REAL, tool_names TEXT
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, effect_disposition TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT,
    reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT,
    codex_message_items TEXT, platform_message_id TEXT, observed INTEGER,
    _compressed_summary INTEGER DEFAULT 0, active INTEGER NOT NULL DEFAULT 1,
    compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT, display_kind TEXT,
    display_metadata TEXT, display_identity BLOB, display_order INTEGER, fts_content TEXT
);
CREATE INDEX idx_messages_session_id ON messages(session_id, id);
CREATE INDEX idx_messages_session_active ON messages(session_id, active, timestamp);
CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
CREATE VIEW messages_fts_src AS
    SELECT id, CASE WHEN role = 'tool' THEN substr(content, 1, 8192) ELSE content END
           AS content, tool_name, tool_calls FROM messages;
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content, tool_name, tool_calls)
    VALUES (new.id, new.content, new.tool_name, new.tool_calls);
END;
INSERT INTO schema_version VALUES (30);
INSERT INTO state_meta VALUES ('fts_storage_version', '3');
"""

ERAS = {"v9": (V9, "delete"), "v18": (V18, "wal"), "v30": (V30, "wal")}

BASE_TIME = 1_772_500_000.0
"""2026-03-03, when the sessions of these files happen."""


class HermesFile:
    """A Hermes database of one era being filled by a test; close it before importing."""

    def __init__(self, path: Path, era: str) -> None:
        """Create the file with ``era``'s schema and journal mode."""
        ddl, journal = ERAS[era]
        self.path = path
        self.era = era
        self.connection = sqlite3.connect(path, isolation_level=None)
        self.connection.execute(f"PRAGMA journal_mode = {journal}")
        self.connection.executescript(ddl)
        self.clock = BASE_TIME

    @classmethod
    def reopen(cls, path: Path, era: str) -> HermesFile:
        """A writer on an existing file, as a running Hermes would be."""
        self = cls.__new__(cls)
        self.path, self.era, self.clock = path, era, BASE_TIME + 86_400
        self.connection = sqlite3.connect(path, isolation_level=None)
        return self

    def columns(self, table: str) -> set[str]:
        """The columns ``table`` has in this era."""
        return {r[1] for r in self.connection.execute(f"PRAGMA table_info({table})")}

    def has(self, table: str, column: str) -> bool:
        """Does ``table`` have ``column`` in this era?"""
        return column in self.columns(table)

    def _insert(self, table: str, values: dict[str, Any]) -> int:
        present = self.columns(table)
        kept = {k: v for k, v in values.items() if k in present}
        names = ", ".join(f'"{k}"' for k in kept)
        marks = ", ".join("?" for _ in kept)
        cursor = self.connection.execute(
            f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(kept.values()))
        return int(cursor.lastrowid or 0)

    def session(self, session_id: str, *, source: str = "cli", parent: str | None = None,
                model_config: dict[str, Any] | None = None, **columns: Any) -> str:
        """Add a session row (columns the era lacks are dropped)."""
        self.clock += 60
        values = {"id": session_id, "source": source, "parent_session_id": parent,
                  "started_at": columns.pop("started_at", self.clock), "model": "hermes-4",
                  "model_config": json.dumps(model_config) if model_config else None,
                  "system_prompt": "You are Hermes." * 50, **columns}
        self._insert("sessions", values)
        return session_id

    def message(self, session_id: str, role: str, content: str | None, **columns: Any) -> int:
        """Add a message row and return its id (columns the era lacks are dropped)."""
        self.clock += 5
        values = {"session_id": session_id, "role": role, "content": content,
                  "timestamp": columns.pop("timestamp", self.clock), **columns}
        return self._insert("messages", values)

    def update(self, table: str, row_id: str | int, **columns: Any) -> None:
        """Change columns of one row."""
        sets = ", ".join(f'"{k}" = ?' for k in columns)
        self.connection.execute(f"UPDATE {table} SET {sets} WHERE id = ?",
                                (*columns.values(), row_id))

    def close(self) -> None:
        """Close the writer; a WAL file is checkpointed and removed."""
        self.connection.close()


def multimodal(*parts: dict[str, Any]) -> str:
    """A ``\\x00json:`` content value holding ``parts``."""
    return "\x00json:" + json.dumps(list(parts))
