"""The sessions with no time are found by a seek on the ``sessions_started`` index.

Every search and listing bounded by ``--since``/``--until`` counts them
(:mod:`~harkback.stages.undated`). Asked as ``(? = 0 OR started_at IS NULL)``, SQLite
walked the whole index instead: ~4 ms of CPU a bounded search on a 60k-session store,
~0.03 ms with the seek.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from harkback.adapters.stores.sql import rows
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import RecentQuery
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation


@pytest.mark.parametrize(("parts", "expected"), [(False, "u"), (True, "sub")])
def test_the_undated_roots_are_sought_not_scanned_for(
        tmp_path: Path, parts: bool, expected: str) -> None:
    """The plan searches ``sessions_started`` for NULL rather than scanning it, and the
    rows are the undated roots alone (or, ``parts``, the undated sessions no root: what
    a bounded search also counts)."""
    db = tmp_path / "h.db"
    store = SqliteStore.open(db).unwrap()
    asyncio.run(ok(store.ingest([conversation("d", ("user", "docker"), started_at=5.0),
                                 conversation("u", ("user", "bridge")),
                                 conversation("sub", ("user", "nat"), parent="d")])))
    store.close()
    statement = rows.recent(RecentQuery(limit=101, undated=True, parts=parts))
    with sqlite3.connect(db) as connection:
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + statement.sql,
                                                     statement.params)]
        found = connection.execute(statement.sql, statement.params).fetchall()
    connection.close()
    assert any(step.startswith("SEARCH s USING INDEX sessions_started") for step in plan), plan
    assert [row[0] for row in found] == [expected]
