"""A session's project name in the title index (SQLite schema 6, PostgreSQL 9): a store of
the version before, whose title index lacks the names, is indexed again by a writable open
(its title trigger then watches the project too); a read-only open of an older SQLite file
writes nothing and searches as before. On a real file and a real server."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg

from harkback.adapters.stores import postgres_schema
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_migrations import MIGRATIONS as PG_MIGRATIONS
from harkback.adapters.stores.postgres_text import tsvector_literal
from harkback.adapters.stores.postgres_writes import title_tokens
from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.migrations import PROJECT_ABOUT
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Conversation, Message, Session
from harkback.stages.text.tokens import index_text
from tests.adapters.stores.old_files import file_state
from tests.adapters.stores.store_contract import match, ok
from tests.support.new_stores import store_locations

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""

CORPUS = tuple(
    Conversation(Session(id=sid, title=title, project=project, started_at=at), (
        Message(session_id=sid, position=0, role="user", content=f"about {title}"),))
    for sid, title, project, at in (
        ("apns", "APNs token errors", "/home/me/code/mobile-app", 1.0),
        ("cors", "CORS fix", "/home/me/code/lumen-api", 2.0),
        ("loose", "scratch notes", "", 3.0)))

V5_TRIGGER = """CREATE TRIGGER session_titles_stale
    AFTER UPDATE OF title, source ON sessions
    WHEN old.title IS NOT new.title OR old.source IS NOT new.source
    BEGIN
        INSERT INTO session_titles_fts (session_titles_fts, rowid, body)
            SELECT 'delete', id, body FROM session_titles WHERE session_id = old.id;
        DELETE FROM session_titles WHERE session_id = old.id;
    END"""
"""The title trigger of schema version 5, which watched the title and source only."""


def _without_projects(session: Session) -> Session:
    return Session(id=session.id, title=session.title, source=session.source)


def back_to_version_5(path: Path) -> None:
    """The file as schema version 5 left it (rows stay): each title indexed without its
    project's name, the trigger of then, version 5."""
    with sqlite3.connect(path) as raw:
        for c in CORPUS:
            body = index_text(_without_projects(c.session).text_for_search())
            raw.execute("INSERT INTO session_titles_fts (session_titles_fts, rowid, body) "
                        "SELECT 'delete', id, body FROM session_titles WHERE session_id = ?",
                        (c.session.id,))
            raw.execute("UPDATE session_titles SET body = ? WHERE session_id = ?",
                        (body, c.session.id))
            raw.execute("INSERT INTO session_titles_fts (rowid, body) "
                        "SELECT id, body FROM session_titles WHERE session_id = ?",
                        (c.session.id,))
        raw.execute("DROP TRIGGER session_titles_stale")
        raw.execute(V5_TRIGGER)
        raw.execute("PRAGMA user_version = 5")
    raw.close()


async def _found(store: SqliteStore | PostgresStore, text: str) -> list[str]:
    return [h.session_id for h in await ok(store.search_titles(match(text)))]


async def test_a_writable_open_of_version_5_indexes_the_project_names(tmp_path: Path) -> None:
    """The step is said once; the project's name finds its session, titles are found as
    before, and a project changed by another writer (an older harkback) is indexed again."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(CORPUS))
    back_to_version_5(path)
    with SqliteStore.open(path).unwrap() as store:
        assert store.schema == Migrated(5, schema.SCHEMA_VERSION, (PROJECT_ABOUT,),
                                        latest=schema.SCHEMA_VERSION)
        assert await _found(store, "mobile-app") == ["apns"]
        assert await _found(store, "lumen") == ["cors"]
        assert await _found(store, "scratch") == ["loose"]
    with sqlite3.connect(path) as raw:
        raw.execute("UPDATE sessions SET project = '/home/me/code/ios-app' WHERE id = 'apns'")
    raw.close()
    with SqliteStore.open(path).unwrap() as store:
        assert await _found(store, "ios") == ["apns"]
        assert await _found(store, "mobile") == []


async def test_a_read_only_open_of_version_5_writes_nothing_and_searches_as_before(
        tmp_path: Path) -> None:
    """Titles are found as they were; a project's name, not in that index, finds nothing."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(CORPUS))
    back_to_version_5(path)
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        assert store.schema == Migrated(5, 5, latest=schema.SCHEMA_VERSION)
        assert await _found(store, "APNs") == ["apns"]
        assert await _found(store, "mobile-app") == []
    assert file_state(path) == before


def back_to_version_8(url: str) -> None:
    """The store as schema version 8 left it (rows stay): each session's title tokens
    without its project's name, the totals counting them so, version 8."""
    with psycopg.connect(url) as connection:
        for c in CORPUS:
            tokens = title_tokens(_without_projects(c.session))
            old = connection.execute("SELECT length FROM sessions WHERE id = %s",
                                     (c.session.id,)).fetchone()
            assert old is not None
            connection.execute("UPDATE sessions SET tokens = %s::tsvector, length = %s "
                               "WHERE id = %s",
                               (tsvector_literal(tokens), len(tokens), c.session.id))
            connection.execute("UPDATE index_totals SET session_tokens = session_tokens + %s",
                               (len(tokens) - old[0],))
        connection.execute(postgres_schema.SET_VERSION, (8,))


async def test_postgres_version_8_is_tokenized_again_by_a_writable_open(url: str) -> None:
    """The step is said once; the project's name finds its session, and the totals are
    those of a store made new (BM25 reads them)."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS))
    with psycopg.connect(url) as connection:
        made_new = connection.execute("SELECT session_tokens FROM index_totals").fetchone()
    back_to_version_8(url)
    latest = PG_MIGRATIONS[-1].version
    with PostgresStore.open(url).unwrap() as store:
        assert store.schema == Migrated(8, latest, (PG_MIGRATIONS[-1].about,), latest=latest)
        assert await _found(store, "mobile-app") == ["apns"]
        assert await _found(store, "lumen") == ["cors"]
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT session_tokens FROM index_totals").fetchone() \
            == made_new
