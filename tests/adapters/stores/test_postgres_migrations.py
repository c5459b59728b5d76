"""Schema versions of the PostgreSQL store: a version-1 database is migrated by a writable
open (or ``harkback migrate``) with its rows intact and ends like a new one; a read-only
open asks for the migration and writes nothing."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg

from harkback.adapters.stores import postgres_schema as schema
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_migrations import MIGRATIONS, SCHEMA_VERSION
from harkback.stages.imports import Mark, SourceKey
from harkback.stages.ports import MessageKey, RecentQuery, SummaryKey
from harkback.stages.records import Summary
from tests.adapters.stores.store_contract import failed, match, ok
from tests.adapters.stores.test_migrations import CORPUS
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import new_database, store_locations
from tests.support.postgres_server import PostgresServer

ABOUTS = tuple(step.about for step in MIGRATIONS)


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


def _layout(url: str) -> tuple[Any, ...]:
    """Every column (table, name, type, null, default) and index of the database."""
    with psycopg.connect(url) as connection:
        columns = sorted(connection.execute(
            "SELECT table_name, column_name, data_type, is_nullable, column_default "
            "FROM information_schema.columns WHERE table_schema = 'public'").fetchall())
        indexes = sorted(connection.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'").fetchall())
        version = connection.execute(schema.VERSION).fetchone()
        statistics = sorted(connection.execute(
            "SELECT attrelid::regclass::text, attname, attstattarget FROM pg_attribute "
            "WHERE attname = 'tokens' AND attrelid::regclass::text IN ('messages', 'sessions')"
        ).fetchall())
        triggers = sorted(connection.execute(
            "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal"
        ).fetchall())
    return columns, indexes, version, statistics, triggers


def _version_1(url: str) -> None:
    """Make the database at ``url`` what the first PostgreSQL store made: its DDL alone."""
    with psycopg.connect(url) as connection:
        for statement in (*schema.SCHEMA, *schema.FIRST_ROWS):
            connection.execute(statement)


def _back_to_version_1(url: str) -> None:
    """Undo steps 2 to 4, 7 and 8 (rows stay): what a version-1 store held."""
    with psycopg.connect(url) as connection:
        connection.execute("ALTER TABLE index_totals DROP COLUMN unvacuumed")
        connection.execute("DROP INDEX sessions_source")
        for trigger in ("messages_deleted", "messages_rewritten", "messages_truncated"):
            connection.execute(f"DROP TRIGGER {trigger} ON messages")
        connection.execute("DROP FUNCTION harkback_rewritten")
        connection.execute("ALTER TABLE index_totals DROP COLUMN rewrites")
        for table in ("messages", "sessions"):
            connection.execute(f"ALTER TABLE {table} ALTER COLUMN tokens SET STATISTICS -1")
        connection.execute("ALTER TABLE sessions DROP COLUMN project")
        connection.execute("DROP TABLE import_mark_sessions")
        connection.execute("UPDATE harkback_schema SET version = 1")


async def _everything(store: PostgresStore) -> tuple[Any, ...]:
    return (await ok(store.sessions(["root", "child"])),
            await ok(store.messages(["root", "child"])),
            await ok(store.recent(RecentQuery(limit=5))),
            [(h.session_id, h.position) for h in await ok(store.search(match("bridge")))])


def test_a_migrated_version_1_database_is_laid_out_as_a_new_one(
        url: str, postgres_server: PostgresServer) -> None:
    """Version 1's DDL, opened writable: the steps run once, and every column, default and
    index equals a database made new."""
    _version_1(url)
    with PostgresStore.open(url).unwrap() as store:
        assert store.schema == Migrated(1, SCHEMA_VERSION, ABOUTS, latest=SCHEMA_VERSION)
    with PostgresStore.open(url).unwrap() as store:
        assert store.schema == Migrated(SCHEMA_VERSION, SCHEMA_VERSION, latest=SCHEMA_VERSION)
    fresh = new_database(postgres_server, "migrate")
    with PostgresStore.open(fresh).unwrap() as store:
        assert store.schema == Migrated(0, SCHEMA_VERSION, latest=SCHEMA_VERSION)
    assert _layout(url) == _layout(fresh)
    assert _layout(url)[2] == (SCHEMA_VERSION,)
    assert [name for name, _ in _layout(url)[4]] == [
        "messages_deleted", "messages_rewritten", "messages_truncated"]


async def test_rows_of_version_1_read_back_after_the_migration(url: str) -> None:
    """Every session, message, overview and hit reads back as stored; new writes carry a
    project."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS))
        expected = await _everything(store)
    _back_to_version_1(url)
    with PostgresStore.open(url).unwrap() as store:
        assert store.schema.before == 1
        assert await _everything(store) == expected


def test_a_read_only_open_of_version_1_asks_for_migrate(url: str) -> None:
    """One line naming ``harkback migrate``; the database stays at version 1."""
    _version_1(url)
    refused = PostgresStore.open(url, readonly=True)
    assert "run `harkback migrate --db" in refused.failure().reason
    assert _layout(url)[2] == (1,)


