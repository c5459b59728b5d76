"""Times a library caller gives as Python objects: a ``datetime`` (aware or naive) or a
``date`` bounds a search as the same time written in ISO form does."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from harkback.pipeline import Harkback, open_store
from harkback.stages.records import Conversation
from tests.conftest import conversation

HOUR = 3600.0
MARCH_1 = 1772323200.0
"""2026-03-01T00:00:00Z."""


def _talk(session_id: str, at: float) -> Conversation:
    return conversation(session_id, ("user", f"docker bridge {session_id}"), started_at=at)


# In the zone below (UTC-5): a is 28 February, b and c the 1st and 2nd of March, d the 3rd.
SESSIONS = (_talk("a", MARCH_1 + 3 * HOUR), _talk("b", MARCH_1 + 12 * HOUR),
            _talk("c", MARCH_1 + 36 * HOUR), _talk("d", MARCH_1 + 54 * HOUR))


@pytest.fixture
def five_hours_west() -> Iterator[None]:
    """The local zone is UTC-5 (no daylight saving), so local and UTC days differ."""
    os.environ["TZ"] = "EST+05"
    time.tzset()
    yield
    os.environ["TZ"] = "UTC"
    time.tzset()


@pytest.fixture
async def harkback(tmp_path: Path, five_hours_west: None) -> Harkback:
    """A facade over a real SQLite store holding the four sessions."""
    store = open_store(tmp_path / "history.db").unwrap()
    await store.ingest(SESSIONS)
    return Harkback(store=store)


def _found(payload: dict[str, Any]) -> list[str]:
    assert payload["success"] is True, payload
    return sorted(r["session_id"] for r in payload["results"])


@pytest.mark.parametrize(("given", "written", "found"), [
    ({"since": date(2026, 3, 1), "until": date(2026, 3, 2)},
     {"since": "2026-03-01", "until": "2026-03-02"}, ["b", "c"]),
    ({"since": datetime(2026, 3, 1)}, {"since": "2026-03-01T00:00:00"}, ["b", "c", "d"]),
    ({"since": datetime(2026, 3, 1, tzinfo=UTC), "until": datetime(2026, 3, 2, tzinfo=UTC)},
     {"since": "2026-03-01T00:00:00+00:00", "until": "2026-03-02T00:00:00+00:00"},
     ["a", "b"]),
])
async def test_a_datetime_or_a_date_bounds_as_its_iso_text_does(
        harkback: Harkback, given: dict[str, Any], written: dict[str, Any],
        found: list[str]) -> None:
    """A date is a local day (``until`` takes all of it), a naive datetime local time, an
    aware one its own moment: search and recent find what the ISO text finds."""
    for bounds in (given, written):
        searched = await harkback.search("docker bridge", limit=10, **bounds)
        listed = await harkback.recent(**bounds)
        assert _found(searched.to_payload()) == _found(listed.to_payload()) == found
    harkback.store.close()


async def test_a_since_after_the_until_names_both_and_what_they_stand_for(
        harkback: Harkback) -> None:
    """It said "since is later than until", nothing of a date given as a ``date``, nor of
    the local moments (UTC-5 here) that the bounds were read as."""
    payload = (await harkback.search("docker", since=date(2026, 3, 4),
                                     until="2026-03-01")).to_payload()
    harkback.store.close()
    assert payload == {"success": False, "error": (
        "query rejected: since '2026-03-04' (from 2026-03-04T00:00:00-05:00) is later than"
        " until '2026-03-01' (up to 2026-03-02T00:00:00-05:00): nothing lies between them")}


async def test_as_of_takes_a_datetime(harkback: Harkback) -> None:
    """``as_of`` a datetime moves "now": ``since="1d"`` counts back from it."""
    asked = datetime(2026, 3, 2, 12, tzinfo=UTC)
    payload = (await harkback.recent(as_of=asked, since="1d", until=asked)).to_payload()
    harkback.store.close()
    assert _found(payload) == ["b", "c"]
    assert payload["as_of"] == asked.timestamp()


async def test_a_test_clock_in_time_time_is_the_now_a_listing_checks_dates_against(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test clock put in ``time.time`` (as monkeypatch or freezegun do) is "now" for the
    future-date note as for the rest of the listing: a session recorded an hour before that
    clock's now was noted as "dated more than a day after now", checked against the real
    clock the note's default had kept from import."""
    later = 4102444800.0  # 2100-01-01T00:00:00Z: after the real clock of any run
    store = open_store(tmp_path / "history.db").unwrap()
    await store.ingest([_talk("x", later - HOUR)])
    monkeypatch.setattr(time, "time", lambda: later)
    payload = (await Harkback(store=store).recent()).to_payload()
    store.close()
    assert _found(payload) == ["x"]
    assert "notes" not in payload, payload["notes"]
