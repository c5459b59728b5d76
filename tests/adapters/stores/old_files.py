"""SQLite files as older harkback versions left them, and how to tell a file was not written."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Conversation
from tests.adapters.stores.store_contract import ok

FileState = tuple[list[str], bytes, int]


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


async def old_file(path: Path, conversations: Sequence[Conversation]) -> None:
    """A database holding ``conversations`` as harkback wrote it before vectors and titles
    were indexed: schema version 1, and no vector or title tables or triggers."""
    with SqliteStore.open(path).unwrap() as writer:
        await ok(writer.ingest(conversations))
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        for trigger in ("message_vectors_message_removed", "message_vectors_message_changed",
                        "session_titles_stale"):
            raw.execute(f"DROP TRIGGER {trigger}")
        for table in ("message_vectors", "vector_models", "session_titles_fts",
                      "session_titles"):
            raw.execute(f"DROP TABLE {table}")
    finally:
        raw.close()
    # The same objects as a file made from the version 1 schema alone.
    reference = path.with_name("reference.db")
    with sqlite3.connect(reference) as made:
        for statement in schema.SCHEMA:
            made.execute(statement)
    made.close()
    assert schema_names(path) == schema_names(reference)
    reference.unlink()
