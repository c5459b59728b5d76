"""The parts a library user hands the facade, its wiring and its tool handler: each slip
is a TypeError where it is made, naming what to write; the facade is an ``async with``
block that releases its model's client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline import (
    RANKERS,
    ChatSettings,
    Harkback,
    RecallSettings,
    handle_session_search,
    handle_session_search_sync,
    open_store,
    recall,
    store_kind,
    with_model,
)
from tests.conftest import conversation
from tests.support.chat_server import ChatServer
from tests.support.corpus import QUERY, docker_store

TALK = conversation("deploy", ("user", "the deploy of api failed"), started_at=1_700_000_000.0)


@pytest.mark.parametrize(("field", "given", "named"), [
    ("store", object(), r"store must be an open store, got object \(no search\)"),
    ("store", {}, r"store must be an open store, got dict"),
    ("store", MemoryStore, r"store must be an open store, got the class MemoryStore"),
    ("model", "gpt-4.1", r"model must be a chat model or None, got the str 'gpt-4.1': "
                         r"with_model\(hb, ChatSettings\(model='gpt-4.1'\)\)"),
    ("embedder", "minilm", r"embedder must be an embedder or None, got the str 'minilm'"),
    # a long name is cut as every echo is (60 characters and "…"; was cut with no mark)
    ("embedder", "m" * 5000, "embedder must be an embedder or None, got the str 'm{60}…'"),
    ("vectors", "h.db", r"vectors must be a vector store or None, .*store\.vector_store\(\)"),
    ("cache", {}, r"cache must be a summary cache or None, got dict: store\.summary_cache\(\)"),
])
async def test_a_part_that_is_not_one_is_refused_where_it_is_given(
        field: str, given: object, named: str) -> None:
    """No store, a model or embedder by name, a dict for the cache: each was taken, then
    raised AttributeError at the first search ('object' has no attribute 'term_stats',
    'str' object has no attribute 'aclose'), or (vectors, cache) was quietly unused."""
    store = MemoryStore()
    await store.ingest([TALK])
    parts: dict[str, Any] = {"store": store, field: given}
    with pytest.raises(TypeError, match=named):
        Harkback(**parts)
    found = (await Harkback(store=store).search("deploy")).to_payload()
    assert [r["session_id"] for r in found["results"]] == ["deploy"]


def test_with_model_given_a_model_s_name_says_to_give_settings() -> None:
    """``with_model(hb, "qwen")`` raised AttributeError inside the OpenAI adapter
    ('str' object has no attribute 'model'); the form it names works."""
    hb = Harkback(store=MemoryStore())
    with pytest.raises(TypeError, match=r"got Harkback and str: with_model\(Harkback\(store"):
        with_model(hb, "qwen2.5")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"got MemoryStore and ChatSettings"):
        with_model(hb.store, ChatSettings(model="qwen2.5"))  # type: ignore[arg-type]
    assert isinstance(with_model(hb, ChatSettings(model="qwen2.5")).model, OpenAIChatModel)


async def test_the_tool_handlers_given_a_store_say_they_take_the_facade() -> None:
    """The store where the facade goes failed as "'MemoryStore' object has no attribute
    'call_sync'" (or 'search'); now each handler names the facade, and that form works."""
    store = MemoryStore()
    await store.ingest([TALK])
    arguments = '{"query": "deploy"}'
    with pytest.raises(TypeError, match=r"handle_session_search takes a Harkback facade, "
                                        r"got MemoryStore"):
        await handle_session_search(store, arguments)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"handle_session_search_sync takes a Harkback"):
        handle_session_search_sync(store, arguments)  # type: ignore[arg-type]
    found = json.loads(await handle_session_search(Harkback(store=store), arguments))
    assert [r["session_id"] for r in found["results"]] == ["deploy"]


async def test_open_store_takes_a_path_given_as_bytes(tmp_path: Path) -> None:
    """A bytes path (as os.listdir(b".") gives) is a SQLite file to store_kind and opens the
    same file as its text ("a bytes-like object is required, not 'str'" before)."""
    path = tmp_path / "history.db"
    assert [store_kind(bytes(path)), store_kind(b":memory:")] == ["sqlite", "memory"]
    with open_store(bytes(path)).unwrap() as store:
        await store.ingest([TALK])
    with open_store(str(path), readonly=True).unwrap() as again:
        found = (await Harkback(store=again).search("deploy")).to_payload()
    assert [r["session_id"] for r in found["results"]] == ["deploy"]


async def test_an_async_with_block_releases_the_model_s_client() -> None:
    """``async with`` gives the facade and, on leaving, closes the HTTP client its model
    made in this loop; the store stays open for the next facade; leaving twice is harmless."""
    store = await docker_store(2)
    with ChatServer() as server:
        hb = with_model(Harkback(store=store),
                        ChatSettings(model="test-model", base_url=server.url, backoff=0.05))
        model = hb.model
        assert isinstance(model, OpenAIChatModel)
        async with hb as inside:
            payload = (await inside.search(QUERY, limit=2)).to_payload()
            assert model.bound_loops == 1
        assert model.bound_loops == 0
        await hb.aclose()
    assert [r["summary_kind"] for r in payload["results"]] == ["llm", "llm"]
    assert (await Harkback(store=store).search(QUERY)).to_payload()["count"] == 2


@pytest.mark.parametrize(("fields", "error", "named"), [
    ({"chat": "qwen2.5"}, TypeError, r"chat must be ChatSettings or None, got str: "
                                     r"RecallSettings\(chat=ChatSettings\(model='qwen2.5'\)\)"),
    ({"deadline_s": "30"}, TypeError, r"deadline_s must be a number of seconds, got '30' "
                                      r"\(write it as deadline_s=60.0\)"),
    ({"deadline_s": 0}, ValueError, r"deadline_s must be positive, got 0 \(write it as "
                                    r"deadline_s=60.0\)"),
    ({"ranker": RANKERS["bm25"]}, TypeError, r"ranker must be text or None, got Bm25Match "
                                             r"\(write it as ranker='bm25'\)"),
    ({"rerank": "yes"}, TypeError, r"rerank must be True or False, got 'yes' \(write it as "
                                   r"rerank=True\)"),
    ({"environ": ["OPENAI_BASE_URL=x"]}, TypeError, r"environ must be a mapping or None, got "
                                                    r"list \(write it as environ=os.environ\)"),
    ({"db": 7}, TypeError, r"db must be text or None, got int \(write it as db='harkback.db'\)"),
])
async def test_recall_settings_of_the_wrong_type_are_refused_naming_the_field(
        fields: dict[str, Any], error: type[Exception], named: str, tmp_path: Path) -> None:
    """Each was taken and failed later: inside the wiring ("'>' not supported between
    instances of 'str' and 'int'"), in with_model, as an unknown ranker printed as an
    object, or (``rerank="yes"``) as a rerank never asked for; each error shows the form
    to write. Settings of the right types recall as before."""
    with pytest.raises(error, match=named):
        RecallSettings(**fields)
    store = MemoryStore()
    await store.ingest([TALK])
    hb = recall(RecallSettings(ranker="bm25", deadline_s=30, db=tmp_path / "h.db",
                               environ={}), store).unwrap()
    found = (await hb.search("deploy")).to_payload()
    assert [r["session_id"] for r in found["results"]] == ["deploy"]
