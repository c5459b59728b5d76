"""The SQLite store's totals for ``harkback stats``, read in one transaction.

>>> import sqlite3
>>> from harkback.adapters.stores.sqlite_connection import connect
>>> from harkback.adapters.stores.sql.schema import SCHEMA_VERSION
>>> opened = connect(Path(":memory:"), readonly=False, busy_timeout=1.0).unwrap()
>>> read_stats(opened.connection, Path(":memory:")).schema_version == SCHEMA_VERSION
True
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harkback.adapters.sqlite_files import side_file
from harkback.stages.stats import SourceCount, StoreStats, by_source

SESSIONS_BY_SOURCE = """SELECT source, COUNT(*), MIN(started_at), MAX(started_at)
FROM sessions GROUP BY source"""

MESSAGES_BY_SOURCE = """SELECT s.source, COUNT(*) FROM messages AS m
JOIN sessions AS s ON s.id = m.session_id GROUP BY s.source"""

SOURCE_NAMES = "SELECT DISTINCT source FROM sessions"
"""The sources held: a scan of the sessions_source index (schema version 5; of the sessions
read-only in an older file), never of the messages."""

VECTORS_BY_MODEL = """SELECT v.name, COUNT(*) FROM message_vectors AS mv
JOIN vector_models AS v ON v.id = mv.model_id GROUP BY v.name ORDER BY v.name"""


def _has_table(connection: sqlite3.Connection, name: str) -> bool:
    return connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                              (name,)).fetchone() is not None


def bytes_on_disk(path: Path) -> int | None:
    """The size of the database file with its ``-wal`` and ``-shm`` files; None when
    ``path`` is no file (``:memory:``)."""
    if not path.is_file():
        return None
    sides = (side_file(path, suffix) for suffix in ("-wal", "-shm"))
    return path.stat().st_size + sum(p.stat().st_size for p in sides if p.is_file())


def source_names(connection: sqlite3.Connection) -> tuple[str, ...]:
    """The sources the file holds sessions of, sorted (in Python: the same order for every
    store, whatever a database's collation)."""
    return tuple(sorted(str(row[0]) for row in connection.execute(SOURCE_NAMES)))


def read_stats(connection: sqlite3.Connection, path: Path) -> StoreStats:
    """Count what the file holds; tables an older or read-only file lacks count 0."""
    connection.execute("BEGIN")
    try:
        rows = connection.execute(SESSIONS_BY_SOURCE).fetchall()
        messages = dict(connection.execute(MESSAGES_BY_SOURCE).fetchall())
        vectors: list[tuple[str, int]] = []
        if _has_table(connection, "message_vectors"):
            vectors = [(str(name), int(n))
                       for name, n in connection.execute(VECTORS_BY_MODEL).fetchall()]
        cached = 0
        if _has_table(connection, "summary_cache"):
            cached = connection.execute("SELECT COUNT(*) FROM summary_cache").fetchone()[0]
        version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    finally:
        connection.execute("COMMIT")
    sources = by_source(SourceCount(str(source), int(n), int(messages.get(source, 0)))
                        for source, n, _low, _high in rows)
    starts = [r[2] for r in rows if r[2] is not None] + [r[3] for r in rows if r[3] is not None]
    return StoreStats(sessions=sum(s.sessions for s in sources),
                      messages=sum(s.messages for s in sources), sources=sources,
                      oldest=min(starts, default=None), newest=max(starts, default=None),
                      bytes_on_disk=bytes_on_disk(path), vectors=tuple(vectors),
                      cached_summaries=int(cached), schema_version=version)
