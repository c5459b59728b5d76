"""Time bounds reach as far back as ingest keeps sessions (the year 1), on a file and on
PostgreSQL alike: bounds stopped at 1970, so a session stored from 1969 or the year 1 could
not be listed by its time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.pipeline.test_cli import run
from tests.support.new_stores import store_locations

db = store_locations("sqlite", "postgres")

_SESSIONS = (("year-one", "0001-01-01T12:00:00Z"), ("moon", "1969-07-20T20:17:00Z"),
             ("late-1969", "1969-12-31T23:00:00Z"), ("now", "2026-03-01T12:00:00Z"))


def _listed(db: str, zone: str, *bounds: str) -> list[str]:
    done = run("recent", "--json", *bounds, "--db", db, env={"TZ": zone})
    assert done.returncode == 0, done.stderr
    return [r["session_id"] for r in json.loads(done.stdout)["results"]]


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo"])
def test_sessions_before_1970_are_listed_by_their_time(db: str, zone: str,
                                                       tmp_path: Path) -> None:
    """``--until 1969-12-31``, a year of the 1960s, the year 1's first day and negative
    epoch seconds each list the sessions they name; east of UTC (Tokyo) the year 1's first
    day starts before the first moment a session can have, and still lists it."""
    source = tmp_path / "early.jsonl"
    source.write_text("".join(json.dumps(
        {"id": name, "started_at": when, "messages": [{"role": "user", "content": name}]})
        + "\n" for name, when in _SESSIONS), encoding="utf-8")
    assert run("ingest", str(source), "--db", db).returncode == 0
    until_1970 = ["late-1969", "moon", "year-one"] if zone == "UTC" else ["moon", "year-one"]
    assert _listed(db, zone, "--until", "1969-12-31") == until_1970
    assert _listed(db, zone, "--since", "1969-01-01", "--until", "1969-07-31") == ["moon"]
    assert _listed(db, zone, "--since", "0001-01-01", "--until", "0001-01-01") == ["year-one"]
    assert _listed(db, zone, "--until", "-7200") == ["moon", "year-one"]
