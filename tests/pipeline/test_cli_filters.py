"""The search and recent filters through the command line: --source, --project, NOT, time
words."""

from __future__ import annotations

import json
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run

DAY = 86400.0
NOW = time.time()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """Sessions of three sources, started 0.5, 5 and 20 days ago."""
    sessions = [
        conversation("codex-new", ("user", "kernel panic after the upgrade"),
                     ("assistant", "boot the previous kernel"), source="codex",
                     started_at=NOW - 0.5 * DAY, project="/home/me/src/infra"),
        conversation("hermes-mid", ("user", "kernel panic on the nas"),
                     ("assistant", "the zfs module was missing; rebuild with dkms"),
                     source="hermes", started_at=NOW - 5 * DAY, project="/srv/nas"),
        conversation("claude-old", ("user", "kernel panic in the vm"),
                     ("assistant", "raise the vm memory"), source="claude-code",
                     started_at=NOW - 20 * DAY, project="/home/me/src/infra"),
    ]
    return ingested(tmp_path, sessions)


def _ids(*args: str, db: Path) -> list[str]:
    done = run(*args, "--json", db=db)
    assert done.returncode == 0, done.stderr
    return [r["session_id"] for r in json.loads(done.stdout)["results"]]


def test_search_source_keeps_only_those_sources(db: Path) -> None:
    """``--source`` repeated or as a comma list keeps the sessions of those sources."""
    assert _ids("search", "kernel panic", "--limit", "5", "--source", "hermes",
                db=db) == ["hermes-mid"]
    both = _ids("search", "kernel panic", "--limit", "5", "--source", "codex,claude-code",
                db=db)
    assert sorted(both) == ["claude-old", "codex-new"]
    again = _ids("search", "kernel panic", "--limit", "5", "--source", "codex",
                 "--source", "claude-code", db=db)
    assert sorted(again) == sorted(both)


def test_recent_source_keeps_only_those_sources(db: Path) -> None:
    """``recent --source`` lists the sessions of that source only."""
    assert _ids("recent", "--source", "codex,hermes", db=db) == ["codex-new", "hermes-mid"]


def test_project_keeps_only_sessions_of_that_folder(db: Path) -> None:
    """``--project`` takes a folder's name or path, with ``--source`` or alone."""
    assert sorted(_ids("search", "kernel panic", "--limit", "5", "--project", "infra",
                       db=db)) == ["claude-old", "codex-new"]
    assert _ids("search", "kernel panic", "--project", "infra", "--source", "claude-code",
                db=db) == ["claude-old"]
    assert _ids("recent", "--project", "/srv/nas,elsewhere", db=db) == ["hermes-mid"]
    assert _ids("recent", "--project", "src", db=db) == []


def test_not_drops_the_whole_session(db: Path) -> None:
    """``NOT zfs`` drops the session whose answer says zfs, though its question matches."""
    found = _ids("search", "kernel NOT zfs", "--limit", "5", db=db)
    assert "hermes-mid" not in found
    assert sorted(found) == ["claude-old", "codex-new"]


@pytest.mark.parametrize(("when", "expected"), [
    ("yesterday", ["codex-new"]),
    ("last week", ["codex-new", "hermes-mid"]),
    ("10 days ago", ["codex-new", "hermes-mid"]),
    ("last month", ["codex-new", "hermes-mid", "claude-old"]),
])
def test_since_reads_words(db: Path, when: str, expected: list[str]) -> None:
    """``--since`` takes the words people use for a time."""
    assert _ids("recent", "--since", when, db=db) == expected


def test_until_reads_words_and_dates(db: Path) -> None:
    """``--until`` takes words and dates too."""
    assert _ids("search", "kernel panic", "--limit", "5", "--until", "2 weeks ago",
                db=db) == ["claude-old"]
    assert _ids("recent", "--until", "2000-01-01", db=db) == []


@pytest.mark.parametrize("command", ["search", "recent"])
def test_unreadable_since_is_a_usage_error(db: Path, command: str) -> None:
    """A time no form reads: one line listing the forms, exit 2."""
    args = (command, "kernel") if command == "search" else (command,)
    done = run(*args, "--since", "the other day", db=db)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "cannot read --since 'the other day'" in done.stderr
    assert "yesterday" in done.stderr and "2026-11-01" in done.stderr


@pytest.mark.parametrize("flags", [
    *[(*command, *flag) for command in (("search", "kernel"), ("recent",))
      for flag in (("--source", ""), ("--source", ","), ("--project", ""), ("--project", "/"))],
    ("search", "kernel", "--role", ""),
])
def test_a_filter_naming_nothing_is_a_usage_error(db: Path, flags: tuple[str, ...]) -> None:
    """An empty --source or --project (an unset shell variable), or --project / (no folder
    but the root, which no project is), is refused as an empty --role is, rather than
    quietly becoming no filter: exit 2, one line."""
    done = run(*flags, "--json", db=db)
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stdout)["usage"] is True
    assert done.stderr.count("\n") == 1
    assert "no " in done.stderr or "unknown role" in done.stderr


