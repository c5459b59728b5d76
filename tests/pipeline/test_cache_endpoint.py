"""The summary cache (summaries and rerank choices) is kept per model endpoint: two
endpoints serving a model of the same name never answer from each other's entries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.summary_cache import SqliteSummaryCache
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback
from harkback.stages.rerank.model import ModelRerank
from harkback.stages.summarize.model import LlmSummarize
from tests.support.chat_server import ChatServer, Reply
from tests.support.corpus import QUERY, docker_session

SUMMARIZE = attrs.evolve(Pipeline(), summarize=LlmSummarize())
RERANK = attrs.evolve(Pipeline(), rerank=ModelRerank())


async def _search(store: SqliteStore, pipeline: Pipeline, base_url: str,
                  api_key: str = "k") -> dict[str, Any]:
    model = OpenAIChatModel(ChatSettings(model="same-name", base_url=base_url, api_key=api_key,
                                         backoff=0.05, max_attempts=1))
    hb = Harkback(store=store, pipeline=pipeline, model=model, cache=SqliteSummaryCache(store))
    try:
        payload: dict[str, Any] = (await hb.search(QUERY, limit=2)).to_payload()
    finally:
        await hb.aclose()
    assert payload["success"], payload
    return payload


async def test_a_summary_cached_from_one_endpoint_is_not_served_for_another(
        tmp_path: Path) -> None:
    """Endpoint B summarises for itself although A already did under the same model name;
    A written another way (upper-case scheme, trailing slash) with another API key is
    still A, and answers from its cache."""
    with SqliteStore.open(tmp_path / "harkback.db").unwrap() as store:
        await store.ingest([docker_session(i) for i in range(2)])
        with (ChatServer(lambda _r: Reply(content="A fixed it.\nSOURCES: 1")) as a,
              ChatServer(lambda _r: Reply(content="B fixed it.\nSOURCES: 1")) as b):
            first = await _search(store, SUMMARIZE, a.url)
            second = await _search(store, SUMMARIZE, b.url)
            assert len(a.received) == 2 and len(b.received) == 2
            shouted = a.url.replace("http://", "HTTP://") + "/"
            again = await _search(store, SUMMARIZE, shouted, api_key="another")
            assert len(a.received) == 2
    assert {r["summary"] for r in first["results"]} == {"A fixed it."}
    assert {r["summary"] for r in second["results"]} == {"B fixed it."}
    assert {r["summary"] for r in again["results"]} == {"A fixed it."}
    assert all(r["summary_note"].startswith("from the summary cache") for r in again["results"])


async def test_a_rerank_choice_cached_from_one_endpoint_is_not_served_for_another(
        tmp_path: Path) -> None:
    """The rerank choice is kept in the same cache: B is asked although A answered."""
    with SqliteStore.open(tmp_path / "harkback.db").unwrap() as store:
        await store.ingest([docker_session(i) for i in range(3)])
        with (ChatServer(lambda _r: Reply(content="RELEVANT: S1")) as a,
              ChatServer(lambda _r: Reply(content="RELEVANT: S2")) as b):
            await _search(store, RERANK, a.url)
            second = await _search(store, RERANK, b.url)
            assert len(a.received) == 1 and len(b.received) == 1
    assert second["rerank"]["calls"] == 1 and second["rerank"]["cached_calls"] == 0


async def test_the_key_names_no_api_key(tmp_path: Path) -> None:
    """No cache row holds the API key (nor a password of the base URL)."""
    path = tmp_path / "harkback.db"
    with SqliteStore.open(path).unwrap() as store:
        await store.ingest([docker_session(0)])
        with ChatServer() as server:
            secret_url = server.url.replace("http://", "http://me:pw-secret@")
            await _search(store, SUMMARIZE, secret_url, api_key="sk-secret-key")
            assert len(server.received) == 1
    raw = path.read_bytes()
    assert b"sk-secret-key" not in raw and b"pw-secret" not in raw
    assert b"127.0.0.1" in raw
