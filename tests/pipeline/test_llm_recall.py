"""Model-written recall end to end: facade, pipeline, OpenAI adapter, a real HTTP server."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import attrs

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.summary_cache import SqliteSummaryCache
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback, Response
from harkback.pipeline.tool import handle_session_search_sync
from harkback.stages.ports import SessionStore, SummaryCache
from harkback.stages.summarize.model import LlmSummarize
from harkback.stages.summarize.reply import NOT_ADDRESSED
from tests.support.chat_server import ChatServer, Reply
from tests.support.corpus import QUERY, docker_session, docker_store

LLM = attrs.evolve(Pipeline(), summarize=LlmSummarize())


def _harkback(store: SessionStore, server: ChatServer, cache: SummaryCache | None = None,
              **settings: Any) -> Harkback:
    options: dict[str, Any] = {"backoff": 0.05, "max_concurrency": 10, **settings}
    model = OpenAIChatModel(ChatSettings(model="test-model", base_url=server.url, **options))
    return Harkback(store=store, pipeline=LLM, model=model, cache=cache)


def _results(response: Response) -> list[dict[str, Any]]:
    payload = response.to_payload()
    assert payload["success"], payload
    results: list[dict[str, Any]] = payload["results"]
    return results


async def _search(hb: Harkback, limit: int = 5) -> Response:
    try:
        return await hb.search(QUERY, limit=limit)
    finally:
        await hb.aclose()


async def test_five_sessions_are_summarised_concurrently() -> None:
    """Five sessions with a 1 s model each take about 1 s together, not 5 s."""
    with ChatServer(lambda _r: Reply(delay=1.0)) as server:
        hb = _harkback(await docker_store(5), server)
        started = time.monotonic()
        results = _results(await _search(hb))
        elapsed = time.monotonic() - started
    assert [r["summary_kind"] for r in results] == ["llm"] * 5
    assert elapsed < 3.0


async def test_one_failing_session_keeps_its_place_with_the_extractive_summary() -> None:
    """The session whose model call fails stays in rank order, says why, shows extractive."""
    store = await docker_store(4)
    ranked = [r["session_id"] for r in _results(await Harkback(store=store).search(
        QUERY, limit=4))]
    with ChatServer(lambda r: Reply(status=503) if "marker-2" in r.prompt else Reply()) as s:
        results = _results(await _search(_harkback(store, s), limit=4))
    assert [r["session_id"] for r in results] == ranked
    failed = next(r for r in results if r["session_id"] == "s2")
    assert failed["summary_kind"] == "extractive"
    assert "HTTP 503" in failed["summary_note"]
    assert "docker network create" in failed["summary"]
    assert sorted(r["summary_kind"] for r in results) == ["extractive", "llm", "llm", "llm"]


async def test_the_cache_removes_repeat_model_calls(tmp_path: Path) -> None:
    """Asking the same question twice calls the model once per session."""
    with SqliteStore.open(tmp_path / "harkback.db").unwrap() as store:
        await store.ingest([docker_session(i) for i in range(3)])
        with ChatServer() as server:
            hb = _harkback(store, server, cache=SqliteSummaryCache(store))
            first = (await _search(hb, limit=3)).to_payload()
            calls = len(server.received)
            second = (await _search(hb, limit=3)).to_payload()
            assert len(server.received) == calls == 3
    assert [r["summary"] for r in second["results"]] == [r["summary"] for r in first["results"]]
    assert all(r["summary_note"].startswith("from the summary cache")
               for r in second["results"])
    assert first["usage"]["prompt_tokens"] == 3 * 120
    assert "usage" not in second


async def test_the_prompt_quotes_the_transcript_as_untrusted_data() -> None:
    """What reaches the server holds the session text between the transcript markers."""
    with ChatServer() as server:
        await _search(_harkback(await docker_store(1), server), limit=1)
        prompt = server.received[0].prompt
    opening = prompt.index("\n<<<TRANSCRIPT ")
    closing = prompt.index("\nTRANSCRIPT ", opening + 1)
    assert "untrusted" in prompt[:opening]
    assert opening < prompt.index("[#1] [USER]: marker-0") < closing


async def test_not_relevant_becomes_a_plain_does_not_address_summary() -> None:
    """NOT_RELEVANT from the model is shown as a plain statement, not as a recap."""
    with ChatServer(lambda _r: Reply(content="NOT_RELEVANT")) as server:
        results = _results(await _search(_harkback(await docker_store(2), server), limit=2))
    assert [r["summary"] for r in results] == [NOT_ADDRESSED] * 2
    assert {r["summary_kind"] for r in results} == {"llm"}


async def test_usage_is_reported_per_session_and_in_total() -> None:
    """Each result has its tokens; the payload adds them up."""
    with ChatServer(lambda r: Reply(prompt_tokens=100 + r.index, completion_tokens=10)) as s:
        payload = (await _search(_harkback(await docker_store(3), s), limit=3)).to_payload()
    per_session = [r["usage"]["prompt_tokens"] for r in payload["results"]]
    assert sorted(per_session) == [100, 101, 102]
    assert payload["usage"] == {"prompt_tokens": 303, "completion_tokens": 30}


async def test_the_recall_deadline_bounds_a_slow_model() -> None:
    """A model slower than the deadline leaves extractive summaries in about that time."""
    with ChatServer(lambda _r: Reply(hang=True)) as server:
        hb = attrs.evolve(_harkback(await docker_store(2), server),
                          pipeline=attrs.evolve(Pipeline(),
                                                summarize=LlmSummarize(deadline_s=0.5)))
        started = time.monotonic()
        results = _results(await _search(hb, limit=2))
        elapsed = time.monotonic() - started
    assert elapsed < 2.0
    assert all("0.5 s deadline" in r["summary_note"] for r in results)


def _sync_recall(hb: Harkback) -> list[str]:
    return [r["summary_kind"] for r in _results(hb.search_sync(QUERY, limit=2))]


def test_sync_search_from_plain_code() -> None:
    """search_sync works with no event loop anywhere and leaves no client behind."""
    store = asyncio.run(docker_store(2))
    with ChatServer() as server:
        hb = _harkback(store, server)
        kinds = _sync_recall(hb)
    assert kinds == ["llm", "llm"]
    assert isinstance(hb.model, OpenAIChatModel) and hb.model.bound_loops == 0


def test_sync_search_from_worker_threads_at_once() -> None:
    """Two worker threads recall at the same time through one Harkback."""
    store = asyncio.run(docker_store(2))
    with ChatServer(lambda _r: Reply(delay=0.3)) as server:
        hb = _harkback(store, server)
        kinds: list[list[str]] = []
        threads = [threading.Thread(target=lambda: kinds.append(_sync_recall(hb)))
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
    assert kinds == [["llm", "llm"], ["llm", "llm"]]
    assert isinstance(hb.model, OpenAIChatModel) and hb.model.bound_loops == 0


async def test_sync_search_from_inside_a_running_loop() -> None:
    """A sync tool handler called on an agent's loop neither deadlocks nor binds that loop."""
    store = await docker_store(2)
    with ChatServer() as server:
        hb = _harkback(store, server)
        kinds = _sync_recall(hb)
        model = hb.model
        assert isinstance(model, OpenAIChatModel)
        assert model.bound_loops == 0
        # The same object then serves this loop's async API with a client of its own.
        results = _results(await hb.search(QUERY, limit=2))
        assert model.bound_loops == 1
        await hb.aclose()
    assert kinds == ["llm", "llm"]
    assert [r["summary_kind"] for r in results] == ["llm", "llm"]
    assert model.bound_loops == 0


async def test_no_model_configured_means_extractive_and_no_request() -> None:
    """The llm summarizer without a model falls back to extractive summaries."""
    store: MemoryStore = await docker_store(2)
    with ChatServer() as server:
        results = _results(await Harkback(store=store, pipeline=LLM).search(QUERY, limit=2))
        assert server.received == []
    assert {r["summary_kind"] for r in results} == {"extractive"}


async def test_the_sync_tool_handler_works_inside_an_agent_loop() -> None:
    """The sync session_search handler, called on a running loop, returns model summaries."""
    store = await docker_store(2)
    with ChatServer() as server:
        hb = _harkback(store, server)
        payload = json.loads(handle_session_search_sync(hb, '{"query": "docker bridge network"}'))
    assert payload["success"]
    assert [r["summary_kind"] for r in payload["results"]] == ["llm", "llm"]
