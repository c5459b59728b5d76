"""A bounded search told the counts ``term_stats`` gave (``MatchQuery.known_counts``) finds
exactly what it finds when it counts every term itself, without counting those terms."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores import sqlite_search
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.match.plan import known_counts
from harkback.stages.ports import MatchQuery
from harkback.stages.query import AllOf, AnyOf, Node, Phrase, Term
from harkback.stages.records import ROLES
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation

WORDS = tuple(f"w{k}" for k in range(8))
"""Message ``i`` holds ``w{k}`` when ``k + 1`` divides ``i``: w0 is in every message, w7
in one of eight, so caps between 1 and the store's size make each word common or not."""


def _text(i: int) -> str:
    return " ".join(["text", *(w for k, w in enumerate(WORDS) if i % (k + 1) == 0)])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteStore]:
    """A store of 40 two-message sessions, newest last."""
    opened = SqliteStore.open(tmp_path_factory.mktemp("known") / "h.db").unwrap()
    chats = [conversation(f"s{n}", ("user", _text(2 * n)), ("assistant", _text(2 * n + 1)),
                          started_at=float(n)) for n in range(40)]
    asyncio.run(ok(opened.ingest(chats)))
    yield opened
    opened.close()


units = st.one_of(st.sampled_from(WORDS).map(Term),
                  st.just(Term("w", prefix=True)),
                  st.just(Phrase(("text", "w0"))))
expressions = st.one_of(
    units,
    st.lists(units, min_size=2, max_size=4, unique=True).map(lambda us: AnyOf(tuple(us))),
    st.lists(units, min_size=2, max_size=3, unique=True).map(lambda us: AllOf(tuple(us))))


@settings(max_examples=150, deadline=None)
@given(expression=expressions, cap=st.integers(1, 90), limit=st.integers(1, 30))
def test_known_counts_change_no_answer(store: SqliteStore, expression: Node, cap: int,
                                       limit: int) -> None:
    """The same rows, scores and order with the counts given as without them."""
    async def both() -> tuple[tuple[object, ...], tuple[object, ...]]:
        stats = await ok(store.term_stats(WORDS, ["w"]))
        query = MatchQuery(expression=expression, roles=ROLES, limit=limit, max_scored=cap)
        counted = await ok(store.search(query))
        told = await ok(store.search(attrs.evolve(query, known_counts=known_counts(stats))))
        return counted, told
    counted, told = asyncio.run(both())
    assert told == counted


def _statements(db: Path, unit: Term, cap: int, known: dict[str, int]) -> tuple[bool, int]:
    traced: list[str] = []
    with sqlite3.connect(db) as connection:
        connection.set_trace_callback(traced.append)
        common = sqlite_search.is_common(connection, unit, cap, known)
    connection.close()
    return common, sum("COUNT(*)" in sql for sql in traced)


def test_a_known_count_is_not_counted_again(store: SqliteStore) -> None:
    """A known count decides (a prefix's is known under its text and ``*``); an unknown
    term, or a prefix whose word alone is known, is counted."""
    assert _statements(store.path, Term("w7"), 4, {"w7": 10}) == (True, 0)
    assert _statements(store.path, Term("w7"), 10, {"w7": 10}) == (False, 0)
    assert _statements(store.path, Term("w7"), 4, {}) == (True, 1)
    assert _statements(store.path, Term("w", prefix=True), 4, {"w": 1}) == (True, 1)
    assert _statements(store.path, Term("w", prefix=True), 4, {"w*": 80}) == (True, 0)


def test_an_estimated_count_decides_only_within_the_exact_limit(store: SqliteStore) -> None:
    """A count past the exact limit is an estimate: more than the limit for sure, so it
    makes a term common under a cap within the limit; above the limit it is counted."""
    past = sqlite_search.EXACT_COUNT_LIMIT + 1
    assert _statements(store.path, Term("w7"), 2000, {"w7": past}) == (True, 0)
    assert _statements(store.path, Term("w7"), past, {"w7": past}) == (False, 1)