def test_a_trailing_comma_still_names_the_rest(db: Path) -> None:
    """A comma list's empty pieces are left out; the names in it still filter."""
    assert _ids("recent", "--source", "codex,", db=db) == ["codex-new"]


@pytest.mark.parametrize(("command", "flags"), [
    ("search", ("--since", "-62135596801")),
    ("search", ("--since", "999999999999999999999d")), ("recent", ("--since", "200000w")),
    ("search", ("--until", "800000d")), ("recent", ("--until", "9" * 400 + "h")),
    ("search", ("--as-of", "1970-01-05", "--since", "730000d"))])  # in range from now
def test_a_moment_out_of_range_names_the_years_allowed(db: Path, command: str,
                                                        flags: tuple[str, ...]) -> None:
    """A bound out of range is refused saying which moments a session can have. A span
    reaching back before the year 1 (from now, or from ``--as-of``) was taken as no bound
    at all: refused the same."""
    done = run(command, "docker" if command == "search" else "--json", *flags, db=db)
    assert done.returncode == 2
    given = flags[-1] if len(flags[-1]) <= 60 else flags[-1][:60] + "…"  # 401 characters: cut
    assert f"{flags[-2]} {given!r} is not a moment a session can have (0001-01-01 to " \
           "9999-12-31 UTC): use " in done.stderr, done.stderr


def test_a_question_asked_before_1970_says_to_bound_instead(db: Path) -> None:
    """``--as-of 1969-12-31`` is an ISO date, yet it was refused with "use an ISO date":
    the refusal says the years a question is asked as of, and how to reach older sessions."""
    done = run("search", "docker", "--as-of", "1969-12-31", db=db)
    assert done.returncode == 2
    assert "--as-of '1969-12-31' is before 1970: a question is asked as of 1970 to 9999 " \
           "(to find older sessions, bound them with since/until instead)" in done.stderr


@pytest.mark.parametrize("zone", ["Asia/Tokyo", "America/Los_Angeles"])
def test_a_question_asked_as_of_new_years_day_1970_is_answered_in_any_zone(
        db: Path, zone: str) -> None:
    """``--as-of 1970-01-01`` is its local midnight: east of UTC that comes before epoch
    second 0, and it was refused as "before 1970", the very year it names."""
    done = run("search", "docker", "--json", "--as-of", "1970-01-01", db=db, env={"TZ": zone})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["as_of"] == datetime(1970, 1, 1,
                                                        tzinfo=ZoneInfo(zone)).timestamp()


def test_a_hidden_source_is_left_out_unless_named(tmp_path: Path) -> None:
    """Sessions of the sources Hermes keeps out of its own history (``tool`` integrations,
    ``kanban`` workers) are left out of search and recent, but ``--source tool`` names
    them: it answered with nothing, and not a word why, though ``stats`` counted them."""
    db = ingested(tmp_path, [
        conversation("by-tool", ("user", "narwhal migration plan"), source="tool"),
        conversation("by-kanban", ("user", "narwhal board card"), source="kanban"),
        conversation("by-cli", ("user", "narwhal in the terminal"), source="cli")])
    assert _ids("search", "narwhal", db=db) == ["by-cli"]
    assert _ids("recent", db=db) == ["by-cli"]
    assert _ids("search", "narwhal", "--source", "tool", db=db) == ["by-tool"]
    assert sorted(_ids("recent", "--source", "kanban,cli", db=db)) == ["by-cli", "by-kanban"]


def test_a_source_the_store_does_not_hold_is_named_in_a_note(db: Path) -> None:
    """``--source Codex`` (for codex) or ``--source claude`` (for claude-code) found nothing
    without a word, and an agent concluded nothing had happened: the answer, still empty
    (names match exactly), says the store holds no such source, the one meant, and those
    it holds; a source it holds that found nothing says nothing of sources."""
    done = run("search", "kernel panic", "--source", "Codex", "--json", db=db)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["results"] == []
    assert payload["notes"] == [
        "this store holds no session from source 'Codex' (did you mean 'codex'?); the "
        "sources it holds: 'claude-code', 'codex', 'hermes'"]
    listed = run("recent", "--source", "claude", db=db)
    assert listed.returncode == 0, listed.stderr
    assert "note: this store holds no session from source 'claude' (did you mean " \
           "'claude-code'?)" in listed.stdout
    held = run("search", "zebra crossing", "--source", "codex", "--json", db=db)
    assert "notes" not in json.loads(held.stdout)
