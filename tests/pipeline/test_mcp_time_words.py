"""``since``/``until`` of ``last week`` sent to ``harkback mcp`` through the SDK's own
client, on a real SQLite store: the calendar week before this one, as the question
"what did I do last week?" reads it."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harkback.adapters.stores.sqlite import SqliteStore
from tests.conftest import conversation
from tests.pipeline.test_mcp_server import _ok, connected


def _monday(weeks_back: int) -> float:
    """Midnight UTC of the Monday that starts the week ``weeks_back`` weeks before this."""
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return (today - timedelta(days=today.weekday(), weeks=weeks_back)).timestamp()


def _times() -> dict[str, float]:
    # Last week's Monday is more than seven days back (every day but at this Monday's
    # midnight itself), its Sunday night less on Mondays only.
    return {"monday": _monday(1), "sunday": _monday(0) - 1.0, "before": _monday(1) - 1.0,
            "this-week": min(_monday(0) + 1.0, time.time())}


async def _store(path: Path) -> Path:
    sessions = _times()
    with SqliteStore.open(path).unwrap() as store:
        await store.ingest([
            conversation(name, ("user", f"the docker network bug, {name}"),
                         ("assistant", "docker network create shared-net fixed it"),
                         started_at=at, timestamps=(at, at))
            for name, at in sessions.items()]).awaitable()
    return path


async def test_last_week_is_the_calendar_week_before_this_one(tmp_path: Path) -> None:
    """An agent asked "how did we fix the docker network bug last week?" passed ``since:
    "last week"``, read as seven days back: a fix from last week's Monday was not found
    ("No matching sessions found."). Now ``last week`` is that calendar week, from its
    Monday, as the question's own words list it; ``until`` takes in its Sunday."""
    db = await _store(tmp_path / "h.db")
    async with connected(db, env={"TZ": "UTC"}) as session:
        searched = await _ok(session, "session_search", {
            "query": "how did we fix the docker network bug", "since": "last week",
            "summarizer": "none", "limit": 10})
        week = await _ok(session, "recent_sessions", {"since": "last week",
                                                      "until": "last week"})
    assert sorted(r["session_id"] for r in searched["results"]) == [
        "monday", "sunday", "this-week"]
    assert [r["session_id"] for r in week["results"]] == ["sunday", "monday"]


async def test_this_week_is_read_as_a_bound(tmp_path: Path) -> None:
    """``since: "this week"``, as an agent passes on "what did we do this week?", was a
    tool error ("cannot read since 'this week'") though the question reads it: now it is
    this calendar week from its Monday, as ``this month`` and ``this year`` are theirs."""
    db = await _store(tmp_path / "h.db")
    async with connected(db, env={"TZ": "UTC"}) as session:
        week = await _ok(session, "recent_sessions", {"since": "this week"})
        year = await _ok(session, "recent_sessions", {"since": "this year",
                                                      "until": "this week"})
    assert [r["session_id"] for r in week["results"]] == ["this-week"]
    new_year = datetime.now(UTC).replace(month=1, day=1, hour=0, minute=0, second=0,
                                         microsecond=0).timestamp()
    assert {r["session_id"] for r in year["results"]} == {
        name for name, at in _times().items() if at >= new_year}
