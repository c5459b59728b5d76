"""A search result's first request (``preview``) is the one ``recent`` lists, in every
store: the load stage reads it from the messages it renders, the stores' ``recent`` from
their own query (SQLite's bytes, PostgreSQL's doubled NULs, the memory store's list)."""

from __future__ import annotations

import asyncio

from harkback.pipeline.mcp_tools import call_tool
from tests.adapters.stores.vector_contract import Store
from tests.conftest import conversation
from tests.support.new_stores import new_stores

store = new_stores("memory", "sqlite", "postgres")

FIRST = "部署之后\x00 nginx   缓存了旧的 bundle\n\n  怎么办 " + "长" * 300


def test_search_and_recent_give_one_first_request(store: Store) -> None:
    """A first request holding a NUL, CJK, runs of blanks and more than the 200
    characters kept, asked after a system line and a tool line, and found by a word of
    a continuation far past it: both answers give the same line, in every store."""
    root = conversation("root", ("system", "you are terse"), ("tool", "zebra tool line"),
                        ("user", FIRST), *(("assistant", "filler " * 200),) * 30,
                        ("user", "the quokka at the end"), started_at=1_770_000_000.0)
    more = conversation("more", ("user", "and the quokka again"), parent="root",
                        started_at=1_770_000_100.0)

    async def ask() -> tuple[list[str], list[str]]:
        await store.ingest((root, more)).awaitable()
        found = (await call_tool(store, "session_search",
                                 {"query": "quokka", "summarizer": "none"})).unwrap()
        recent = (await call_tool(store, "recent_sessions", {})).unwrap()
        return ([r["preview"] for r in found["results"]],
                [r["preview"] for r in recent["results"]])

    found, recent = asyncio.run(ask())
    assert found == recent
    assert len(found) == 1 and found[0].startswith("部署之后\x00 nginx 缓存了旧的 bundle 怎么办 长")
