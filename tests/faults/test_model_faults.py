"""A model endpoint that misbehaves while many searches run at once: every search still
answers, in time, with the extractive summary where the model failed.

Single faults are covered beside the client (tests/adapters/models/test_openai_chat.py:
HTTP errors, Retry-After, malformed JSON, hangs and timeouts; tests/pipeline/
test_llm_recall.py: one failing session, the recall deadline). Here they are mixed under a
concurrent load, with a connection reset too.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import attrs
import pytest

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback
from harkback.stages.summarize.model import LlmSummarize
from tests.support.chat_server import ChatServer, Received, Reply
from tests.support.corpus import QUERY, docker_store

FAULTS: dict[str, Reply] = {
    "hang": Reply(hang=True),
    "429": Reply(status=429, headers=(("Retry-After", "0"),)),
    "500": Reply(status=500),
    "reset": Reply(reset=True),
    "malformed JSON": Reply(raw=b'{"choices": [{"message": '),
}

SEARCHES = 8


async def _load(server: ChatServer) -> tuple[list[dict[str, Any]], float]:
    store = await docker_store(3)
    model = OpenAIChatModel(ChatSettings(model="m", base_url=server.url, timeout=1.0,
                                         max_attempts=2, backoff=0.01, max_concurrency=8))
    hb = Harkback(store=store, model=model,
                  pipeline=attrs.evolve(Pipeline(), summarize=LlmSummarize(deadline_s=3.0)))
    started = time.monotonic()
    try:
        responses = await asyncio.gather(*(hb.search(QUERY, limit=3) for _ in range(SEARCHES)))
    finally:
        await hb.aclose()
    return [r.to_payload() for r in responses], time.monotonic() - started


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_every_search_answers_while_the_model_fails(fault: str) -> None:
    """Every other request fails as ``fault``; all eight searches answer within their
    deadline, failed summaries fall back to extractive ones that say why."""
    def script(received: Received) -> Reply:
        return FAULTS[fault] if received.index % 2 == 0 else Reply()
    with ChatServer(script) as server:
        payloads, elapsed = await _load(server)
        calls = len(server.received)
    assert all(p["success"] for p in payloads)
    results = [r for p in payloads for r in p["results"]]
    assert len(results) == SEARCHES * 3
    kinds = {r["summary_kind"] for r in results}
    assert kinds <= {"llm", "extractive"}
    fallbacks = [r for r in results if r["summary_kind"] == "extractive"]
    assert all(r["summary_note"] for r in fallbacks)
    assert all(r["summary"] for r in results)
    assert calls >= SEARCHES * 3
    assert elapsed < 10.0


async def test_a_model_that_only_fails_still_answers_every_search() -> None:
    """Each fault in turn, never a good answer: every search still answers, extractive."""
    cycle = list(FAULTS.values())
    with ChatServer(lambda r: cycle[r.index % len(cycle)]) as server:
        payloads, elapsed = await _load(server)
    assert all(p["success"] for p in payloads)
    assert {r["summary_kind"] for p in payloads for r in p["results"]} == {"extractive"}
    assert elapsed < 10.0
