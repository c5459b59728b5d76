"""``harkback mcp`` over PostgreSQL when the server goes away between two calls (the SDK's
own client, the server a subprocess): stopped, the next call's error comes at once;
frozen, within a bound. The server is continued whatever the test's outcome."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Iterator

import psycopg
import pytest

from harkback.adapters.stores.postgres import PostgresStore
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation
from tests.pipeline.test_mcp_server import _text, connected
from tests.support.postgres_server import PostgresServer, start_server

SEARCH = {"query": "docker", "summarizer": "none"}
BOUND_S = 20.0
"""A generous bound on an error due after ~4 s when frozen (connect_timeout=2)."""


@pytest.fixture
def server() -> Iterator[PostgresServer]:
    """A server of the test's own, which it stops or freezes."""
    started = start_server()
    yield started
    started.stop()
    shutil.rmtree(started.folder, ignore_errors=True)


async def _stored(server: PostgresServer) -> str:
    url = server.create_database("mcp") + "&connect_timeout=2"
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([conversation("s1", ("user", "docker bridge network"))]))
    return url


async def test_a_stopped_server_is_the_next_calls_error_at_once(server: PostgresServer) -> None:
    """The pool waited out its 10 s timeout before the error; the refusal is immediate."""
    async with connected(await _stored(server)) as session:
        first = await session.call_tool("session_search", SEARCH)
        assert not first.is_error, _text(first)
        server.stop()
        started = time.monotonic()
        second = await asyncio.wait_for(session.call_tool("session_search", SEARCH), BOUND_S)
        took = time.monotonic() - started
    assert second.is_error and "cannot reach the PostgreSQL server" in _text(second)
    assert took < 3.0


async def test_a_frozen_server_is_the_next_calls_error_within_its_bound(
        server: PostgresServer) -> None:
    """The call waited for good on a frozen server; now one error within the bound, and
    once the server goes on, calls work again."""
    async with connected(await _stored(server)) as session:
        first = await session.call_tool("session_search", SEARCH)
        assert not first.is_error, _text(first)
        with server.frozen():
            started = time.monotonic()
            second = await asyncio.wait_for(session.call_tool("session_search", SEARCH),
                                            BOUND_S)
            took = time.monotonic() - started
        third = await session.call_tool("session_search", SEARCH)
    # A statement's wait or a new connection's (another store thread) may see it first.
    assert second.is_error and "cannot reach the PostgreSQL" in _text(second), _text(second)
    assert took < BOUND_S
    assert not third.is_error, _text(third)


async def test_connections_the_server_ended_meanwhile_are_replaced_before_the_next_call(
        server: PostgresServer) -> None:
    """The server ended every connection of the store between two calls (an administrator's
    ``pg_terminate_backend``, a restart): the next calls, moments later, failed with "server
    closed the connection" on a server that answers, one per connection the store held."""
    url = await _stored(server)
    async with connected(url) as session:
        first = await session.call_tool("session_search", SEARCH)
        assert not first.is_error, _text(first)
        others = ("FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
                  "pg_backend_pid()")
        with psycopg.connect(url, autocommit=True) as admin:
            ended = admin.execute(f"SELECT count(pg_terminate_backend(pid)) {others}").fetchone()
            assert ended is not None and ended[0] > 0
            # Gone, not only told to go: as after a restart, the next call finds them ended.
            deadline = time.monotonic() + BOUND_S
            while admin.execute(f"SELECT count(*) {others}").fetchone() != (0,):
                assert time.monotonic() < deadline, "the backends did not end"
                time.sleep(0.05)
        after = [await session.call_tool(tool, arguments) for tool, arguments in (
            ("session_search", SEARCH), ("recent_sessions", {}), ("session_search", SEARCH))]
    assert [_text(r) for r in after if r.is_error] == []


async def test_opening_the_store_on_a_frozen_server_holds_up_no_other_request(
        server: PostgresServer) -> None:
    """The store was opened on the server's event loop: while a call waited out
    ``connect_timeout`` on a frozen server, nothing else was answered (a ``tools/list``, a
    cancellation); each call while the server stays frozen waits that long again."""
    url = await _stored(server)
    async with connected(url) as session:
        with server.frozen():
            search = asyncio.ensure_future(session.call_tool("session_search", SEARCH))
            await asyncio.sleep(0.3)  # the search's open has begun
            started = time.monotonic()
            listed = await asyncio.wait_for(session.list_tools(), BOUND_S)
            listing = time.monotonic() - started
            searched = await asyncio.wait_for(search, BOUND_S)
            waiting = time.monotonic() - started
    assert [tool.name for tool in listed.tools][:1] == ["session_search"]
    assert searched.is_error and "cannot reach the PostgreSQL" in _text(searched)
    assert listing < waiting / 2
