"""The message index's pending list merged beside a large ingest, on a real server: the
merge runs while the write does, the index finds every row afterwards, and a role that
may not merge, or a write that fails, changes nothing else."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_pending import BULK_MESSAGES
from harkback.stages.records import Conversation
from tests.adapters.stores.store_contract import failed, match, ok
from tests.support.new_stores import store_locations, unique_name
from tests.support.postgres_server import USER

Make = Callable[..., Conversation]
WORDS = ("kiwi", "mango", "docker", "bridge", "error", "tart", "pie", "cors", "proxy",
         "nginx", "timeout", "retry", "queue")


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


def _large_batch(make: Make, sessions: int = 25, seed: int = 0) -> list[Conversation]:
    """At least BULK_MESSAGES messages of a few words each, with made-up rare words."""
    rng = random.Random(seed)
    per_session = -(-BULK_MESSAGES // sessions) + 2
    return [make(f"s{seed}-{s}", *[
        ("user", " ".join([*rng.sample(WORDS, 4), f"w{rng.randrange(500)}"]))
        for _ in range(per_session)]) for s in range(sessions)]


def _scalar(url: str, statement: str) -> Any:
    with psycopg.connect(url, autocommit=True) as connection:
        row = connection.execute(statement).fetchone()
        return None if row is None else row[0]


def _merged_now(url: str) -> int:
    """Pending pages this call had to merge (0: the list was empty)."""
    return int(_scalar(url, "SELECT gin_clean_pending_list('messages_tokens'::regclass)"))


async def _until(url: str, statement: str) -> None:
    deadline = time.monotonic() + 20
    while _scalar(url, statement) is None:
        assert time.monotonic() < deadline, f"never true: {statement}"
        await asyncio.sleep(0.02)


async def test_the_list_is_merged_while_the_write_is_under_way(url: str,
                                                               make_conversation: Make) -> None:
    """While a large ingest waits at its last statement (every row copied, nothing
    committed), another connection has already merged what it added to the pending list."""
    batch = _large_batch(make_conversation)
    with PostgresStore.open(url).unwrap() as store:
        with psycopg.connect(url) as blocker:
            blocker.execute("SELECT * FROM index_totals FOR UPDATE")
            ingest = asyncio.ensure_future(ok(store.ingest(batch)))
            await _until(url, "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                              "AND query LIKE 'UPDATE index_totals%'")
            # A merge call that began after the ingest's last statement did (every row
            # copied by then) and has ended: the list it merged is all there is. (Any idle
            # moment of the merging connection would not do: it rests 20 ms between calls,
            # and a call that found the list empty may have ended before the last rows.)
            await _until(url, "SELECT 1 FROM pg_stat_activity AS m, pg_stat_activity AS w "
                              "WHERE w.wait_event_type = 'Lock' "
                              "AND w.query LIKE 'UPDATE index_totals%' AND m.state = 'idle' "
                              "AND m.query LIKE '%gin_clean_pending_list%' "
                              "AND m.query_start > w.query_start")
            assert _merged_now(url) == 0
            blocker.rollback()
            report = await ingest
        assert report.messages == sum(len(c.messages) for c in batch)


async def test_a_closed_store_leaves_the_list_empty(url: str, make_conversation: Make) -> None:
    """Large ingests return without waiting for the merge; closing the store does, so
    the next reader searches a merged index (an ingest alone left up to 4 MB pending)."""
    with PostgresStore.open(url).unwrap() as store:
        for seed in range(3):
            await ok(store.ingest(_large_batch(make_conversation, seed=seed)))
    assert _merged_now(url) == 0


async def test_the_index_finds_what_a_scan_finds(url: str, make_conversation: Make) -> None:
    """Rows merged while they were being copied are all in the index: each word's count
    through the index equals a scan's, and the store's search finds as many."""
    with PostgresStore.open(url).unwrap() as store:
        for seed in range(2):
            await ok(store.ingest(_large_batch(make_conversation, seed=seed)))
    with psycopg.connect(url, autocommit=True) as connection:
        for word in (*WORDS[:4], "w17"):
            counts = []
            for setting in ("enable_bitmapscan", "enable_seqscan"):  # a scan, then the index
                connection.execute(sql.SQL("SET {} = off").format(sql.Identifier(setting)))
                row = connection.execute(
                    "SELECT count(*) FROM messages WHERE tokens @@ %s::tsquery",
                    (word,)).fetchone()
                assert row is not None
                counts.append(int(row[0]))
                connection.execute(sql.SQL("RESET {}").format(sql.Identifier(setting)))
            assert counts[0] == counts[1] > 0, word
    with PostgresStore.open(url).unwrap() as store:
        hits = await ok(store.search(match("w17", limit=1000)))
    assert len(hits) == counts[0]


async def test_a_role_that_may_not_merge_still_ingests(url: str,
                                                      make_conversation: Make) -> None:
    """A writer that does not own the index cannot merge its pending list: its large
    ingests are stored and found all the same, and its store closes."""
    PostgresStore.open(url).unwrap().close()  # the schema, owned by the tests' role
    role = unique_name("writer")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
        for what in ("TABLES", "SEQUENCES"):
            connection.execute(sql.SQL("GRANT ALL ON ALL {} IN SCHEMA public TO {}").format(
                sql.SQL(what), sql.Identifier(role)))
    as_role = url.replace(f"postgresql://{USER}@", f"postgresql://{role}@")
    batch = _large_batch(make_conversation)
    with PostgresStore.open(as_role).unwrap() as store:
        report = await ok(store.ingest(batch))
        assert report.messages == sum(len(c.messages) for c in batch)
        assert len(await ok(store.search(match("kiwi", limit=1000)))) > 0
    assert _merged_now(url) > 0  # the owner merges what the role could not


async def test_a_failed_large_write_ends_the_merge(url: str, make_conversation: Make) -> None:
    """A large ingest the server refuses fails as one value, the merge beside it ends (the
    store closes), and nothing of the batch is stored."""
    PostgresStore.open(url).unwrap().close()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("ALTER TABLE messages ADD CONSTRAINT no_boom "
                           "CHECK (content <> 'boom')")
    batch = _large_batch(make_conversation)
    batch.append(make_conversation("last", ("user", "boom")))
    store = PostgresStore.open(url).unwrap()
    try:
        error = await failed(store.ingest(batch))
        assert "no_boom" in error.reason
        assert await ok(store.search(match("kiwi"))) == ()
    finally:
        started = time.monotonic()
        await asyncio.to_thread(store.close)
    assert time.monotonic() - started < 10


_CLOSE_BESIDE_A_WRITE = """
import asyncio, sys, threading
import psycopg
from harkback.adapters.stores.postgres import PostgresStore
from tests.adapters.stores.store_contract import ok
from tests.adapters.stores.test_postgres_pending import _large_batch
from tests.conftest import conversation

