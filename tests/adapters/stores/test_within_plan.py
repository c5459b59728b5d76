"""A search that a part of the query must also match (``within``) matches FTS5 once.

Handing each row id of the ``within`` list back to FTS5 as a rowid constraint made it set
up the whole MATCH again per row: a 100,000-character operator soup took 1.4 s in a
10k-message store, 40 ms once matched once.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from harkback.adapters.stores import search_plan
from harkback.adapters.stores.sql import fulltext
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import MatchQuery
from harkback.stages.query import Term, parse_query
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation


def test_the_within_list_is_not_handed_to_fts5_row_by_row(tmp_path: Path) -> None:
    """The query plan scans the narrowed MATCH (``0:M``), never looks rows up in FTS5 by
    id (``0:=M``), and the rows are those matching the whole query."""
    db = tmp_path / "h.db"
    store = SqliteStore.open(db).unwrap()
    asyncio.run(ok(store.ingest([
        conversation("a", ("user", "docker bridge config"), ("assistant", "docker dns")),
        conversation("b", ("user", "docker config"), ("assistant", "bridge only"))])))
    store.close()
    full = parse_query("docker AND con* NOT dns").expression
    assert full is not None
    narrowed = search_plan.narrow(full, frozenset({Term("con", prefix=True)}))
    assert narrowed is not None
    statement = fulltext.search(MatchQuery(expression=full, roles=("user", "assistant")),
                                expression=narrowed, within=full)
    with sqlite3.connect(db) as connection:
        plan = [row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + statement.sql,
                                                     statement.params)]
        found = connection.execute(statement.sql, statement.params).fetchall()
    connection.close()
    fts = [step for step in plan if "messages_fts VIRTUAL TABLE" in step]
    assert fts and not any(":=" in step for step in fts), plan
    assert sorted((row[0], row[1]) for row in found) == [("a", 0), ("b", 0)]
