"""PostgreSQL schema version 7: the trigger function finds the store's ``index_totals``
whatever the search path of the one deleting (a DBA in psql, a schema renamed), and the
write lock is the store's schema's: stores in two schemas of one database write at once,
one store's writers take turns, and a migration waits for a writer of the version before
(which locked the whole database). On a real server, in new and migrated stores."""

from __future__ import annotations

import asyncio
import concurrent.futures
import random
import string
import time

import psycopg
import pytest

from harkback.adapters.stores import postgres_schema as schema
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_connection import passing
from harkback.adapters.stores.postgres_migrations import MIGRATIONS, SCHEMA_VERSION
from harkback.adapters.stores.postgres_writes import take_write_lock
from harkback.adapters.stores.sql.migrations import SOURCE_INDEX
from tests.adapters.stores.store_contract import failed, ok
from tests.adapters.stores.test_migrations import CORPUS
from tests.adapters.stores.test_postgres_step_8 import back_to_version_7
from tests.conftest import conversation
from tests.support.new_stores import new_database
from tests.support.postgres_server import USER, PostgresServer, waits_for_a_lock

STEP_4_FUNCTION = next(s for s in MIGRATIONS[2].statements if "FUNCTION" in s)
READING = ("CREATE ROLE {role} LOGIN", "GRANT USAGE ON SCHEMA hb TO {role}",
           "GRANT SELECT ON ALL TABLES IN SCHEMA hb TO {role}")
"""What a role granted only reading is given (``{role}`` its name)."""


@pytest.fixture
def database(postgres_server: PostgresServer) -> str:
    """A new database with two empty schemas, ``hb`` and ``other``, for two stores."""
    url = new_database(postgres_server, "step7")
    with psycopg.connect(url) as connection:
        connection.execute("CREATE SCHEMA hb")
        connection.execute("CREATE SCHEMA other")
    return url


def in_schema(url: str, name: str) -> str:
    """``url`` with the search path ``name`` (a store of its own there)."""
    return f"{url}&options=-csearch_path%3D{name}"


def back_to_version_6(url: str) -> None:
    """Undo steps 8 and 7 (rows stay): the trigger function as step 4 made it (through the
    caller's search path), no ``sessions_source``, version 6."""
    back_to_version_7(url)
    with psycopg.connect(url) as connection:
        connection.execute(STEP_4_FUNCTION.replace("CREATE FUNCTION", "CREATE OR REPLACE "
                                                   "FUNCTION"))
        connection.execute("ALTER FUNCTION harkback_rewritten() RESET ALL")
        connection.execute("DROP INDEX sessions_source")
        connection.execute(schema.SET_VERSION, (6,))


async def made(url: str, how: str) -> None:
    """A store holding ``CORPUS`` at ``url``: made new, or left at version 6 and migrated."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS))
    if how == "migrated":
        back_to_version_6(url)
        with PostgresStore.open(url).unwrap() as store:
            assert store.schema == Migrated(6, SCHEMA_VERSION, tuple(
                m.about for m in MIGRATIONS[5:]), latest=SCHEMA_VERSION)


async def older_store_for(database: str, role: str, *granted: str) -> tuple[str, str]:
    """A store at version 6 in schema ``hb`` and a new login ``role`` given ``granted``
    (statements run by the owner, ``{role}`` in them named): the store's URL as its owner
    and as ``role``."""
    url = in_schema(database, "hb")
    await made(url, "new")
    back_to_version_6(url)
    with psycopg.connect(database, autocommit=True) as owner:
        for statement in granted:
            owner.execute(statement.format(role=role))
    return url, url.replace(f"postgresql://{USER}@", f"postgresql://{role}@")


def still_at_version_6(url: str) -> None:
    """Nothing of the store was changed: it is still at version 6."""
    with psycopg.connect(url) as connection:
        assert connection.execute(schema.VERSION).fetchone() == (6,)


def _rewrites(connection: psycopg.Connection[tuple[int, ...]], table: str) -> int:
    row = connection.execute(f"SELECT rewrites FROM {table}").fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("how", ["new", "migrated"])
async def test_a_delete_by_a_dba_moves_the_stores_own_counter(database: str, how: str) -> None:
    """psql on the database's default path (no ``hb`` on it, then a ``public.index_totals``
    of its own): ``DELETE FROM hb.messages`` succeeds and moves ``hb.index_totals``, never
    the other table; after the schema is renamed, the new name's."""
    await made(in_schema(database, "hb"), how)
    with psycopg.connect(database, autocommit=True) as dba:
        before = _rewrites(dba, "hb.index_totals")
        dba.execute("DELETE FROM hb.messages WHERE session_id = 'child'")
        dba.execute("CREATE TABLE public.index_totals (rewrites BIGINT NOT NULL DEFAULT 0)")
        dba.execute("INSERT INTO public.index_totals DEFAULT VALUES")
        dba.execute("UPDATE hb.messages SET tokens = tokens WHERE session_id = 'root'")
        assert (_rewrites(dba, "hb.index_totals"), _rewrites(dba, "public.index_totals")) == (
            before + 2, 0)
        dba.execute("ALTER SCHEMA hb RENAME TO kept")
        dba.execute("TRUNCATE kept.messages CASCADE")
        assert (_rewrites(dba, "kept.index_totals"), _rewrites(dba, "public.index_totals")) == (
            before + 3, 0)