async def main(url: str) -> None:
    store = PostgresStore.open(url).unwrap()
    blocker = psycopg.connect(url)
    blocker.execute("SELECT * FROM index_totals FOR UPDATE")
    ingest = asyncio.ensure_future(ok(store.ingest(_large_batch(conversation))))
    with psycopg.connect(url, autocommit=True) as look:
        while not look.execute("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                               "AND query LIKE 'UPDATE index_totals%'").fetchone():
            await asyncio.sleep(0.02)
    threading.Timer(0.5, blocker.rollback).start()
    store.close()  # on the loop's thread: the ingest's coroutine cannot resume meanwhile
    print("closed", flush=True)
    print((await ingest).messages, flush=True)

asyncio.run(main(sys.argv[1]))
"""


def test_closing_on_the_loop_beside_a_large_write_returns(url: str) -> None:
    """A store closed from the event loop's thread while a large ingest is under way (a
    task not awaited yet) waits for the write, then returns: the merge beside it does not
    wait for the ingest's coroutine, which cannot run until the close returns."""
    PostgresStore.open(url).unwrap().close()
    done = subprocess.run([sys.executable, "-c", _CLOSE_BESIDE_A_WRITE, url],
                          capture_output=True, text=True, check=False, timeout=60,
                          cwd=Path(__file__).parents[3])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["closed", str(25 * (-(-BULK_MESSAGES // 25) + 2))]


class _RefuseOneMergeConnection:
    """The store's connections, but the merge's first call finds no connection (as when
    the server refuses a new one): the fault this test is about, nothing else changed."""

    def __init__(self, connections: Any) -> None:
        self._connections = connections
        self.refused = 0

    def run(self, work: Callable[[Any], Any], limit: float | None) -> Any:
        if "merge" in getattr(work, "__qualname__", "") and not self.refused:
            self.refused += 1
            raise psycopg.OperationalError("connection refused (injected)")
        return self._connections.run(work, limit)

    def close(self) -> None:
        self._connections.close()


async def test_a_merge_that_found_no_connection_starts_again(
        url: str, make_conversation: Make) -> None:
    """The merge beside a large ingest could not get a connection: that ingest is stored,
    and the next large one starts a merge again (the list is empty after the close; an
    ingest alone leaves its last pages pending)."""
    store = PostgresStore.open(url).unwrap()
    flaky = _RefuseOneMergeConnection(store._connections)
    store._connections = flaky  # type: ignore[assignment]
    try:
        first = _large_batch(make_conversation, seed=1)
        assert (await ok(store.ingest(first))).messages == sum(len(c.messages) for c in first)
        await asyncio.sleep(0.2)  # the refused merge's thread has given up
        assert flaky.refused == 1
        await ok(store.ingest(_large_batch(make_conversation, seed=2)))
    finally:
        await asyncio.to_thread(store.close)
    assert _merged_now(url) == 0
