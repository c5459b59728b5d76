"""Tests of the in-memory store: agreement with SQLite's ranking (the shared contract runs in
test_store_contract.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback, run_sync
from harkback.stages.ports import MatchQuery
from harkback.stages.query import parse_query
from harkback.stages.records import ROLES, Conversation, Message, MessageHit, Session, ToolCall
from tests.adapters.stores.store_contract import ok, twin_stores
from tests.conftest import conversation

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


def test_searches_from_worker_threads_while_another_thread_ingests() -> None:
    """search_sync from worker threads (as the README offers) beside a thread that ingests:
    every search answers, none raises "dictionary changed size during iteration"."""
    store = MemoryStore()
    # Enough sessions that each search walks them for a while: the window a write hits.
    run_sync(lambda: store.ingest([conversation(f"old{n}", ("user", f"docker note {n}"))
                                   for n in range(5000)]))
    hb = Harkback(store=store)
    raised: list[BaseException] = []
    done = threading.Event()

    def ingest() -> None:
        for round_ in range(100):
            batch = [conversation(f"s{round_}-{n}", ("user", f"docker bridge {round_} {n}"),
                                  ("assistant", "checked " * 40)) for n in range(25)]
            run_sync(lambda batch=batch: store.ingest(batch))  # type: ignore[misc]
        done.set()

    def search() -> None:
        while not done.is_set():
            try:
                payload = hb.search_sync("docker bridge").to_payload()
                assert payload["success"], payload
            except BaseException as error:  # any failure is the finding
                raised.append(error)
    threads = [threading.Thread(target=ingest), *(threading.Thread(target=search)
                                                  for _ in range(3))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert raised == []
    assert hb.search_sync("docker bridge 99 24").to_payload()["results"][0]["session_id"] == (
        "s99-24")
