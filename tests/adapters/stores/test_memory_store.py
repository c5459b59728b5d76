"""Tests of the in-memory store: the shared contract, and agreement with SQLite's ranking."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import MatchQuery
from harkback.stages.query import parse_query
from harkback.stages.records import ROLES, Conversation, Message, MessageHit, Session, ToolCall
from tests.adapters.stores.filter_contract import FilterContract
from tests.adapters.stores.removal_contract import RemovalContract
from tests.adapters.stores.store_contract import StoreContract, ok, twin_stores
from tests.conftest import conversation


@pytest.fixture
def store() -> MemoryStore:
    """A fresh, empty in-memory store."""
    return MemoryStore()


class TestMemoryStore(StoreContract, RemovalContract, FilterContract):
    """The SessionStore contract, run against the in-memory store."""


CORPUS = (
    conversation("docker", ("user", "the docker bridge network is down again"),
                 ("assistant", "docker network prune then restart the docker daemon"),
                 ("user", "bridge works now, thanks"), started_at=10.0),
    conversation("cors", ("user", "CORS error from nginx on the api"),
                 ("assistant", "nginx was missing the Access-Control-Allow-Origin header"),
                 ("user", "fixed: nginx cors header added to the api location"), started_at=20.0),
    conversation("cron", *[("user", f"backup job {i} finished; docker volume backup ok")
                           for i in range(5)], source="cron", started_at=30.0),
    conversation("zh", ("user", "上次怎么解决端口冲突"), ("assistant", "修改youer服务端的端口配置"),
                 started_at=40.0),
    Conversation(Session(id="tools", started_at=50.0), (
        Message(session_id="tools", position=0, role="assistant", tool_calls=(
            ToolCall(id="c1", name="bash", arguments="docker ps --filter network=bridge"),)),
        Message(session_id="tools", position=1, role="tool", tool_name="bash",
                content="CONTAINER ID  IMAGE  docker-proxy bridge"))),
)

WORDS = ("docker", "bridge", "network", "nginx", "cors", "header", "api", "backup", "restart",
         "端口", "冲突", "服务端", "youer", "doc", "net", "the", "missing", "zzz")


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryStore, SqliteStore]]:
    """A memory store and a SQLite store holding the same corpus."""
    yield from twin_stores(CORPUS, tmp_path_factory.mktemp("twins"))


def _both(twins: tuple[MemoryStore, SqliteStore], query: MatchQuery
          ) -> tuple[tuple[MessageHit, ...], tuple[MessageHit, ...]]:
    async def run() -> tuple[tuple[MessageHit, ...], tuple[MessageHit, ...]]:
        return await ok(twins[0].search(query)), await ok(twins[1].search(query))
    return asyncio.run(run())


@pytest.mark.parametrize("text", [
    "docker bridge", "how did we fix the nginx cors error", '"docker network" OR nginx',
    "doc* NOT cron", "端口冲突", "冲", "服务端 youer", "bridge AND docker", "bash"])
def test_scores_match_sqlite_bm25(twins: tuple[MemoryStore, SqliteStore], text: str) -> None:
    """For the same corpus and query, the memory store's hits and scores equal SQLite's."""
    expression = parse_query(text).expression
    assert expression is not None
    memory, sqlite = _both(twins, MatchQuery(expression=expression, roles=ROLES, limit=100))
    assert memory
    assert [(h.session_id, h.position) for h in memory] == [
        (h.session_id, h.position) for h in sqlite]
    assert [h.score for h in memory] == pytest.approx([h.score for h in sqlite], rel=1e-9)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from((*WORDS, "OR", "AND", "NOT", '"', "*")), max_size=6))
def test_hits_agree_with_sqlite(twins: tuple[MemoryStore, SqliteStore],
                                words: list[str]) -> None:
    """Any query built from corpus words and operators finds the same messages in both."""
    expression = parse_query(" ".join(words)).expression
    if expression is None:
        return
    memory, sqlite = _both(twins, MatchQuery(expression=expression, roles=ROLES, limit=100))
    assert sorted((h.session_id, h.position) for h in memory) == sorted(
        (h.session_id, h.position) for h in sqlite)
