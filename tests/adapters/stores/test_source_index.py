"""The sessions_source index (SQLite schema 5, PostgreSQL 7): the sources held and a listing
of one source's newest sessions read it (EXPLAIN, on a real file and a real server), in a
store made new and in one migrated from the version before; a read-only open of an older
SQLite file reads the sessions as before and writes nothing; ``harkback migrate`` says the
step."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest

from harkback.adapters.stores import postgres_reads
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_migrations import MIGRATIONS as PG_MIGRATIONS
from harkback.adapters.stores.sql import rows, schema
from harkback.adapters.stores.sql.migrations import MIGRATIONS
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_stats import SOURCE_NAMES
from harkback.stages.ports import RecentQuery
from harkback.stages.records import Conversation, Message, Session
from tests.adapters.stores.old_files import file_state
from tests.adapters.stores.store_contract import ok
from tests.adapters.stores.test_postgres_step_7 import back_to_version_6
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import new_database
from tests.support.postgres_server import PostgresServer

RARE = ("hermes", "zed")
"""The sources of a few sessions among many of one other: where the index pays."""


def _corpus() -> tuple[Conversation, ...]:
    def talk(sid: str, source: str, at: float) -> Conversation:
        return Conversation(Session(id=sid, source=source, started_at=at), (
            Message(session_id=sid, position=0, role="user", content=f"note {sid}"),))
    return (*(talk(f"c{i}", "codex", 1000.0 + i) for i in range(2000)),
            *(talk(f"{s}{i}", s, 10.0 * i) for s in RARE for i in range(3)))


CORPUS = _corpus()
NEWEST_ZED = ["zed2", "zed1"]
TO_VERSION_4 = ("DROP INDEX sessions_source", "PRAGMA user_version = 4")


def _sqlite_plan(path: Path, sql: str, params: tuple[Any, ...] = ()) -> str:
    with sqlite3.connect(path) as raw:
        plan = " | ".join(row[3] for row in raw.execute(f"EXPLAIN QUERY PLAN {sql}", params))
    raw.close()
    return plan


async def _listed(store: SqliteStore | PostgresStore) -> tuple[tuple[str, ...], list[str]]:
    newest = await ok(store.recent(RecentQuery(limit=2, sources=("zed",))))
    return await ok(store.source_names()), [o.session.id for o in newest]


@pytest.mark.parametrize("how", ["new", "migrated"])
async def test_sqlite_reads_the_sources_by_the_index(tmp_path: Path, how: str) -> None:
    """The sources held, and the newest sessions of a rare source, are read through
    sessions_source (not a walk of every session by start)."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(CORPUS))
    if how == "migrated":
        with sqlite3.connect(path) as raw:
            for statement in TO_VERSION_4:
                raw.execute(statement)
        raw.close()
    with SqliteStore.open(path).unwrap() as store:
        latest = schema.SCHEMA_VERSION
        assert store.schema == (Migrated(4, latest, tuple(m.about for m in MIGRATIONS[3:]),
                                         latest=latest)
                                if how == "migrated" else Migrated(latest, latest, latest=latest))
        assert await _listed(store) == (("codex", *RARE), NEWEST_ZED)
    listing = rows.recent(RecentQuery(limit=2, sources=("zed",)))
    assert "USING COVERING INDEX sessions_source" in _sqlite_plan(path, SOURCE_NAMES)
    assert "SEARCH s USING INDEX sessions_source (source=?)" in _sqlite_plan(
        path, listing.sql, listing.params)


async def test_a_read_only_open_of_a_version_4_file_reads_it_unchanged(tmp_path: Path) -> None:
    """Read-only, a version-4 file is read as it is (no index: the sessions are scanned,
    with the same answers) and not written; ``harkback migrate`` then says 4 -> 5."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(CORPUS))
    with sqlite3.connect(path) as raw:
        for statement in TO_VERSION_4:
            raw.execute(statement)
    raw.close()
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert reader.schema == Migrated(4, 4, latest=schema.SCHEMA_VERSION)
        assert await _listed(reader) == (("codex", *RARE), NEWEST_ZED)
    assert file_state(path) == before
    done = harkback("migrate", "--db", str(path))
    assert (done.returncode, done.stdout.strip()) == (
        0, f"{path}: schema version 4 -> {schema.SCHEMA_VERSION} (sessions_source: the "
           f"sessions indexed by source; {'; '.join(m.about for m in MIGRATIONS[4:])})")
    assert "sessions_source" in _sqlite_plan(path, SOURCE_NAMES)


class Explaining:
    """A connection that asks the server for each statement's plan before running it."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection, self.plans = connection, list[str]()

    def execute(self, statement: str, params: Any = None) -> Any:
        plan = self.connection.execute(f"EXPLAIN {statement}", params).fetchall()
        self.plans.append(" | ".join(str(row[0]) for row in plan))
        return self.connection.execute(statement, params)


@pytest.mark.parametrize("how", ["new", "migrated"])
async def test_postgres_reads_the_sources_by_the_index(postgres_server: PostgresServer,
                                                       how: str) -> None:
    """The store's own statements for the sources held and the newest sessions of a rare
    source, as the server plans them once it has statistics: each reads sessions_source."""
    url = new_database(postgres_server, "sources")
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS))
    if how == "migrated":
        back_to_version_6(url)
    with PostgresStore.open(url).unwrap() as store:
        assert store.schema.after == PG_MIGRATIONS[-1].version
        assert await _listed(store) == (("codex", *RARE), NEWEST_ZED)
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("ANALYZE sessions")
        explaining = Explaining(connection)
        postgres_reads.source_names(explaining)  # type: ignore[arg-type]
        listed = postgres_reads.recent(explaining,  # type: ignore[arg-type]
                                       RecentQuery(limit=2, sources=("zed",)))
    assert [o.session.id for o in listed] == NEWEST_ZED
    assert len(explaining.plans) == 2
    assert all("sessions_source" in plan for plan in explaining.plans), explaining.plans


def test_harkback_migrate_on_a_server_says_the_step(postgres_server: PostgresServer) -> None:
    """``harkback migrate`` on a database of version 6: one line, 6 -> the latest and what
    each step did;
    ``--json`` then says it is up to date."""
    url = new_database(postgres_server, "sources")
    with PostgresStore.open(url).unwrap():
        pass
    back_to_version_6(url)
    done = harkback("migrate", "--db", url)
    assert (done.returncode, done.stdout.strip()) == (
        0, f"{url}: schema version 6 -> {PG_MIGRATIONS[-1].version} "
        f"({'; '.join(m.about for m in PG_MIGRATIONS[5:])})")
    again = json.loads(harkback("migrate", "--db", url, "--json").stdout)
    assert (again["from"], again["to"], again["applied"]) == (
        PG_MIGRATIONS[-1].version, PG_MIGRATIONS[-1].version, [])
