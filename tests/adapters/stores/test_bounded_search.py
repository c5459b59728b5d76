"""Bounded search (``MatchQuery.max_scored``): the contract on both stores, and their agreement."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import MatchQuery, SessionStore
from harkback.stages.query import evaluate, parse_query
from harkback.stages.records import ROLES, MessageHit
from harkback.stages.text.tokens import index_tokens
from tests.adapters.stores.store_contract import match, ok, twin_stores
from tests.conftest import conversation
from tests.support.new_stores import new_stores

# "error" is in every message, "config" in most, "bridge" and "dns" in few.
CORPUS = (
    conversation("old", ("user", "error: the docker bridge has no dns"),
                 ("assistant", "error fixed with a user-defined bridge network and config"),
                 started_at=10.0),
    *(conversation(f"noise{i}", ("user", f"error in config file {i}"),
                   ("assistant", f"error {i} logged, config reloaded"), started_at=20.0 + i)
      for i in range(6)),
    conversation("tools", ("tool", "error config error config"), ("user", "error again"),
                 started_at=40.0),
    conversation("new", ("user", "error config server restarted"),
                 ("assistant", "the error is gone after the dns change"), started_at=50.0),
)


empty_store = new_stores("memory", "sqlite")
"""An empty store of each backend."""


@pytest.fixture
async def store(empty_store: SessionStore) -> SessionStore:
    """Each backend, holding :data:`CORPUS`."""
    await ok(empty_store.ingest(CORPUS))
    return empty_store


def _ids(hits: tuple[MessageHit, ...]) -> list[tuple[str, int]]:
    return [(h.session_id, h.position) for h in hits]


def _content(hits: tuple[MessageHit, ...]) -> list[str]:
    return [h.content for h in hits]


async def test_a_cap_above_every_count_changes_nothing(store: SessionStore) -> None:
    """When no unit is common the bounded search is the exact search."""
    query = match("error bridge dns", limit=100)
    exact = await ok(store.search(attrs.evolve(query, max_scored=None)))
    bounded = await ok(store.search(attrs.evolve(query, max_scored=1000)))
    assert _ids(bounded) == _ids(exact)
    assert [h.score for h in bounded] == [h.score for h in exact]


async def test_rows_of_selective_terms_come_first(store: SessionStore) -> None:
    """With a common word in the query, the rows of the rare words lead, scored; others score 0."""
    hits = await ok(store.search(match("error bridge", limit=5, max_scored=3)))
    assert _ids(hits)[:2] == [("old", 0), ("old", 1)]
    assert all(h.score > 0 for h in hits[:2])
    assert [h.score for h in hits[2:]] == [0.0, 0.0, 0.0]


async def test_short_results_fill_up_with_the_newest_rows(store: SessionStore) -> None:
    """After the rows of the selective words, the newest other matches fill up, unscored."""
    hits = await ok(store.search(match("error dns", limit=4, max_scored=2,
                                       roles=("user", "assistant"))))
    assert set(_ids(hits[:2])) == {("old", 0), ("new", 1)}
    assert _ids(hits[2:]) == [("new", 0), ("tools", 1)]
    assert [h.score for h in hits[2:]] == [0.0, 0.0]


async def test_only_common_words_still_find_rows(store: SessionStore) -> None:
    """A query made only of common words returns the newest rows matching them."""
    hits = await ok(store.search(match("error", limit=2, max_scored=2)))
    assert _ids(hits) == [("new", 1), ("new", 0)]
    assert [h.score for h in hits] == [0.0, 0.0]


async def test_an_and_with_a_common_word_is_still_an_and(store: SessionStore) -> None:
    """Rows found through the rare side of an AND must also hold the common side."""
    hits = await ok(store.search(match("dns AND config", max_scored=3)))
    assert _ids(hits) == []
    hits = await ok(store.search(match("bridge AND config", max_scored=3)))
    assert _ids(hits) == [("old", 1)]


async def test_a_common_exclusion_still_excludes(store: SessionStore) -> None:
    """NOT with a common word keeps out every row holding it."""
    hits = await ok(store.search(match("dns NOT docker", max_scored=1)))
    assert _ids(hits) == [("new", 1)]


async def test_fill_rows_honour_roles_and_hidden_sources(store: SessionStore) -> None:
    """Rows added to fill up obey the role filter and the hidden sources."""
    hits = await ok(store.search(match("error", limit=100, max_scored=2, roles=("tool",))))
    assert _ids(hits) == [("tools", 0)]
    hidden = await ok(store.search(match("error config", limit=100, max_scored=2,
                                         hidden_sources=("cli",))))
    assert hidden == ()


async def test_bounded_search_never_exceeds_the_limit(store: SessionStore) -> None:
    """Narrowed rows and fill rows together stay within the limit."""
    for limit in (1, 2, 5, 7):
        hits = await ok(store.search(match("error bridge config", limit=limit, max_scored=2)))
        assert len(hits) == limit


def test_max_scored_must_be_positive() -> None:
    """A cap of zero is refused when the query is made."""
    with pytest.raises(ValueError, match="max_scored"):
        match("error", max_scored=0)


# --- agreement ------------------------------------------------------------------------------

WORDS = ("error", "config", "bridge", "dns", "docker", "server", "network", "gone", "zzz")


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryStore, SqliteStore]]:
    """A memory store and a SQLite store holding :data:`CORPUS`."""
    yield from twin_stores(CORPUS, tmp_path_factory.mktemp("bounded"))


def _every_row() -> list[tuple[tuple[str, int], tuple[str, ...]]]:
    return [((m.session_id, m.position), index_tokens(m.text_for_search()))
            for c in CORPUS for m in c.messages]


def _search_both(twins: tuple[MemoryStore, SqliteStore], query: MatchQuery
                 ) -> tuple[tuple[MessageHit, ...], tuple[MessageHit, ...]]:
    async def both() -> tuple[tuple[MessageHit, ...], tuple[MessageHit, ...]]:
        return await ok(twins[0].search(query)), await ok(twins[1].search(query))
    return asyncio.run(both())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=6), st.integers(min_value=1, max_value=6),
       st.integers(min_value=1, max_value=12))
def test_both_stores_rank_plain_queries_alike(twins: tuple[MemoryStore, SqliteStore],
                                             words: list[str], cap: int, limit: int) -> None:
    """Any plain question, cap and limit give the same hits, order and scores on both."""
    expression = parse_query(" ".join(words)).expression
    if expression is None:
        return
    memory, sqlite = _search_both(twins, MatchQuery(expression=expression, roles=ROLES,
                                                    limit=limit, max_scored=cap))
    assert _ids(memory) == _ids(sqlite)
    assert [h.score for h in memory] == pytest.approx([h.score for h in sqlite], rel=1e-9)
    matching = {key for key, toks in _every_row() if evaluate(expression, toks)}
    assert len(sqlite) == min(limit, len(matching))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from((*WORDS, "OR", "AND", "NOT", '"', "*")), max_size=6),
       st.integers(min_value=1, max_value=6))
def test_both_stores_find_the_same_rows(twins: tuple[MemoryStore, SqliteStore],
                                       words: list[str], cap: int) -> None:
    """With operators, both stores return the same rows, and only rows that match."""
    expression = parse_query(" ".join(words)).expression
    if expression is None:
        return
    # The two stores' BM25 differ on some OR-of-AND expressions even without a bound
    # (FTS5 counts a phrase only inside a branch that matched), so order is not compared.
    memory, sqlite = _search_both(twins, MatchQuery(expression=expression, roles=ROLES,
                                                    limit=100, max_scored=cap))
    assert sorted(_ids(memory)) == sorted(_ids(sqlite))
    matching = {key for key, toks in _every_row() if evaluate(expression, toks)}
    assert set(_ids(sqlite)) == matching
