"""An MCP tool call that meets a stored row reading as none (a message or a session title
stored as bytes) gets a tool error in one line naming it, and the server lives on."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.pipeline.test_mcp_server import _error, _ok, connected, db

__all__ = ["db"]  # the store fixture, shared with the server's own tests


async def test_a_damaged_row_is_a_one_line_tool_error(db: Path) -> None:
    with sqlite3.connect(db) as raw:  # "cors": a title, and its second message's text
        raw.execute("UPDATE sessions SET title = CAST(title AS BLOB) WHERE id = 'cors'")
        raw.execute("UPDATE messages SET content = CAST(content AS BLOB) "
                    "WHERE session_id = 'cors' AND position = 1")
    raw.close()
    async with connected(db) as session:
        said = [await _error(session, "session_search", {"query": "CORS add_header",
                                                         "summarizer": "none"}),
                await _error(session, "recent_sessions", {}),
                await _error(session, "read_session", {"id": "cors"})]
        with sqlite3.connect(db) as raw:  # mended by hand: the same server answers again
            raw.execute("UPDATE sessions SET title = CAST(title AS TEXT) WHERE id = 'cors'")
            raw.execute("UPDATE messages SET content = CAST(content AS TEXT)")
        raw.close()
        later = await _ok(session, "recent_sessions", {})
    for line in said:
        assert "\n" not in line and "a stored session is damaged (session 'cors': its title " \
            "is stored as bytes, not as text)" in line, line
    assert later["count"] == 3
