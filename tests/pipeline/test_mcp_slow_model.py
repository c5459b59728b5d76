"""``harkback mcp`` with a model that never answers, through the SDK's own client: the
agent gets the words' ranking with a note before its client gives up on the call."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from harkback.adapters.models.chat_settings import ChatSettings
from tests.pipeline.test_mcp_server import _text, connected, db
from tests.support.chat_server import ChatServer, Reply

__all__ = ["db"]  # the store fixture, shared with the server's own tests

MAX_CONCURRENCY = ChatSettings(model="m").max_concurrency
"""Requests the server may have in flight to the model: the default, as it has no flag."""
CLIENT_TIMEOUT_S = 60.0
"""When Codex (``tool_timeout_sec``) and clients on MCP's TypeScript SDK give up a call."""


async def test_a_hung_model_is_answered_before_the_clients_timeout(db: Path) -> None:
    """The recall's deadline was the command line's 60 s: the answer came at ~61 s, after
    a 60 s client had given up, so the agent got a timeout instead of the results."""
    with ChatServer(lambda _request: Reply(hang=True)) as chat:
        env = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": chat.url}
        async with connected(db, env) as session:
            started = time.monotonic()
            result = await session.call_tool("session_search", {"query": "nginx"},
                                             read_timeout_seconds=CLIENT_TIMEOUT_S)
            took = time.monotonic() - started
        asked = len(chat.received)
    assert not result.is_error, _text(result)
    payload = json.loads(_text(result))
    assert asked >= 1 and took < CLIENT_TIMEOUT_S
    assert {r["summary_kind"] for r in payload["results"]} == {"extractive"}
    assert all(r["summary_note"] for r in payload["results"])
    assert "nginx-long" in [r["session_id"] for r in payload["results"]]


async def test_concurrent_searches_share_the_models_limits(db: Path) -> None:
    """Each call made a model client of its own, with its own semaphore and rate limiter:
    four concurrent searches sent up to 5 requests each at once (past max_concurrency and
    the rate of the endpoint the user configured), each over a new connection."""
    queries = ["nginx", "nginx reload", "docker OR nginx", "CORS OR docker OR nginx"]
    with ChatServer(lambda _request: Reply(delay=1.0)) as chat:
        env = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": chat.url}
        async with connected(db, env) as session:
            results = await asyncio.gather(*(
                session.call_tool("session_search", {"query": query, "limit": 3})
                for query in queries))
        asked, peak = len(chat.received), chat.peak_in_flight
    payloads = [json.loads(_text(result)) for result in results]
    kinds = {r["summary_kind"] for payload in payloads for r in payload["results"]}
    assert kinds == {"llm"} and asked > MAX_CONCURRENCY
    assert peak <= MAX_CONCURRENCY


async def test_the_model_limits_are_the_servers_flags(db: Path) -> None:
    """``harkback mcp --max-concurrency 1 --rate 600``: a user with a fast local model sets
    the limits all the server's calls share (there was no flag and no key for them)."""
    queries = ["nginx", "nginx reload", "docker OR nginx"]
    with ChatServer(lambda _request: Reply(delay=0.3)) as chat:
        env = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": chat.url}
        async with connected(db, env, ["--max-concurrency", "1", "--rate", "600"]) as session:
            results = await asyncio.gather(*(
                session.call_tool("session_search", {"query": query, "limit": 3})
                for query in queries))
        asked, peak = len(chat.received), chat.peak_in_flight
    kinds = {r["summary_kind"] for result in results
             for r in json.loads(_text(result))["results"]}
    assert kinds == {"llm"} and asked > 1
    assert peak == 1
