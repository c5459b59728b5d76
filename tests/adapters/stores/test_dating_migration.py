"""Sessions an older harkback stored undated (no ``started_at``, though their messages
carry times) are dated by their first dated message, or their end, as an ingest dates
them now: by the next writable open of the store (SQLite schema 4, PostgreSQL 6), never
by a read-only one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg

from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_migrations import MIGRATIONS as PG_MIGRATIONS
from harkback.adapters.stores.postgres_migrations import SCHEMA_VERSION as PG_VERSION
from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.migrations import DATED_ABOUT, MIGRATIONS
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import RecentQuery, SessionStore
from harkback.stages.records import Conversation, Message, Session
from tests.adapters.stores.old_files import file_state
from tests.adapters.stores.store_contract import ok
from tests.support.new_stores import store_locations


def _talk(sid: str, times: tuple[float | None, ...], ended_at: float | None = None
          ) -> Conversation:
    return Conversation(Session(id=sid, ended_at=ended_at), tuple(
        Message(session_id=sid, position=i, role="user", content=f"note {i}", timestamp=t)
        for i, t in enumerate(times)))


# Messages out of time order (the first dated is not the first written), one dated by its
# end only, one with no time at all.
CORPUS = (_talk("late-first", (None, 300.0, 200.0)), _talk("ended", (None,), ended_at=50.0),
          _talk("timeless", (None, None)), _talk("dated", (100.0,)))
DATED = {"late-first": 200.0, "ended": 50.0, "timeless": None, "dated": 100.0}
UNDONE = "UPDATE sessions SET started_at = NULL"


async def _starts(store: SessionStore) -> dict[str, float | None]:
    return {o.session.id: o.session.started_at
            for o in await ok(store.recent(RecentQuery(limit=10)))}


async def _bounded(store: SessionStore) -> set[str]:
    listed = await ok(store.recent(RecentQuery(limit=10, since=0.0)))
    return {o.session.id for o in listed}


async def test_a_writable_open_dates_a_version_3_files_undated_sessions(tmp_path: Path) -> None:
    """Read-only, the version-3 file is read as it is and not written; writable, each
    undated session gets its earliest message time (or its end), the timeless one none."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(CORPUS))
    with sqlite3.connect(path) as raw:
        raw.execute(UNDONE)
        raw.execute("PRAGMA user_version = 3")
    raw.close()
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert reader.schema == Migrated(3, 3, latest=schema.SCHEMA_VERSION)
        assert set((await _starts(reader)).values()) == {None}
    assert file_state(path) == before
    with SqliteStore.open(path).unwrap() as store:
        assert store.schema == Migrated(3, schema.SCHEMA_VERSION, (
            DATED_ABOUT, *(m.about for m in MIGRATIONS[3:])), latest=schema.SCHEMA_VERSION)
        assert await _starts(store) == DATED
        assert await _bounded(store) == {"late-first", "ended", "dated"}


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


async def test_a_writable_open_dates_a_version_5_databases_undated_sessions(url: str) -> None:
    """Read-only, the version-5 database asks for ``harkback migrate`` and is not written;
    writable, its undated sessions are dated as SQLite's are."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS))
    with psycopg.connect(url) as connection:
        connection.execute(UNDONE)
        connection.execute("UPDATE harkback_schema SET version = 5")
    refused = PostgresStore.open(url, readonly=True)
    assert "run `harkback migrate --db" in refused.failure().reason
    with psycopg.connect(url) as connection:
        assert connection.execute(
            "SELECT count(*) FROM sessions WHERE started_at IS NOT NULL").fetchone() == (0,)
    with PostgresStore.open(url).unwrap() as store:
        assert store.schema == Migrated(5, PG_VERSION, (
            DATED_ABOUT, *(m.about for m in PG_MIGRATIONS[5:])), latest=PG_VERSION)
        assert await _starts(store) == DATED
        assert await _bounded(store) == {"late-first", "ended", "dated"}
