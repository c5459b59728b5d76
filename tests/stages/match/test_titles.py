"""Titles and sources as evidence in the lexical ranker, against the in-memory store."""

from __future__ import annotations

from typing import Any

from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline.compose import Pipeline
from harkback.stages.flow import Matched
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.ports import Deps
from harkback.stages.records import Conversation, Role
from harkback.stages.request import SearchRequest
from harkback.stages.result import RecallResult
from tests.conftest import conversation

DAY = 86_400.0
NOW = 1_780_000_000.0

QUIET: tuple[tuple[Role, str], ...] = (("user", "the browser blocks the upload from the frontend"),
         ("assistant", "nginx needs add_header with always in that location"))
"""A session's messages that name neither CORS nor the API."""

DECOYS = (
    conversation("gateway", ("user", "the api gateway rejects the api key"),
                 ("assistant", "rotate the api key in the gateway console"),
                 started_at=NOW - DAY),
    conversation("preflight", ("assistant", "a cors preflight is an OPTIONS request"),
                 started_at=NOW - 2 * DAY),
    conversation("lunch", ("user", "where should we go for lunch"), started_at=NOW - DAY),
)


async def _store(*chats: Conversation) -> MemoryStore:
    store = MemoryStore()
    unsafe_perform_io((await store.ingest(chats).awaitable()).unwrap())
    return store


async def _matched(store: MemoryStore, query: str, **fields: Any) -> Matched:
    outcome = await LexicalMatch()(SearchRequest(query=query, limit=10, **fields))(
        Deps(store=store, clock=lambda: NOW)).awaitable()
    return unsafe_perform_io(outcome.unwrap())


def _order(matched: Matched) -> list[str]:
    return list(dict.fromkeys(h.session_id for h in matched.hits))


async def test_a_session_found_only_by_its_title_comes_back_first() -> None:
    """"CORS API" finds the session titled "CORS fix for the API" although none of its
    messages says either word, above newer sessions whose messages say one; its hit points
    at the session's first message."""
    store = await _store(conversation("titled", *QUIET, title="CORS fix for the API",
                                      started_at=NOW - 40 * DAY), *DECOYS)
    matched = await _matched(store, "CORS API")
    assert _order(matched)[0] == "titled"
    hit = matched.hits[0]
    assert (hit.session_id, hit.position, hit.role, hit.content) == (
        "titled", 0, "user", "CORS fix for the API")
    assert "lunch" not in _order(matched)


async def test_a_title_ranks_the_session_as_the_same_user_message_would() -> None:
    """A session with a title ranks where the same session would with its title said in a
    user message instead."""
    titled = conversation("titled", *QUIET, title="CORS fix for the API",
                          started_at=NOW - 40 * DAY)
    said = conversation("titled", ("user", "CORS fix for the API"), *QUIET,
                        started_at=NOW - 40 * DAY)
    for query in ("CORS API", "api gateway cors", "cors preflight", "api key"):
        with_title = _order(await _matched(await _store(titled, *DECOYS), query))
        with_message = _order(await _matched(await _store(said, *DECOYS), query))
        assert with_title == with_message, query


async def test_a_source_covers_the_words_it_names_but_scores_nothing() -> None:
    """A question naming a source lifts that source's sessions among equal ones; a session
    matching by its source alone comes back, after every session that matches the topic."""
    store = await _store(
        conversation("codex-topic", ("user", "cors header fixed"), source="codex",
                     started_at=NOW - 10 * DAY),
        conversation("cli-topic", ("user", "cors header fixed"), source="cli",
                     started_at=NOW - 10 * DAY),
        conversation("codex-only", ("user", "lunch plans"), source="codex",
                     started_at=NOW - 10 * DAY))
    assert _order(await _matched(store, "codex cors header")) == [
        "codex-topic", "cli-topic", "codex-only"]


async def test_a_cjk_title_is_evidence() -> None:
    """A Chinese question finds the session whose Chinese title holds its words."""
    store = await _store(
        conversation("zh", ("user", "看一下日志"), title="修复端口冲突", started_at=NOW - 30 * DAY),
        conversation("other", ("user", "端口已经打开了"), started_at=NOW - DAY))
    assert _order(await _matched(store, "端口冲突怎么解决"))[0] == "zh"


async def test_title_matches_honour_hidden_sources_and_time() -> None:
    """A session hidden by its source, or outside the asked time, is not found by its title."""
    store = await _store(
        conversation("hidden", *QUIET, title="CORS fix", source="kanban", started_at=NOW),
        conversation("old", *QUIET, title="CORS fix", started_at=NOW - 90 * DAY),
        conversation("new", *QUIET, title="CORS fix", started_at=NOW - DAY))
    assert _order(await _matched(store, "cors", since=NOW - 30 * DAY)) == ["new"]


async def test_a_title_only_session_is_loaded_and_summarized() -> None:
    """The whole pipeline recalls a session found only by its title: its transcript opens
    with the title, so its summary addresses the question instead of disowning it."""
    store = await _store(conversation("titled", *QUIET, title="CORS fix for the API",
                                      started_at=NOW - 40 * DAY),
                         conversation("lunch", ("user", "lunch"), started_at=NOW))
    outcome = await Pipeline().search(SearchRequest(query="CORS API", limit=3))(
        Deps(store=store, clock=lambda: NOW)).awaitable()
    result = unsafe_perform_io(outcome.unwrap())
    assert isinstance(result, RecallResult)
    assert [r.session_id for r in result.results] == ["titled"]
    recall = result.results[0]
    assert recall.title == "CORS fix for the API"
    assert "CORS fix for the API" in recall.summary
    assert recall.summary_note == ""
    assert "does not appear to address" not in recall.summary


async def test_a_title_is_no_evidence_for_a_query_holding_a_not() -> None:
    """``docker NOT network`` means messages without "network": a title saying "Docker"
    does not bring back a session whose messages say "docker network"."""
    store = await _store(conversation("titled", ("user", "the docker network is down"),
                                      title="Docker fix", started_at=NOW - DAY))
    assert _order(await _matched(store, "docker NOT network")) == []


async def test_a_title_counts_only_where_user_messages_are_searched() -> None:
    """A title stands for a user message: a search of tool output alone ignores it."""
    store = await _store(conversation("titled", *QUIET, title="CORS fix", started_at=NOW))
    assert _order(await _matched(store, "cors", roles=("tool",))) == []
    assert _order(await _matched(store, "cors")) == ["titled"]
