"""The ranked title statement (FTS5 ranks, only the best titles are joined) against the
full one it stands in for."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.sql import titles
from harkback.adapters.stores.sql.statement import Statement
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import MatchQuery
from harkback.stages.query import parse_query
from harkback.stages.records import Conversation
from tests.adapters.stores.statement_files import plain_connection, store_file
from tests.adapters.stores.store_contract import match, ok
from tests.conftest import conversation

WORDS = ("error", "docker", "bridge", "dns", "config", "cache", "deploy", "kernel")
SOURCES = ("cli", "web", "cron")


def _corpus() -> list[Conversation]:
    # Few distinct titles, so most scores are tied and a cut falls inside a tie; some
    # sessions have no start time (they order last among equal scores).
    pick = random.Random(11)
    kinds = [" ".join(pick.choices(WORDS, weights=(9, 3, 2, 1, 3, 2, 1, 1), k=3))
             for _ in range(12)]
    return [conversation(f"s{i}", ("user", "x"), title=pick.choice(kinds),
                         source=SOURCES[i % len(SOURCES)],
                         started_at=None if i % 7 == 0 else float(pick.randrange(40)))
            for i in range(150)]


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[Path, sqlite3.Connection]]:
    """A store file holding :func:`_corpus`, and a plain connection to it."""
    path = store_file(tmp_path_factory, "titles", _corpus())
    for connection in plain_connection(path):
        yield path, connection


@st.composite
def queries(draw: st.DrawFn) -> MatchQuery:
    """Disjunctions of corpus words, any hidden sources and limit, no scope or time bound."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True))
    return match(" OR ".join(words),
                 hidden_sources=tuple(draw(st.sets(st.sampled_from(SOURCES), max_size=2))),
                 limit=draw(st.integers(1, 60)), max_scored=None)


def _rows(connection: sqlite3.Connection, statement: Statement) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in connection.execute(statement.sql, statement.params)]


@settings(max_examples=150, deadline=None)
@given(query=queries(), fetch=st.integers(1, 200), within=st.booleans())
def test_ranked_rows_are_the_full_rows_when_enough_survive(
        stored: tuple[Path, sqlite3.Connection], query: MatchQuery, fetch: int,
        within: bool) -> None:
    """The ranked rows lead the full ones; all of them with ``limit`` survivors or nothing
    left out."""
    _, connection = stored
    also = parse_query("error").expression if within else None
    *rows, last = _rows(connection, titles.ranked_search(query, fetch, within=also))
    ranked = [row[:6] for row in rows]
    full = _rows(connection, titles.search(query, within=also))
    assert ranked == full[:len(ranked)]
    if len(ranked) >= query.limit or last[6] == 0:
        assert ranked == full


def test_a_cut_inside_a_tie_keeps_the_whole_tie(
        stored: tuple[Path, sqlite3.Connection]) -> None:
    """Cut at one title, every title scored as high joins, ordered by start time."""
    _, connection = stored
    query = match("kernel OR dns", limit=100, max_scored=None)
    full = _rows(connection, titles.search(query))
    tied = [row for row in full if row[5] == full[0][5]]
    *rows, last = _rows(connection, titles.ranked_search(query, 1))
    assert len(tied) > 1
    assert [row[:6] for row in rows] == tied
    assert last[6] == len(full) - len(tied)


@settings(max_examples=60, deadline=None)
@given(query=queries(), since=st.none() | st.floats(0, 40))
def test_store_title_search_equals_the_full_statement(
        stored: tuple[Path, sqlite3.Connection], query: MatchQuery,
        since: float | None) -> None:
    """Through the store, ranked first or fallen back, a title search gives the full
    statement's sessions in its order."""
    path, connection = stored
    query = attrs.evolve(query, since=since)
    store = SqliteStore.open(path, readonly=True).unwrap()
    try:
        hits = asyncio.run(ok(store.search_titles(query)))
    finally:
        store.close()
    full = _rows(connection, titles.search(query))
    assert [(h.session_id, h.title, h.source, h.started_at, h.project, -h.score)
            for h in hits] == full
