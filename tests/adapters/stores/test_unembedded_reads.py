"""What ``unembedded`` reads for a few sessions (what a sync or a watch round stored), batch
after batch, on a real SQLite file and a real PostgreSQL server: each call resumes where
the last found its first message, not at the first message of those sessions.

Read through the (session, position) index, every call read all of those sessions'
messages again: 64 sessions of 2,000 messages took 268 s of reads over 2,000 batches (11 s
once resumed in row id order).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import psycopg

from harkback.adapters.stores import postgres_vectors, sqlite_vectors
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.sql.vectors import StartKey
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Role
from tests.adapters.stores.store_contract import ok
from tests.adapters.stores.vector_contract import axis, embed_all, key, places
from tests.conftest import conversation
from tests.support.postgres_server import PostgresServer

MESSAGES = 2000
BATCH = 64


def test_a_few_sessions_are_read_from_where_the_last_batch_began(tmp_path: Path) -> None:
    """sync35: the second batch of a session of 2,000 messages reads about one batch of
    rows, not the 2,000 again (counted in SQLite's VM steps, not timed), and the batches
    list every message of the sessions asked for, once, in stored order."""
    db = tmp_path / "h.db"
    turns: list[tuple[Role, str]] = [("user", f"message {n}") for n in range(MESSAGES)]
    store = SqliteStore.open(db).unwrap()
    asyncio.run(ok(store.ingest([conversation("other", ("user", "before")),
                                 conversation("s", *turns),
                                 conversation("after", ("user", "later"))])))
    asyncio.run(ok(store.keep_vectors("m", [(key("other", 0), axis(0))])))
    store.close()
    listed, read = _embed_in_batches(db, frozenset({"s"}))
    assert listed == [("s", n) for n in range(MESSAGES)]
    first, resumed = read[0], max(read[1:-1])
    assert resumed * 5 < first, read


def test_postgres_reads_a_few_sessions_from_where_the_last_batch_began(
        postgres_server: PostgresServer) -> None:
    """embed36: PostgreSQL's ``unembedded(sessions=)`` read the table from its first row at
    each batch, not from where the last batch began. It resumes as SQLite does, within
    the sessions' lowest and highest row ids: each batch reads about two batches of rows
    (counted in the rows the server fetched, not timed), and the batches list every
    message once, in order."""
    url = postgres_server.create_database("unembedded_reads")

    def turns(count: int, text: str) -> list[tuple[Role, str]]:
        return [("user", f"{text} {n}") for n in range(count)]

    store = PostgresStore.open(url).unwrap()
    try:  # sessions without vectors before and after it, twice and once its size
        asyncio.run(ok(store.ingest([conversation("other", *turns(2 * MESSAGES, "before")),
                                     conversation("s", *turns(MESSAGES, "message")),
                                     conversation("after", *turns(MESSAGES, "later"))])))
        asyncio.run(ok(store.keep_vectors("m", [(key("other", 0), axis(0))])))
    finally:
        store.close()
    starts: dict[StartKey, postgres_vectors.Resume] = {}
    listed: list[tuple[str, int]] = []
    read: list[int] = []
    with psycopg.connect(url) as connection:
        connection.execute("ANALYZE")
        connection.commit()
        while True:
            before = _rows_read(connection)
            found = postgres_vectors.unembedded(connection, "m", ("user",), BATCH,
                                                sessions=["s"], starts=starts)
            read.append(_rows_read(connection) - before)
            connection.commit()
            if not found:
                break
            listed += [(m.session_id, m.position) for m in found]
            postgres_vectors.keep(connection, "m", {(m.session_id, m.position): axis(0)
                                                    for m in found}).unwrap()
            connection.commit()
    assert listed == [("s", n) for n in range(MESSAGES)]
    # The first call reads the session's rows (by its index) and a batch; each later one
    # the last batch's rows (kept since) and its own. Read from the first row, the first
    # read the 4,000 before it, and the 32nd all 6,000 before its batch; bounded below
    # only, the last calls read the 2,000 rows after the session.
    assert read[0] <= MESSAGES + 3 * BATCH and max(read[1:]) <= 3 * BATCH, read


def _rows_read(connection: psycopg.Connection[tuple[Any, ...]]) -> int:
    """The rows of ``messages`` this connection read so far (by scans and index fetches),
    as the server counts them before it reports them (its transactions not yet reported)."""
    row = connection.execute(
        "SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0) "
        "FROM pg_stat_xact_user_tables WHERE relname = 'messages'").fetchone()
    return int(row[0]) if row else 0


async def test_postgres_starts_again_from_the_first_row_after_another_process_writes(
        postgres_server: PostgresServer) -> None:
    """embed36: the resume point holds only while nothing but vectors was written. Once
    another process (another store, its own connections) drops the model's vectors, or
    makes a message below it eligible (its role changed, its row kept), the next call
    reads from the first row again: those messages are listed, none is skipped."""
    url = postgres_server.create_database("unembedded_resets")
    store, other = PostgresStore.open(url).unwrap(), PostgresStore.open(url).unwrap()
    try:
        await ok(store.ingest([conversation("s", *[("user", f"m{n}") for n in range(5)])]))
        await embed_all(store, "m", ("user",), 2, sessions=["s"])
        assert await ok(store.unembedded("m", ("user",), 10, sessions=["s"])) == ()
        assert await ok(other.drop_vectors("m")) == 5
        assert places(await ok(store.unembedded("m", ("user",), 10, sessions=["s"]))) == [
            ("s", n) for n in range(5)]
        await ok(other.ingest([conversation("t", ("assistant", "said"), ("user", "asked"))]))
        await embed_all(store, "m", ("user",), 2, sessions=["t"])
        # The same text, now the user's: its row is kept (below the resume point), eligible.
        await ok(other.ingest([conversation("t", ("user", "said"), ("user", "asked"))]))
        assert places(await ok(store.unembedded("m", ("user",), 10, sessions=["t"]))) == [
            ("t", 0)]
    finally:
        store.close()
        other.close()


def test_many_sessions_are_read_from_their_first_row_not_the_tables(tmp_path: Path) -> None:
    """review36q: embed names the sessions of an import a slice of 2,000 at a time, and
    SQLite read each slice (above the 64 it reads by index) from the table's first row:
    30,000 sessions imported into a store of 400,000 messages read those 15 times (2.9 s
    CPU, 2.0 s into an empty one). The first call for many sessions starts at their lowest
    row id (found through their index): it reads about what a resumed call reads (counted
    in SQLite's VM steps, not timed), and the batches list every message asked for once."""
    db = tmp_path / "h.db"
    store = SqliteStore.open(db).unwrap()
    asyncio.run(ok(store.ingest([conversation(f"old{n}", ("user", f"old {n}"))
                                 for n in range(4 * MESSAGES)])))
    asyncio.run(ok(store.keep_vectors("m", [(key(f"old{n}", 0), axis(0))
                                            for n in range(4 * MESSAGES)])))
    named = [f"new{n}" for n in range(2 * BATCH)]
    asyncio.run(ok(store.ingest([conversation(s, *[("user", f"{s} {n}") for n in range(3)])
                                 for s in named])))
    store.close()
    listed, read = _embed_in_batches(db, frozenset(named))
    assert sorted(listed) == sorted((s, n) for s in named for n in range(3))
    assert read[0] < 3 * max(read[1:]), read


def _embed_in_batches(db: Path, sessions: frozenset[str]
                      ) -> tuple[list[tuple[str, int]], list[int]]:
    """Each (session, position) SQLite's ``unembedded`` lists for ``sessions``, batch after
    batch, each batch kept as embedded, and the VM steps (in hundreds) each call took."""
    connection = sqlite3.connect(db, isolation_level=None)
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    connection.set_progress_handler(step, 100)
    starts: dict[StartKey, sqlite_vectors.Start] = {}
    listed: list[tuple[str, int]] = []
    read: list[int] = []
    try:
        while True:
            steps[0] = 0
            found = sqlite_vectors.unembedded(connection, "m", ("user",), BATCH, writes=0,
                                              starts=starts, sessions=sessions)
            read.append(steps[0])
            if not found:
                break
            listed += [(m.session_id, m.position) for m in found]
            sqlite_vectors.keep(connection, "m", {(m.session_id, m.position): axis(0)
                                                  for m in found}).unwrap()
    finally:
        connection.close()
    return listed, read