def test_the_suggested_migrate_runs_as_pasted_into_a_shell(url: str) -> None:
    """The command the refusal names is quoted for a shell: a socket URL's ``&port=``
    unquoted would run the migrate in the background without its port."""
    with_port = url if "port=" in url else f"{url}&port=5432"
    _version_1(with_port)
    line = PostgresStore.open(with_port, readonly=True).failure().reason
    command = line.split("`")[1]
    words = shlex.shlex(command, posix=True, punctuation_chars=True)
    words.whitespace_split = True
    assert list(words) == ["harkback", "migrate", "--db", with_port]
    bin_dir = str(Path(sys.executable).parent)
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False,
                          env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    assert _layout(with_port)[2] == (SCHEMA_VERSION,)


def test_harkback_migrate_on_a_server(url: str) -> None:
    """``harkback migrate --db postgresql://…``: 1 -> the latest once, then up to date."""
    _version_1(url)
    done = harkback("migrate", "--db", url)
    assert done.returncode == 0, done.stderr
    assert f"schema version 1 -> {SCHEMA_VERSION} (sessions.project" in done.stdout
    again = harkback("migrate", "--db", url, "--json")
    assert again.returncode == 0, again.stderr
    payload = json.loads(again.stdout)
    assert (payload["from"], payload["to"], payload["applied"]) == (
        SCHEMA_VERSION, SCHEMA_VERSION, [])


async def test_a_database_migrated_while_connected_takes_no_more_writes(url: str) -> None:
    """Another machine's harkback migrates the database while this one is connected: this
    one's ingest and removal are refused in one line, and nothing of theirs is written."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS[:1]))
        with psycopg.connect(url) as other:
            other.execute(schema.SET_VERSION, (SCHEMA_VERSION + 1,))
        for refused in (await failed(store.ingest(CORPUS[1:])),
                        await failed(store.remove_sessions(["root"]))):
            assert f"now at harkback schema version {SCHEMA_VERSION + 1}" in refused.reason
            assert "nothing was written" in refused.reason
    with psycopg.connect(url) as reader:
        stored = reader.execute("SELECT id FROM sessions ORDER BY id").fetchall()
        messages = reader.execute("SELECT count(*) FROM messages").fetchone()
    assert (stored, messages) == ([("root",)], (len(CORPUS[0].messages),))


async def test_a_database_migrated_while_connected_is_not_searched(url: str) -> None:
    """Another machine's newer harkback migrates the database while this one is connected:
    this one's searches are refused in one line instead of asking the new index with the
    old rules (read in the statement every search makes first, so it costs no trip)."""
    with PostgresStore.open(url, readonly=False).unwrap() as writer:
        await ok(writer.ingest(CORPUS))
    with PostgresStore.open(url, readonly=True).unwrap() as store:
        assert await ok(store.search(match("bridge")))
        with psycopg.connect(url) as other:
            other.execute(schema.SET_VERSION, (SCHEMA_VERSION + 1,))
        for refused in (await failed(store.search(match("bridge"))),
                        await failed(store.search(match("端口"))),
                        await failed(store.term_stats(["bridge"])),
                        await failed(store.search_titles(match("docker")))):
            assert f"now at harkback schema version {SCHEMA_VERSION + 1}" in refused.reason
            assert "nothing was searched" in refused.reason


async def test_a_database_migrated_while_connected_keeps_no_vectors_marks_or_summaries(
        url: str) -> None:
    """The writes outside the store's write lock are refused the same way: vectors, the
    import ledger's marks and cached summaries of a harkback that had the database open
    before another one migrated it."""
    tables = ("message_vectors", "import_marks", "import_sources", "summary_cache")
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS[:1]))
        with psycopg.connect(url) as other:
            other.execute(schema.SET_VERSION, (SCHEMA_VERSION + 1,))
        ledger, cache = store.import_ledger(), store.summary_cache()
        key = SourceKey(kind="codex", location="/x")
        first = MessageKey(session_id="root", position=0)
        for refused in (
                await failed(store.keep_vectors("m", [(first, (1.0, 0.0))])),
                await failed(ledger.keep(key, (Mark(item="a", fingerprint="1", sessions=1,
                                                    messages=3),), now=10.0)),
                await failed(ledger.forget(key, ["a"])),
                await failed(cache.keep_summary(
                    SummaryKey(root_session_id="root", content="c", query="q", model="m",
                               prompt_version="v"), Summary(text="Restarted.", kind="llm")))):
            assert f"now at harkback schema version {SCHEMA_VERSION + 1}" in refused.reason
            assert "nothing was written" in refused.reason
    with psycopg.connect(url) as reader:
        counts = [reader.execute(f"SELECT count(*) FROM {t}").fetchone() for t in tables]
    assert counts == [(0,)] * len(tables)