@pytest.mark.parametrize("how", ["new", "migrated"])
async def test_stores_in_two_schemas_write_at_once_one_stores_writers_take_turns(
        database: str, how: str) -> None:
    """While a writer of the store in ``hb`` holds its write lock mid-batch, the store in
    ``other`` takes a whole batch; a second writer of ``hb`` waits, then writes."""
    await made(in_schema(database, "hb"), how)
    await made(in_schema(database, "other"), how)
    with PostgresStore.open(in_schema(database, "hb")).unwrap() as ours, \
            PostgresStore.open(in_schema(database, "other")).unwrap() as theirs, \
            psycopg.connect(in_schema(database, "hb")) as writer:
        take_write_lock(writer)  # its transaction stays open: the lock is held
        await asyncio.wait_for(ok(theirs.remove_sessions(["child"])), timeout=20)
        waiting = asyncio.ensure_future(ok(ours.remove_sessions(["child"])))
        await asyncio.sleep(1.0)
        assert not waiting.done() and waits_for_a_lock(database)
        writer.commit()
        assert await asyncio.wait_for(waiting, timeout=20) == 1


async def test_a_migration_waits_for_a_writer_of_version_6(database: str) -> None:
    """A harkback of version 6 (or older) locks the whole database for its batch, and
    checked the version before this migration began: the migration waits for its commit
    (then that harkback refuses to write the store of version 7)."""
    url = in_schema(database, "hb")
    await made(url, "new")
    back_to_version_6(url)
    with psycopg.connect(url) as old_writer, concurrent.futures.ThreadPoolExecutor(1) as pool:
        old_writer.execute("SELECT pg_advisory_xact_lock(%s)", (schema.WRITE_LOCK,))
        opening = pool.submit(PostgresStore.open, url)
        time.sleep(1.0)
        assert not opening.done() and waits_for_a_lock(database)
        old_writer.commit()
        with opening.result(timeout=20).unwrap() as store:
            assert store.schema.before == 6


async def test_a_read_only_open_of_version_6_asks_for_migrate_and_writes_nothing(
        database: str) -> None:
    """As for every step before (a read-only role cannot make what a read view would
    need): one line naming ``harkback migrate``; the function, index and version stay."""
    url = in_schema(database, "hb")
    await made(url, "new")
    back_to_version_6(url)
    refused = PostgresStore.open(url, readonly=True)
    assert "schema version 6; run `harkback migrate --db" in refused.failure().reason
    with psycopg.connect(url) as connection:
        assert connection.execute(
            "SELECT (SELECT version FROM harkback_schema), to_regclass('sessions_source'), "
            "(SELECT proconfig FROM pg_proc WHERE proname = 'harkback_rewritten')"
        ).fetchone() == (6, None, None)


async def test_a_reading_role_is_told_which_role_may_migrate(database: str) -> None:
    """A role granted only SELECT, opening read-only a store of version 6: one line naming
    the owner of the tables to run ``harkback migrate`` (its own run would be refused);
    nothing is changed."""
    url, reader = await older_store_for(database, "step7_reader", *READING)
    refused = PostgresStore.open(reader, readonly=True).failure().reason
    assert "has harkback schema version 6" in refused, refused
    assert (f"have role {USER} (the owner of its tables) run `harkback migrate --db "
            in refused and "\n" not in refused), refused
    still_at_version_6(url)


