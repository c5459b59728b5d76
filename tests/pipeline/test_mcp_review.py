"""``read_session`` takes the message ids ``session_search`` gives: an agent opens the page
around a match with what the search cited (``SESSION_ID:POSITION``), as ``harkback show
--around`` does; through the SDK's own client and a real SQLite store."""

from __future__ import annotations

from pathlib import Path

from tests.pipeline.test_mcp_server import _error, _ok, connected, db

__all__ = ["db"]  # the store fixture, shared with the server's own tests


async def test_read_session_opens_around_a_cited_message_id(db: Path) -> None:
    async with connected(db) as session:
        found = await _ok(session, "session_search",
                          {"query": "nginx reload step 5", "summarizer": "none", "limit": 1})
        (result,) = found["results"]
        cited = result["matched_message_ids"][0]
        page = await _ok(session, "read_session",
                         {"id": result["session_id"], "around": cited, "limit": 3})
        wrong = await _error(session, "read_session", {"id": "cors", "around": cited})
    assert result["session_id"] == "nginx-long"
    position = int(cited.rpartition(":")[2])
    assert [m["position"] for m in page["messages"]] == [position - 1, position, position + 1]
    assert wrong.endswith(f"message id {cited!r} is of session 'nginx-long', not 'cors' "
                          "(show that session)")
