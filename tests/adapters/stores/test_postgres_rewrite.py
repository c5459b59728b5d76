"""A rewrite (``harkback redact``) of a PostgreSQL store beside other writers of the same
database, on a real server: a chunk is read and edited without the store's write lock and
written under it (read again first when another writer committed since), and chunks are
cut by bytes, so other writers take their turns between them."""

from __future__ import annotations

from typing import Any

import psycopg

from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_rewrite import rewrite_all
from harkback.adapters.stores.postgres_writes import write
from harkback.stages.batching import Budget
from tests.adapters.stores.rewrite_turns import (
    BIG_SESSIONS,
    redact_kiwi,
    rewrite_beside_an_ingest,
    two_rewrites_at_once,
    watching_the_first,
)
from tests.adapters.stores.store_contract import ok
from tests.support.new_stores import store_locations

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""

Connection = psycopg.Connection[tuple[Any, ...]]


def _busy(error: Exception) -> bool:
    return isinstance(error, psycopg.errors.LockNotAvailable)


def _other(url: str) -> Connection:
    """Another writer of the database (another machine's harkback), which waits at most
    2 s for the store's write lock."""
    connection = psycopg.connect(url, autocommit=True)
    connection.execute("SET lock_timeout = '2s'")
    return connection


async def test_an_ingest_during_a_rewrite_lands_at_once_and_keeps_its_update(url: str) -> None:
    """An ingest of new text for a session the rewrite is editing is not kept waiting (the
    whole redact was one transaction holding the write lock), and its text is not
    reverted to the old one, redacted."""
    with PostgresStore.open(url).unwrap() as store, _other(url) as other:
        stored, report, waited = await rewrite_beside_an_ingest(
            store, lambda updated: write(other, [updated]), _busy)
    assert stored == ["UPDATED text"]
    assert (report.sessions, report.messages, waited) == (0, 0, [])


async def test_two_rewrites_at_once_take_turns_and_count_each_change_once(url: str) -> None:
    """A second redact run while the first is editing a chunk runs at once, and the first
    finds that chunk rewritten when its turn comes: between them each change counts once."""
    with PostgresStore.open(url).unwrap() as store, _other(url) as other:
        stored, changes, waited = await two_rewrites_at_once(
            store, lambda: rewrite_all(other, redact_kiwi, dry_run=False), _busy)
    assert stored == ["[secret]", "[secret]"]
    assert (changes, waited) == (2, [])


async def test_big_sessions_are_written_a_few_at_a_time_cut_by_bytes(url: str) -> None:
    """Sessions larger than the byte budget go in several write transactions: the first
    are committed (another connection reads them redacted) before the last is read, and
    every one is redacted in the end."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(BIG_SESSIONS))
    with psycopg.connect(url, autocommit=True) as reader, psycopg.connect(url) as rewriting:
        def first_text() -> str:
            row = reader.execute("SELECT content FROM messages WHERE session_id = 's0'"
                                 ).fetchone()
            return str(row[0] if row else "")
        edit, first_when_last_read = watching_the_first(first_text)
        report = rewrite_all(rewriting, edit, dry_run=False, budget=Budget(size=100_000))
        stored = [row[0][:10] for row in reader.execute(
            'SELECT content FROM messages ORDER BY session_id COLLATE "C"')]
    assert first_when_last_read == ["[secret] 0"]
    assert stored == [f"[secret] {i}" for i in range(4)]
    assert (report.sessions, report.messages) == (4, 4)