async def test_a_member_role_is_told_who_may_migrate(database: str) -> None:
    """A role granted the store's rows, not its tables, cannot make the step's function and
    index: one line naming the owner to run ``harkback migrate``; nothing is changed."""
    url, member = await older_store_for(
        database, "step7_member", "CREATE ROLE {role} LOGIN",
        "GRANT USAGE, CREATE ON SCHEMA hb TO {role}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA hb TO {role}")
    refused = PostgresStore.open(member).failure().reason
    assert refused.endswith(f"only the owner of its tables ({USER}) may migrate it to "
                            f"{SCHEMA_VERSION} (must be owner of function harkback_rewritten); "
                            f"have role {USER} run `harkback migrate`"), refused
    still_at_version_6(url)


async def test_a_source_too_long_for_the_index_is_refused_not_out_of_reach(
        database: str) -> None:
    """A source longer than an entry of sessions_source holds (about 2,700 bytes that do not
    compress): its ingest, and the migration of a version-6 store holding one, fail in one
    line saying the server refused it, never that the server is out of reach (what a
    ``sync --watch`` waits out: it would wait for ever, syncing no later source)."""
    url = in_schema(database, "hb")
    await made(url, "new")
    long = "".join(random.Random(7).choices(string.ascii_letters, k=4000))
    with PostgresStore.open(url).unwrap() as store:
        refused = await failed(store.ingest([conversation("long", ("user", "hi"),
                                                          source=long)]))
    back_to_version_6(url)
    with psycopg.connect(url) as connection:
        connection.execute("UPDATE sessions SET source = %s WHERE id = 'root'", (long,))
    migrating = PostgresStore.open(url).failure()
    for failure in (refused, migrating):
        assert 'index "sessions_source"' in failure.reason, failure.reason
        assert not failure.reason.startswith("cannot reach "), failure.reason
    with psycopg.connect(url) as connection:
        assert connection.execute(schema.VERSION).fetchone() == (6,)
        with pytest.raises(psycopg.OperationalError) as raised:
            connection.execute(SOURCE_INDEX)
    assert not passing(raised.value)


async def test_a_member_that_does_not_inherit_the_owner_is_told_who_may_migrate(
        database: str) -> None:
    """A role made a member of the owner's role without inheriting its rights (NOINHERIT)
    may not migrate the store as itself, so a read-only open of version 6 names the owner
    too, not its own `harkback migrate`, which is refused; nothing is changed."""
    url, member = await older_store_for(
        database, "step7_noinherit", "CREATE ROLE {role} LOGIN NOINHERIT",
        f"GRANT {USER} TO {{role}}", *READING[1:])
    refused = PostgresStore.open(member, readonly=True).failure().reason
    assert f"have role {USER} (the owner of its tables) run `harkback migrate --db " in refused, \
        refused
    own_run = PostgresStore.open(member).failure().reason
    assert f"have role {USER} run `harkback migrate`" in own_run, own_run
    still_at_version_6(url)


async def test_a_reading_role_is_told_each_owner_of_tables_with_several(database: str) -> None:
    """Tables of the store owned by two roles (``summary_cache`` handed to another): the
    reader's line names both, not the owner of ``sessions`` alone, and says the tables have
    several owners; nothing is changed."""
    url, reader = await older_store_for(
        database, "step7_reader_of_two", "CREATE ROLE step7_cache_owner",
        "ALTER TABLE hb.summary_cache OWNER TO step7_cache_owner", *READING)
    refused = PostgresStore.open(reader, readonly=True).failure().reason
    assert (f"reads only {SCHEMA_VERSION}: have a role holding the rights of each of {USER}, "
            "step7_cache_owner (its tables have several owners) run `harkback migrate --db "
            in refused and "\n" not in refused), refused
    still_at_version_6(url)


async def test_a_member_of_one_owner_is_told_each_owner_of_tables_with_several(
        database: str) -> None:
    """A member of the role owning most tables, migrating a store whose ``sessions`` another
    role owns: step 7's index on it is refused, and the line names both owners (the owner of
    ``sessions`` alone could not replace the function either); nothing is changed."""
    url, member = await older_store_for(
        database, "step7_member_of_one", "CREATE ROLE step7_sessions_owner",
        "ALTER TABLE hb.sessions OWNER TO step7_sessions_owner", "CREATE ROLE {role} LOGIN",
        f"GRANT {USER} TO {{role}}")
    refused = PostgresStore.open(member).failure().reason
    assert refused.endswith(
        f"only a role holding the rights of each owner of its tables ({USER}, "
        f"step7_sessions_owner) may migrate it to {SCHEMA_VERSION} (must be owner of table "
        "sessions); have "
        "such a role run `harkback migrate`"), refused
    still_at_version_6(url)
