"""A bounded listing (``recent --since/--until``, or a question naming a time) cannot
place a session with no time at all: it says how many it left out rather than dropping
them unsaid."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.test_cli import run


def _store(folder: Path) -> Path:
    source = folder / "sessions.jsonl"
    lines = [{"id": "dated", "started_at": "2026-03-03T14:15:00Z",
              "messages": [{"role": "user", "content": "nginx upload"}]},
             {"id": "timeless-1", "messages": [{"role": "user", "content": "docker bridge"}]},
             {"id": "timeless-2", "messages": [{"role": "user", "content": "redis eviction"}]}]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    path = folder / "h.db"
    assert run("ingest", str(source), db=path).returncode == 0
    return path


def test_a_bounded_listing_notes_the_sessions_it_cannot_place(tmp_path: Path) -> None:
    """--since lists the dated session and notes the two with no time, in JSON and text;
    an unbounded listing lists all three and notes nothing."""
    path = _store(tmp_path)
    listed = run("recent", "--since", "2026-01-01", "--json", db=path)
    assert listed.returncode == 0, listed.stderr
    payload = json.loads(listed.stdout)
    assert [r["session_id"] for r in payload["results"]] == ["dated"]
    (note,) = payload["notes"]
    assert note.startswith("2 sessions with no time")
    human = run("recent", "--until", "2026-12-01", db=path)
    assert human.returncode == 0, human.stderr
    assert "note: 2 sessions with no time" in human.stdout
    # Said too when no dated session falls within the bounds.
    none_dated = run("recent", "--since", "2026-06-01", db=path)
    assert "No sessions found." in none_dated.stdout
    assert "note: 2 sessions with no time" in none_dated.stdout

    # Without bounds every session is listed (the undated ones last): nothing to note.
    unbounded = json.loads(run("recent", "--json", db=path).stdout)
    assert len(unbounded["results"]) == 3 and "notes" not in unbounded


def test_a_bounded_search_notes_the_sessions_it_could_not_search(tmp_path: Path) -> None:
    """A search with --since left out "timeless-1", which holds the very words asked for,
    without a word: "No matching sessions found." It now says how many sessions with no
    time its bound kept out; a search without a bound searches them and notes nothing."""
    path = _store(tmp_path)
    bounded = run("search", "docker bridge", "--since", "2026-01-01", "--json", db=path)
    assert bounded.returncode == 0, bounded.stderr
    payload = json.loads(bounded.stdout)
    assert payload["results"] == []
    (note,) = payload["notes"]
    assert note.startswith("2 sessions with no time are not searched"), note
    human = run("search", "nginx upload", "--until", "2026-12-01", db=path)
    assert human.returncode == 0, human.stderr
    assert "dated" in human.stdout and "note: 2 sessions with no time are not searched" \
        in human.stdout, human.stdout
    unbounded = json.loads(run("search", "docker bridge", "--json", db=path).stdout)
    assert [r["session_id"] for r in unbounded["results"]] == ["timeless-1"]
    assert "notes" not in unbounded


def test_a_bounded_search_notes_an_undated_sub_agent_of_a_session_in_range(
        tmp_path: Path) -> None:
    """A sub-agent with no time under a session of the range holds the words asked for:
    the bound cannot place it, so the search found nothing, and its note counted
    undated top-level sessions only (none), so nothing said why. It now notes the
    session whose sub-agent it could not search; a listing, which lists that session,
    notes nothing."""
    source = tmp_path / "sessions.jsonl"
    lines = [{"id": "dated", "started_at": "2026-03-03T14:15:00Z",
              "messages": [{"role": "user", "content": "plan the release"}]},
             {"id": "helper", "parent_session_id": "dated",
              "messages": [{"role": "user", "content": "the docker bridge drops packets"}]}]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    path = tmp_path / "h.db"
    assert run("ingest", str(source), db=path).returncode == 0
    bounded = run("search", "docker bridge", "--since", "2026-01-01", "--json", db=path)
    assert bounded.returncode == 0, bounded.stderr
    payload = json.loads(bounded.stdout)
    assert payload["results"] == []
    (note,) = payload["notes"]
    assert note.startswith("in 1 session of the time range, a sub-agent or continuation "
                           "with no time is not searched"), note
    listed = json.loads(run("recent", "--since", "2026-01-01", "--json", db=path).stdout)
    assert [r["session_id"] for r in listed["results"]] == ["dated"]
    assert "notes" not in listed
    unbounded = json.loads(run("search", "docker bridge", "--json", db=path).stdout)
    assert [r["session_id"] for r in unbounded["results"]] == ["dated"]
