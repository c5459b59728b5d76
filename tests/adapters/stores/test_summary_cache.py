"""The summary cache contract, against SQLite and memory; read-only SQLite skips writes."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from returns.io import IOFailure, IOSuccess
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.summary_cache import SqliteSummaryCache
from harkback.stages.ports import SummaryCache, SummaryKey
from harkback.stages.records import Summary, TokenUsage
from tests.adapters.stores.vector_contract import Store
from tests.support.new_stores import new_stores

KEY = SummaryKey(root_session_id="s1", content="d1", query="docker bridge", model="m",
                 prompt_version="recall-1")
SUMMARY = Summary(text="Fixed with app-net.", kind="llm", note="cut at the output token limit",
                  usage=TokenUsage(prompt=300, completion=40), cited_messages=(2, 5))


empty_store = new_stores("sqlite", "memory")
"""A fresh, empty store of each kind."""

any_store = new_stores("sqlite", "memory", "postgres")
"""A fresh, empty store of each kind, PostgreSQL too."""


@pytest.fixture
def cache(empty_store: Store) -> SummaryCache:
    """A fresh, empty cache of each kind: a fresh store's (``SqliteSummaryCache``,
    ``MemorySummaryCache``)."""
    made = empty_store.summary_cache()
    assert made is not None
    return made


async def _get(cache: SummaryCache, key: SummaryKey) -> Summary | None:
    outcome = await cache.cached_summary(key).awaitable()
    return unsafe_perform_io(outcome.unwrap())


async def test_a_kept_summary_comes_back_whole(cache: SummaryCache) -> None:
    """Text, note, usage and citations survive the round trip."""
    await cache.keep_summary(KEY, SUMMARY).awaitable()
    assert await _get(cache, KEY) == SUMMARY


async def test_any_part_of_the_key_changes_the_entry(cache: SummaryCache) -> None:
    """Another content digest, query, model or prompt version is a miss."""
    await cache.keep_summary(KEY, SUMMARY).awaitable()
    for field in ("root_session_id", "content", "query", "model", "prompt_version"):
        other = SummaryKey(**{**_fields(KEY), field: "other"})
        assert await _get(cache, other) is None, field


async def test_keeping_again_replaces(cache: SummaryCache) -> None:
    """A second summary under the same key replaces the first."""
    await cache.keep_summary(KEY, SUMMARY).awaitable()
    newer = Summary(text="Newer.", kind="llm")
    await cache.keep_summary(KEY, newer).awaitable()
    assert await _get(cache, KEY) == newer


async def test_read_only_store_misses_and_never_writes(tmp_path: Path) -> None:
    """On a read-only store, keeping succeeds silently and the file is unchanged."""
    path = tmp_path / "harkback.db"
    SqliteStore.open(path).unwrap().close()
    before = path.read_bytes()
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        cache = SqliteSummaryCache(store)
        kept = await cache.keep_summary(KEY, SUMMARY).awaitable()
        assert unsafe_perform_io(kept.unwrap()) is None
        assert await _get(cache, KEY) is None
    assert path.read_bytes() == before


async def test_read_only_store_reads_what_a_writable_run_kept(tmp_path: Path) -> None:
    """Summaries cached by an earlier writable run are served to a read-only one."""
    path = tmp_path / "harkback.db"
    with SqliteStore.open(path).unwrap() as store:
        await SqliteSummaryCache(store).keep_summary(KEY, SUMMARY).awaitable()
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        assert await _get(SqliteSummaryCache(store), KEY) == SUMMARY


def _fields(key: SummaryKey) -> dict[str, str]:
    return {"root_session_id": key.root_session_id, "content": key.content,
            "query": key.query, "model": key.model, "prompt_version": key.prompt_version}


async def test_a_locked_database_fails_the_write_quickly(tmp_path: Path) -> None:
    """While another writer holds the lock, keeping fails as a value well before 5 s."""
    path = tmp_path / "harkback.db"
    with SqliteStore.open(path).unwrap() as store:
        other = sqlite3.connect(path)
        other.execute("BEGIN IMMEDIATE")
        try:
            started = time.monotonic()
            kept = await SqliteSummaryCache(store).keep_summary(KEY, SUMMARY).awaitable()
            elapsed = time.monotonic() - started
        finally:
            other.rollback()
            other.close()
        assert isinstance(kept, IOFailure)
        assert elapsed < 2.5  # the store's own busy timeout is 5 s
        # the connection's usual patience is restored for the store's other work
        assert (await store.run(_busy_timeout).awaitable()) == IOSuccess(5000)


def _busy_timeout(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA busy_timeout").fetchone()[0])


async def test_a_summary_of_a_question_holding_a_secret_is_not_kept(any_store: Store) -> None:
    """A question with a key in it (pasted into a search, or an agent's) is not written
    to the store with its summary; a question without one still is."""
    cache = any_store.summary_cache()
    assert cache is not None
    secret = SummaryKey(**{**_fields(KEY), "query": "docker bridge ghp_" + "a1B2" * 9})
    await cache.keep_summary(secret, SUMMARY).awaitable()
    await cache.keep_summary(KEY, SUMMARY).awaitable()
    assert await _get(cache, secret) is None
    assert await _get(cache, KEY) == SUMMARY
