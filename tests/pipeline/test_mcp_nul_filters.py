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


async def test_a_session_id_holding_a_nul_is_refused_not_its_start_shown(db: Path) -> None:
    """SQLite's JSON lists end a text at a NUL: ``nginx-long\\0x`` showed nginx-long.
    A tool error naming the id, whether asked as the id or as a message to centre on."""
    async with connected(db) as session:
        for arguments in ({"id": "nginx-long\x00x"}, {"id": "cors", "around": "nginx-long\x00x:1"}):
            message = await _error(session, "read_session", arguments)
            assert message == "a session id cannot hold a NUL character, got 'nginx-long\\x00x'"
