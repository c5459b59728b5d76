"""Widening a bounded search that a few long sessions filled (stages/match/widen.py)."""

from __future__ import annotations

import attrs
from returns.future import FutureResult
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.errors import StoreUnavailable
from harkback.stages.match.widen import MORE_SEARCHES, widened
from harkback.stages.ports import MatchQuery
from harkback.stages.query import Term
from harkback.stages.records import MessageHit
from tests.conftest import conversation


class _Unaware(MemoryStore):
    """A library caller's store written before ``exclude_sessions``: it ignores it."""

    def search(self, query: MatchQuery
               ) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
        return super().search(attrs.evolve(query, exclude_sessions=()))


async def _searched(store: MemoryStore, *, sessions: int, parts: bool = False
                    ) -> tuple[MatchQuery, tuple[MessageHit, ...]]:
    """``sessions`` sessions of 20 user messages about "lag" stored in ``store`` (with
    ``parts``, each continuing the one before: one conversation), and its first bounded
    search (10 rows) of them."""
    long = [conversation(f"s{n}", *[("user", f"lag {i}") for i in range(20)],
                         started_at=float(n), parent=f"s{n - 1}" if parts and n else None)
            for n in range(sessions)]
    unsafe_perform_io((await store.ingest(long).awaitable()).unwrap())
    query = MatchQuery(expression=Term("lag"), roles=("user",), limit=10, max_scored=5)
    return query, unsafe_perform_io((await store.search(query).awaitable()).unwrap())


async def test_a_store_ignoring_the_exclusion_repeats_no_hit() -> None:
    """Its further searches find the rows already read: none is added twice."""
    store = _Unaware()
    query, first = await _searched(store, sessions=3)

    hits = unsafe_perform_io(
        (await widened(store, query, first, want=3, rows=5).awaitable()).unwrap()).hits

    keys = [(h.session_id, h.position) for h in hits]
    assert len(keys) == len(set(keys)) == len(first)


class _Counting(MemoryStore):
    """Counts the searches asked of it."""

    searches: int = 0

    def search(self, query: MatchQuery
               ) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
        self.searches += 1
        return super().search(query)


async def test_further_searches_are_bounded() -> None:
    """Nine long sessions, ten wanted: each further search finds one more session, and
    they stop after MORE_SEARCHES (each passes over every row of the sessions found)."""
    store = _Counting()
    query, first = await _searched(store, sessions=9)
    store.searches = 0

    hits = unsafe_perform_io(
        (await widened(store, query, first, want=10, rows=5).awaitable()).unwrap()).hits

    assert store.searches == MORE_SEARCHES
    assert len({h.session_id for h in hits}) == 1 + MORE_SEARCHES


async def test_the_parts_of_one_conversation_are_one_lineage() -> None:
    """Nine parts of one conversation, three lineages wanted: found three parts, the
    search goes on (they are one result), bounded by MORE_SEARCHES all the same; it
    stopped at three sessions."""
    store = _Counting()
    query, first = await _searched(store, sessions=9, parts=True)
    store.searches = 0

    found = unsafe_perform_io(
        (await widened(store, query, first, want=3, rows=5).awaitable()).unwrap())

    assert store.searches == MORE_SEARCHES
    sessions = {h.session_id for h in found.hits}
    assert len(sessions) == 1 + MORE_SEARCHES and sessions <= set(found.links)
