"""Untitled sessions in search results, told apart as ``recent`` tells them: by their
first request (the CLI's table and JSON, and the MCP tool's answer), on a real SQLite file."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.mcp_tools import call_tool
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run

SESSIONS = (
    conversation("0b6f", ("user", "the nginx upload fails with a CORS error"),
                 ("assistant", "add_header needs always; nginx drops it on errors"),
                 started_at=1_770_000_000.0),
    conversation("7c21", ("user", "nginx serves a stale bundle after the deploy"),
                 ("assistant", "nginx caches index.html: set no-cache on it"),
                 started_at=1_771_000_000.0),
    # A continuation's own first request is not its lineage's: the root's is shown.
    conversation("7c21-more", ("user", "and nginx still caches the old bundle"),
                 started_at=1_771_000_100.0, parent="7c21"),
)


def test_a_search_shows_an_untitled_sessions_first_request_as_recent_does(
        tmp_path: Path) -> None:
    """Both results were listed by their ids alone (empty title column, ``[1] 7c21``);
    each now shows the first request ``recent`` lists under it, and the JSON result
    carries it as ``preview``, as ``recent --json`` does."""
    db = ingested(tmp_path, SESSIONS)
    recent = json.loads(run("recent", "--json", db=db).stdout)["results"]
    listed = {r["session_id"]: r["preview"] for r in recent}
    assert set(listed) == {"0b6f", "7c21"}
    done = run("search", "nginx", "--json", "--summarizer", "none", db=db)
    assert done.returncode == 0, done.stderr
    found = {r["session_id"]: r["preview"] for r in json.loads(done.stdout)["results"]}
    assert found == listed
    text = run("search", "nginx", "--summarizer", "none", db=db)
    assert text.returncode == 0, text.stderr
    rows = [line for line in text.stdout.splitlines() if line.startswith((" 1 ", " 2 "))]
    headings = [line for line in text.stdout.splitlines() if line.startswith("[")]
    for session_id, request in listed.items():
        assert any(session_id in row and row.endswith(request) for row in rows), text.stdout
        assert any(line.startswith("[") and request in line for line in headings), text.stdout


def test_the_mcp_tools_results_carry_the_first_request(tmp_path: Path) -> None:
    """``session_search`` answers with the search payload: each result's first request
    is in it, as in ``recent_sessions``'s."""
    db = ingested(tmp_path, SESSIONS)

    async def ask() -> tuple[dict[str, str], dict[str, str]]:
        with SqliteStore.open(db, readonly=True).unwrap() as store:
            found = (await call_tool(store, "session_search",
                                     {"query": "nginx", "summarizer": "none"})).unwrap()
            recent = (await call_tool(store, "recent_sessions", {})).unwrap()
        return ({r["session_id"]: r["preview"] for r in found["results"]},
                {r["session_id"]: r["preview"] for r in recent["results"]})

    found, recent = asyncio.run(ask())
    assert found == recent
    assert found["7c21"] == "nginx serves a stale bundle after the deploy"
