"""Answers an agent gets about sessions with hundreds of sub-agents, or titles and folders
of any length: through the SDK's own client against ``harkback mcp`` and through the agent
tool, on a real SQLite store."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.tool import handle_session_search
from harkback.stages.records import Conversation
from tests.conftest import conversation
from tests.pipeline.test_mcp_server import connected

ROOT = "7f3c2a10-5b1e-4c0a-9d8e-1a2b3c4d5e6f"
SUB_AGENTS = 500


@pytest.fixture
def delegated(tmp_path: Path) -> Path:
    """A store whose one root session started SUB_AGENTS sub-agents, each of which
    talked about the invoice rounding (Claude Code names them ROOT/agent-ID)."""
    path = tmp_path / "h.db"
    sessions = [conversation(ROOT, ("user", "refactor billing, split it among agents"),
                             started_at=1_770_000_000.0, source="claude-code")]
    sessions += [conversation(f"{ROOT}/agent-{i:08x}",
                              ("user", f"investigate invoice rounding, part {i}"),
                              ("assistant", "the rounding happens in invoice.py"),
                              started_at=1_770_000_001.0 + i, source="claude-code",
                              parent=ROOT, title=f"sub-agent {i}: invoice rounding")
                 for i in range(SUB_AGENTS)]
    with SqliteStore.open(path).unwrap() as store:
        asyncio.run(_ingest(store, sessions))
    return path


async def _ingest(store: SqliteStore, sessions: list[Conversation]) -> None:
    await store.ingest(sessions).awaitable()


async def test_a_pages_children_are_bounded_and_counted(delegated: Path) -> None:
    """The page of a session with 500 sub-agents listed all of them (96,000 characters,
    sent twice) whatever its page of messages held; it lists the first 20 and counts the
    rest, and the whole answer stays small."""
    async with connected(delegated) as session:
        answer = await session.call_tool("read_session", {"id": ROOT})
    (block,) = answer.content
    assert not answer.is_error and block.type == "text"
    page = json.loads(block.text)
    children = page["lineage"]["children"]
    assert [c["session_id"] for c in children] == [f"{ROOT}/agent-{i:08x}" for i in range(20)]
    assert page["lineage"]["children_left_out"] == SUB_AGENTS - 20
    assert len(block.text) < 10_000


async def test_a_search_results_lineage_is_bounded_and_counted(delegated: Path) -> None:
    """A search result named every session of its lineage (501 ids, 30,000 characters,
    sent twice); it names the root and the first sub-agents and counts the rest, while
    the sessions it matched are still listed."""
    async with connected(delegated) as session:
        answer = await session.call_tool("session_search", {"query": "invoice rounding",
                                                            "summarizer": "none"})
    (block,) = answer.content
    assert not answer.is_error and block.type == "text"
    (result,) = json.loads(block.text)["results"]
    assert result["lineage"][0] == ROOT and len(result["lineage"]) == 20
    assert result["lineage_left_out"] == SUB_AGENTS + 1 - 20
    assert result["matched_sessions"] and all(
        s.startswith(f"{ROOT}/agent-") for s in result["matched_sessions"])
    assert len(block.text) < 10_000


async def test_the_agent_tools_lineage_is_bounded_too(delegated: Path) -> None:
    """The agent tool's payload is what goes into the model's context: the same bound."""
    with SqliteStore.open(delegated, readonly=True).unwrap() as store:
        text = await handle_session_search(Harkback(store=store),
                                           '{"query": "invoice rounding"}')
    (result,) = json.loads(text)["results"]
    assert len(result["lineage"]) == 20
    assert result["lineage_left_out"] == SUB_AGENTS + 1 - 20


@pytest.fixture
def titled_by_logs(tmp_path: Path) -> Path:
    """A store whose sessions a converter titled by their first message, a pasted log of
    50,000 characters, in a folder of as long a path."""
    path = tmp_path / "h.db"
    log = "ERROR worker pool exhausted at frame 0x7f3c " * 1_100
    sessions = [conversation(f"pasted-{i}", ("user", log), ("assistant", "raise pool_size"),
                             started_at=1_770_000_000.0 + i, title=log,
                             project="/srv/" + "deep/" * 10_000 + f"app{i}")
                for i in range(10)]
    with SqliteStore.open(path).unwrap() as store:
        asyncio.run(_ingest(store, sessions))
    return path


async def test_titles_and_folders_of_any_length_are_cut_in_answers(titled_by_logs: Path
                                                                   ) -> None:
    """A listing of ten such sessions was a megabyte (each title and project whole), a
    search result or a page as long; each title and project keeps 500 characters, ids are
    whole, and every answer stays small."""
    calls = [("recent_sessions", {}),
             ("session_search", {"query": "worker pool exhausted", "limit": 10,
                                 "summarizer": "none"}),
             ("read_session", {"id": "pasted-3", "limit": 1})]
    async with connected(titled_by_logs) as session:
        answers = [await session.call_tool(tool, arguments) for tool, arguments in calls]
    texts = []
    for answer in answers:
        (block,) = answer.content
        assert not answer.is_error and block.type == "text"
        texts.append(block.text)
    listed, found, page = (json.loads(text) for text in texts)
    for entry in [*listed["results"], *found["results"], page["session"]]:
        assert len(entry["title"]) < 550 and "characters left out]" in entry["title"]
        assert len(entry["project"]) < 550 and entry["project"].endswith("/app" + entry[
            "session_id"].removeprefix("pasted-"))
    assert {r["session_id"] for r in listed["results"]} == {f"pasted-{i}" for i in range(10)}
    assert max(len(texts[0]), len(texts[1])) < 30_000


async def test_the_agent_tools_titles_are_cut_too(titled_by_logs: Path) -> None:
    """The agent tool's payload goes into the model's context: the same bound."""
    with SqliteStore.open(titled_by_logs, readonly=True).unwrap() as store:
        text = await handle_session_search(Harkback(store=store),
                                           '{"query": "worker pool exhausted", "limit": 10}')
    results = json.loads(text)["results"]
    assert len(results) == 10 and all(len(r["title"]) < 550 for r in results)
