"""``recent`` on a PostgreSQL store of some thousands of sessions: it reads the first rows
of the ``sessions_started`` index, looking each one's parent up, rather than sorting every
session and hashing every id; and no statement of the store is compiled (JIT), which cost
0.6-1.1 s a listing on a server built with LLVM (benchmarks/README.md, "PostgreSQL")."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from harkback.adapters.stores import postgres_reads
from harkback.adapters.stores.postgres import PostgresStore
from harkback.stages.ports import RecentQuery
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation
from tests.support.new_stores import store_locations

SESSIONS = 3000


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


class _Explained:
    """A connection that answers each statement with its plan (``EXPLAIN ANALYZE``)."""

    def __init__(self, connection: psycopg.Connection[Any]) -> None:
        self.connection = connection
        self.plans: list[str] = []

    def execute(self, statement: str, params: Any = None) -> Any:
        rows = self.connection.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {statement}", params)
        self.plans.append("\n".join(str(row[0]) for row in rows))
        return self.connection.execute(statement, params)


@pytest.mark.parametrize("query", [RecentQuery(limit=10), RecentQuery(limit=10, until=2000.0),
                                   RecentQuery(limit=10, sources=("cron",))])
async def test_recent_reads_the_newest_rows_of_an_index(url: str, query: RecentQuery) -> None:
    """Every session's start is known and a tenth are sub-agents: the listing walks
    ``sessions_started`` from the newest end, scans no table and hashes no ids."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([
            conversation(f"s{n:05}", ("user", "docker"), started_at=float(n),
                         parent=f"s{n - 1:05}" if n % 10 == 0 else None,
                         source="cron" if n % 3 == 0 else "cli")
            for n in range(1, SESSIONS + 1)]))
        await ok(store.optimize())  # the planner's statistics, as `harkback optimize` leaves them
        expected = await ok(store.recent(query))
    with psycopg.connect(url) as connection:
        explained = _Explained(connection)
        assert postgres_reads.recent(explained, query) == expected  # type: ignore[arg-type]
    plan = explained.plans[0]
    assert "Index Scan Backward using sessions_started on sessions" in plan, plan
    assert "Seq Scan" not in plan and "hashed SubPlan" not in plan, plan
    assert len(expected) == 10


async def test_no_statement_of_the_store_is_compiled(url: str) -> None:
    """JIT is off on the store's connections; a URL's own options may turn it back on."""
    def jit(connection: psycopg.Connection[Any]) -> str:
        row = connection.execute("SHOW jit").fetchone()
        assert row is not None
        return str(row[0])

    for target, expected in ((url, "off"), (f"{url}&options=-c%20jit%3Don", "on")):
        for readonly in (False, True):
            with PostgresStore.open(target, readonly=readonly).unwrap() as store:
                assert await ok(store.run(jit)) == expected
