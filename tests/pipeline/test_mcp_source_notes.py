"""A source filter naming a source the store holds none of, sent to ``harkback mcp``
through the SDK's own client on a real SQLite store: the empty answer says so."""

from __future__ import annotations

from pathlib import Path

from tests.pipeline.test_mcp_server import _ok, connected, db

__all__ = ["db"]  # the store fixture: docker-fix and nginx-long (cli), cors (codex)


async def test_an_unheld_source_is_named_in_the_notes(db: Path) -> None:
    """``source: "Codex"`` found nothing and said nothing, so an agent concluded nothing
    had happened: session_search and recent_sessions now name the source the store does
    not hold, the one meant and the sources it holds; the results stay empty (names match
    exactly), and a held source that found nothing adds no such note."""
    async with connected(db) as session:
        searched = await _ok(session, "session_search",
                             {"query": "nginx", "source": "Codex", "summarizer": "none"})
        listed = await _ok(session, "recent_sessions", {"source": "clii,codex"})
        held = await _ok(session, "session_search",
                         {"query": "zebra", "source": "codex", "summarizer": "none"})
    assert searched["results"] == []
    assert searched["notes"] == [
        "this store holds no session from source 'Codex' (did you mean 'codex'?); the "
        "sources it holds: 'cli', 'codex'"]
    # Another source of the filter found a session: the answer is not empty, no note.
    assert [r["session_id"] for r in listed["results"]] == ["cors"]
    assert "notes" not in listed
    assert held["results"] == [] and "notes" not in held
