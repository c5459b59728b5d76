"""PostgreSQL schema version 8: ``index_totals.unvacuumed``, the mark a redact's writes
leave until its ``VACUUM FULL`` (see :mod:`~harkback.adapters.stores.postgres_rewrite`).
A store of version 7 is brought to 8 by a writable open or ``harkback migrate``, its rows
kept; a read-only open asks for the migration and changes nothing. On a real server."""

from __future__ import annotations

import json

import psycopg

from harkback.adapters.stores import postgres_schema as schema
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_migrations import MIGRATIONS, SCHEMA_VERSION
from harkback.stages.ports import RecentQuery
from tests.adapters.stores.store_contract import match, ok
from tests.adapters.stores.test_migrations import CORPUS
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""

_COLUMN = ("SELECT count(*) FROM information_schema.columns WHERE table_name = "
           "'index_totals' AND column_name = 'unvacuumed' AND table_schema = current_schema()")


def back_to_version_7(url: str) -> None:
    """Undo step 8 (rows stay): no ``unvacuumed``, version 7."""
    with psycopg.connect(url) as connection:
        connection.execute("ALTER TABLE index_totals DROP COLUMN unvacuumed")
        connection.execute(schema.SET_VERSION, (7,))


def _state(url: str) -> tuple[object, ...]:
    """The version and whether ``unvacuumed`` is there."""
    with psycopg.connect(url) as connection:
        return (connection.execute(schema.VERSION).fetchone(),
                connection.execute(_COLUMN).fetchone())


async def test_a_writable_open_of_version_7_brings_it_to_8_keeping_its_rows(url: str) -> None:
    """One step, said once; the sessions, messages and hits read back as stored, and the
    mark starts unset (a redact finding nothing to change then does not compact)."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS))
        recent = await ok(store.recent(RecentQuery(limit=5)))
        hits = [(h.session_id, h.position) for h in await ok(store.search(match("bridge")))]
    back_to_version_7(url)
    with PostgresStore.open(url).unwrap() as store:
        assert store.schema == Migrated(7, SCHEMA_VERSION, tuple(m.about for m in MIGRATIONS[6:]),
                                        latest=SCHEMA_VERSION)
        assert await ok(store.recent(RecentQuery(limit=5))) == recent
        assert [(h.session_id, h.position)
                for h in await ok(store.search(match("bridge")))] == hits
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT unvacuumed FROM index_totals").fetchone() == (0,)
    assert _state(url) == ((SCHEMA_VERSION,), (1,))


async def test_a_read_only_open_of_version_7_asks_for_migrate_and_changes_nothing(
        url: str) -> None:
    """A dry-run redact opens read-only, and needs the mark: it asks for the migration."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS))
    back_to_version_7(url)
    refused = PostgresStore.open(url, readonly=True)
    assert "schema version 7; run `harkback migrate --db" in refused.failure().reason
    assert _state(url) == ((7,), (0,))


def test_harkback_migrate_says_step_8(url: str) -> None:
    """``harkback migrate`` on a database of version 7: one line, 7 -> the latest and what
    each step did, step 8 first."""
    with PostgresStore.open(url).unwrap():
        pass
    back_to_version_7(url)
    done = harkback("migrate", "--db", url)
    assert (done.returncode, done.stdout.strip()) == (
        0, f"{url}: schema version 7 -> {SCHEMA_VERSION} "
           f"({'; '.join(m.about for m in MIGRATIONS[6:])})")
    again = json.loads(harkback("migrate", "--db", url, "--json").stdout)
    assert (again["from"], again["to"], again["applied"]) == (SCHEMA_VERSION, SCHEMA_VERSION, [])
