"""Filters holding a NUL character, sent to ``harkback mcp`` through the SDK's own client
on a real SQLite store: refused in one line, never widened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.test_mcp_server import _error, _ok, connected, db

__all__ = ["db"]  # the store fixture: docker-fix and nginx-long (cli), cors (codex)


@pytest.mark.parametrize(("tool", "arguments", "what"), [
    ("recent_sessions", {"project": "\x00/nowhere"}, "project"),
    ("session_search", {"query": "nginx", "project": "\x00", "summarizer": "none"}, "project"),
    ("session_search", {"query": "nginx", "source": "codex\x00", "summarizer": "none"},
     "source"),
])
async def test_a_filter_holding_a_nul_is_refused(db: Path, tool: str,
                                                 arguments: dict[str, Any], what: str) -> None:
    """SQLite's text functions end a text at a NUL: a project "\\0/nowhere" listed every
    session (as no filter would), a source "codex\\0" found the codex sessions. Each is a
    tool error naming the filter, and the server answers the next call."""
    async with connected(db) as session:
        message = await _error(session, tool, arguments)
        still = await _ok(session, "recent_sessions", {"source": "codex"})
    assert message.startswith(f"{what} names cannot hold a NUL character, got ")
    assert "\n" not in message
    assert [r["session_id"] for r in still["results"]] == ["cors"]
