"""A query that is one prefix ("dock*") on the SQLite store: FTS5 sets the prefix up once,
the id of its (cap + 1)-th newest match both counts the rows and bounds the newest-first
read. The rows must be those of the general bounded search, which the memory store
computes the plain way."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import MatchQuery
from harkback.stages.query import evaluate, parse_query
from harkback.stages.records import ROLES, MessageHit, Role
from harkback.stages.text.tokens import index_tokens
from tests.adapters.stores.store_contract import match, ok, twin_stores
from tests.conftest import conversation

# Twelve sessions: "docker" and "dockerfile" everywhere, in every role, and most of the
# newest rows are the tool's, so a role filter leaves too few of the newest matches.
CORPUS = (
    *(conversation(f"s{i:02d}", ("user", f"docker build number {i}"),
                   ("assistant", f"the dockerfile step {i} failed" if i % 3 else "rebuilt"),
                   ("tool", f"docker: error {i}"), ("tool", f"dockerd restarted {i}"),
                   started_at=10.0 + i)
      for i in range(12)),
)


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryStore, SqliteStore]]:
    """A memory store and a SQLite store holding :data:`CORPUS`."""
    yield from twin_stores(CORPUS, tmp_path_factory.mktemp("prefix"))


def _ids(hits: tuple[MessageHit, ...]) -> list[tuple[str, int]]:
    return [(h.session_id, h.position) for h in hits]


def _both(twins: tuple[MemoryStore, SqliteStore], query: MatchQuery
          ) -> tuple[tuple[MessageHit, ...], tuple[MessageHit, ...]]:
    async def run() -> tuple[tuple[MessageHit, ...], tuple[MessageHit, ...]]:
        return await ok(twins[0].search(query)), await ok(twins[1].search(query))
    return asyncio.run(run())


ROLE_SETS: tuple[tuple[Role, ...], ...] = (ROLES, ("user",), ("user", "assistant"),
                                           ("assistant",), ("tool",))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(("dock*", "docker*", "dockerf*", "d*", '"docker build"*', "zz*")),
       st.sampled_from(ROLE_SETS), st.integers(min_value=1, max_value=60),
       st.integers(min_value=1, max_value=20))
def test_a_prefix_finds_what_the_plain_bounded_search_finds(
        twins: tuple[MemoryStore, SqliteStore], text: str, roles: tuple[Role, ...], cap: int,
        limit: int) -> None:
    """Any cap, limit and roles: the same rows in the same order, with the same scores,
    and as many as match (up to the limit)."""
    memory, sqlite = _both(twins, match(text, roles=roles, limit=limit, max_scored=cap))
    assert _ids(sqlite) == _ids(memory)
    assert [h.score for h in sqlite] == pytest.approx([h.score for h in memory], rel=1e-9)
    expression = parse_query(text).expression
    assert expression is not None
    matching = [(m.session_id, m.position) for c in CORPUS for m in c.messages
                if m.role in roles and evaluate(expression, index_tokens(m.text_for_search()))]
    assert len(sqlite) == min(limit, len(matching))


def test_a_common_prefix_with_few_passing_rows_reads_past_its_newest_matches(
        twins: tuple[MemoryStore, SqliteStore]) -> None:
    """Of the 7 newest "dock*" rows only one is the user's; the rest come from older rows,
    newest first, unscored."""
    memory, sqlite = _both(twins, match("dock*", roles=("user",), limit=5, max_scored=6))
    assert _ids(sqlite) == [("s11", 0), ("s10", 0), ("s09", 0), ("s08", 0), ("s07", 0)]
    assert _ids(memory) == _ids(sqlite)
    assert [h.score for h in sqlite] == [0.0] * 5
