"""What ``unembedded`` reads for a few sessions (what a sync or a watch round stored), batch
after batch, on a real SQLite file: each call resumes where the last found its first
message, not at the first message of those sessions.

Read through the (session, position) index, every call read all of those sessions'
messages again: 64 sessions of 2,000 messages took 268 s of reads over 2,000 batches (11 s
once resumed in row id order).
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from harkback.adapters.stores import sqlite_vectors
from harkback.adapters.stores.sql.vectors import StartKey
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Role
from tests.adapters.stores.store_contract import ok
from tests.adapters.stores.vector_contract import axis, key
from tests.conftest import conversation

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
                                              starts=starts,
                                              sessions=frozenset({"s"}))
            read.append(steps[0])
            if not found:
                break
            listed += [(m.session_id, m.position) for m in found]
            sqlite_vectors.keep(connection, "m", {(m.session_id, m.position): axis(0)
                                                  for m in found}).unwrap()
    finally:
        connection.close()
    assert listed == [("s", n) for n in range(MESSAGES)]
    first, resumed = read[0], max(read[1:-1])
    assert resumed * 5 < first, read
