"""Times through the real CLI: ingested times at the edges, and the times a question names."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.pipeline.test_cli import run


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def just_before(text: str) -> float:
    """The last moment before ``text`` (UTC): where a window ending at that midnight ends."""
    return math.nextafter(_epoch(text), -math.inf)


def _listed(done_stdout: str) -> list[str]:
    return [r["session_id"] for r in json.loads(done_stdout)["results"]]


def test_iso_time_whose_offset_leaves_the_calendar_is_ignored(tmp_path: Path) -> None:
    """An ISO time whose offset carries it before year 1 or past 9999 is named and ignored;
    its session and the rest of the file are stored, with no internal error."""
    source = tmp_path / "sessions.jsonl"
    lines = [{"id": "early", "started_at": "0001-01-01T00:00:00+01:00",
              "messages": [{"role": "user", "content": "docker bridge"}]},
             {"id": "late", "started_at": "2026-03-03T14:15:00Z",
              "ended_at": "9999-12-31T23:59:59-01:00",
              "messages": [{"role": "user", "content": "nginx upload"}]}]
    source.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    path = tmp_path / "h.db"
    done = run("ingest", str(source), db=path)
    assert done.returncode == 3, done.stderr
    assert ":1: time ignored: started_at" in done.stderr
    assert ":2: time ignored: ended_at" in done.stderr
    listed = run("recent", "--json", db=path)
    rows = {r["session_id"]: r["started_at"] for r in json.loads(listed.stdout)["results"]}
    assert rows == {"early": None, "late": _epoch("2026-03-03T14:15:00")}


def _days_store(folder: Path) -> Path:
    """A store of one session each morning and evening, 3 to 5 March 2026 (UTC)."""
    return sessions_at(folder, ("2026-03-03T08:00:00", "2026-03-03T20:00:00",
                                "2026-03-04T09:00:00", "2026-03-04T21:00:00",
                                "2026-03-05T07:00:00"))


def sessions_at(folder: Path, moments: Sequence[str]) -> Path:
    """A store in ``folder`` of one session started at each of ``moments`` (UTC), named
    ``at-MOMENT``."""
    source = folder / "days.jsonl"
    source.write_text("".join(json.dumps(
        {"id": f"at-{when}", "started_at": _epoch(when),
         "messages": [{"role": "user", "content": f"notes of {when}"}]}) + "\n"
        for when in moments), encoding="utf-8")
    path = folder / "days.db"
    assert run("ingest", str(source), db=path).returncode == 0
    return path


def test_yesterday_lists_the_whole_of_yesterday(tmp_path: Path) -> None:
    """Asked as of midnight, 'yesterday' (and 昨天, 어제) lists that calendar day's sessions,
    the evening included and the day before left out; 'the day before yesterday' (前天,
    一昨日) the day before it."""
    path = _days_store(tmp_path)
    for question in ("what did I do yesterday?", "昨天做了什么", "어제 뭐 했지"):
        done = run("search", question, "--as-of", "2026-03-05", "--json", db=path)
        assert _listed(done.stdout) == ["at-2026-03-04T21:00:00", "at-2026-03-04T09:00:00"]
    for question in ("what did I do the day before yesterday?", "前天做了什么", "一昨日何をした"):
        done = run("search", question, "--as-of", "2026-03-05T10:00", "--json", db=path)
        assert _listed(done.stdout) == ["at-2026-03-03T20:00:00", "at-2026-03-03T08:00:00"]


def test_today_lists_the_day_so_far(tmp_path: Path) -> None:
    """'What did I do today?' (今天, 今日, 오늘) lists today's sessions, as 'yesterday' lists
    yesterday's, instead of searching for the word 'today' and finding nothing."""
    path = _days_store(tmp_path)
    for question in ("what did I do today?", "今天做了什么", "今日は何をした？", "오늘 뭐 했지"):
        done = run("search", question, "--as-of", "2026-03-05T12:00", "--json", db=path)
        assert json.loads(done.stdout)["mode"] == "recent", question
        assert _listed(done.stdout) == ["at-2026-03-05T07:00:00"], question


def test_a_date_written_without_dashes_is_not_read_as_1970(tmp_path: Path) -> None:
    """``--until 20260304`` (a date without its dashes) is a usage error naming the date to
    write, not epoch second 20,260,304 (August 1970), which left out every session."""
    path = _days_store(tmp_path)
    for command in (("recent", "--until", "20260304"), ("search", "notes", "--since", "20260304"),
                    ("search", "notes", "--as-of", "20260304")):
        done = run(*command, db=path)
        assert done.returncode == 2, done.stdout
        assert "reads as a date: write 2026-03-04" in done.stderr


def test_a_since_later_than_the_until_names_both_flags_and_their_moments(
        tmp_path: Path) -> None:
    """``harkback search nginx --since 2026-12-04 --until 2026-12-01`` said "since is later
    than until", naming neither flag nor the moments a relative bound (``7d``) stood for."""
    path = _days_store(tmp_path)
    for command in (("search", "notes"), ("recent",)):
        done = run(*command, "--since", "2026-12-04", "--until", "2026-12-01", db=path,
                   env={"TZ": "UTC"})
        assert done.returncode == 2, done.stdout
        assert done.stderr.strip() == (
            "harkback: --since '2026-12-04' (from 2026-12-04T00:00:00Z) is later than --until"
            " '2026-12-01' (up to 2026-12-02T00:00:00Z): nothing lies between them")


def test_an_iso_bound_outside_the_years_1_to_9999_is_refused_as_a_number_is(
        tmp_path: Path) -> None:
    """An ISO time whose offset carries it before the year 1 or past 9999 (UTC) is refused
    (exit status 2), as a number out of that range is."""
    path = _days_store(tmp_path)
    for command in (("recent", "--since", "0001-01-01T00:00:00+01:00"),
                    ("recent", "--until", "-62135596801"),
                    ("search", "notes", "--until", "9999-12-31T23:59:59-01:00")):
        done = run(*command, db=path)
        assert done.returncode == 2, done.stdout
        assert "is not a moment a session can have (0001-01-01 to 9999-12-31 UTC)" \
            in done.stderr


def test_a_chinese_time_question_with_its_subject_lists_that_time(tmp_path: Path) -> None:
    """'上周我做了什么' (what did I do last week) lists last week's sessions as '上周做了什么'
    does: the bigram 周我 across the time word's edge is not a topic to search for."""
    path = _days_store(tmp_path)
    # Last week is the calendar week before this one: asked on Tuesday 10 March, 2 to 8 March.
    for question, asked in (("上周我做了什么", "2026-03-10T12:00"),
                            ("昨天我做了什么？", "2026-03-05T12:00")):
        done = run("search", question, "--as-of", asked, "--json", db=path)
        assert json.loads(done.stdout)["mode"] == "recent", question
        assert "at-2026-03-04T21:00:00" in _listed(done.stdout), question


def test_asking_what_went_on_at_a_time_lists_that_time(tmp_path: Path) -> None:
    """'What was I working on yesterday?' (어제 무슨 작업했지, 昨日は何の作業をした) lists
    yesterday's sessions, as 'what did I do yesterday?' does, rather than searching for
    the word 'working' and finding nothing."""
    path = _days_store(tmp_path)
    for question in ("what was I working on yesterday?", "what happened yesterday",
                     "어제 무슨 작업했지", "昨日は何の作業をした？"):
        done = run("search", question, "--as-of", "2026-03-05T12:00", "--json", db=path)
        assert _listed(done.stdout) == ["at-2026-03-04T21:00:00", "at-2026-03-04T09:00:00"]


def test_a_listed_time_is_named_with_the_question(tmp_path: Path) -> None:
    """A question that names only a time keeps its words in the payload's ``query`` (not
    ""), with the ``window`` listed; the human output says which time it listed, also when
    nothing was found there."""
    path = _days_store(tmp_path)
    done = run("search", "what did I do yesterday?", "--as-of", "2026-03-05T12:00", "--json",
               db=path)
    payload = json.loads(done.stdout)
    assert payload["query"] == "what did I do yesterday?"
    assert payload["window"] == {"since": _epoch("2026-03-04T00:00:00"),
                                 "until": just_before("2026-03-05T00:00:00")}
    empty = run("search", "what did I do last week?", "--as-of", "2020-03-05", db=path)
    assert empty.stdout.startswith('Sessions of "what did I do last week?": '
                                   "2020-02-24T00:00:00Z to 2020-03-02T00:00:00Z")
    assert "No sessions found." in empty.stdout


def test_a_date_or_month_in_the_question_lists_it(tmp_path: Path) -> None:
    """'What did I do on 2026-03-04?', 'on March 4th' and 本周 (this week) list those times;
    they answered 'No matching sessions found', searching for the words."""
    path = _days_store(tmp_path)
    asked = ("--as-of", "2026-03-05T12:00", "--limit", "10", "--json")
    for question in ("what did I do on 2026-03-04?", "what did I do on March 4th?"):
        done = run("search", question, *asked, db=path)
        assert _listed(done.stdout) == ["at-2026-03-04T21:00:00", "at-2026-03-04T09:00:00"]
    for question in ("what did I do in March?", "本周做了什么"):
        done = run("search", question, *asked, db=path)
        assert len(_listed(done.stdout)) == 5, question


def test_a_capital_m_span_is_not_taken_for_minutes(tmp_path: Path) -> None:
    """``--since 6M`` (six months, to whoever wrote it) is a usage error saying how to write
    either, not six minutes, which left out every session but the last few minutes'."""
    path = _days_store(tmp_path)
    done = run("recent", "--since", "6M", db=path)
    assert done.returncode == 2, done.stdout
    assert "write 6m for minutes or '6 months ago'" in done.stderr
    assert run("recent", "--since", "6m", db=path).returncode == 0


_HOURS = ("2026-03-19T08:40:00", "2026-03-19T09:10:00", "2026-03-19T10:00:00",
          "2026-03-19T11:30:00")


@pytest.mark.parametrize(("flag", "words", "listed"), [
    # Read as the question's "3 hours ago" window, the bound was half an hour off: from
    # 08:30 (the 08:40 session in) and until 09:30 (the 09:10 session in).
    ("--since", "3 hours ago", ["11:30", "10:00", "09:10"]),
    ("--since", "three hours ago", ["11:30", "10:00", "09:10"]),
    ("--until", "3 hours ago", ["08:40"]),
    # Refused as unreadable: minutes, and the hours back from now.
    ("--since", "30 minutes ago", ["11:30"]),
    ("--since", "past 3 hours", ["11:30", "10:00", "09:10"]),
    ("--since", "last 2 hours", ["11:30", "10:00"]),
    # As before: a span, and days counted back.
    ("--since", "3h", ["11:30", "10:00", "09:10"]),
    ("--since", "yesterday", ["11:30", "10:00", "09:10", "08:40"]),
])
def test_hours_and_minutes_ago_bound_a_search_to_the_minute(
        tmp_path: Path, flag: str, words: str, listed: list[str]) -> None:
    """``--since "3 hours ago"`` is the moment three hours before now, as ``--since 3h``
    and ``--since "2 days ago"`` count back exactly."""
    path = sessions_at(tmp_path, _HOURS)
    done = run("search", "notes", flag, words, "--as-of", "2026-03-19T12:00", "--limit", "10",
               "--json", db=path)
    assert done.returncode == 0, done.stderr
    assert [i.removeprefix("at-2026-03-19T")[:5] for i in _listed(done.stdout)] == listed


@pytest.mark.parametrize(("zone", "moment", "shown"), [
    ("Pacific/Kiritimati", "9999-12-31T23:00:00", "December 31, 9999 at 11:00 PM UTC"),
    ("UTC", "0001-01-01T00:00:00", "January 01, 0001 at 12:00 AM UTC"),
    ("UTC+24", "2026-03-03T14:15:00", "March 03, 2026 at 02:15 PM UTC")])
def test_a_time_the_local_zone_cannot_show_is_shown_in_utc(
        tmp_path: Path, zone: str, moment: str, shown: str) -> None:
    """A stored time the local zone cannot show (the year 10000 at UTC+14; the year 1, whose
    local offset Python cannot look up; a POSIX zone a whole day off UTC) read "unknown
    time" in ``recent`` and ``show``, though ``stats`` dated it. It is shown in UTC."""
    path = sessions_at(tmp_path, (moment,))
    listed = run("recent", "--json", db=path, env={"TZ": zone})
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)["results"]
    assert (row["when"], row["started_at"]) == (shown, _epoch(moment))
    paged = run("show", f"at-{moment}", db=path, env={"TZ": zone})
    assert shown in paged.stdout.splitlines()[0], paged.stdout


@pytest.mark.parametrize(("zone", "midnight"), [("UTC", "2026-03-04T00:00:00"),
                                                ("America/New_York", "2026-03-04T05:00:00")])
def test_a_session_that_starts_at_midnight_belongs_to_that_day_only(
        tmp_path: Path, zone: str, midnight: str) -> None:
    """``--until DAY`` took the day in up to the next day's midnight inclusive, so a session
    starting at local midnight of 4 March was listed by ``--until 2026-03-03`` and by
    ``--since 2026-03-04`` alike: in two days. It is listed in the day it starts only."""
    path = sessions_at(tmp_path, ("2026-03-03T12:00:00", midnight))
    env = {"TZ": zone}
    before = run("recent", "--json", "--until", "2026-03-03", db=path, env=env)
    after = run("recent", "--json", "--since", "2026-03-04", db=path, env=env)
    day = run("search", "notes", "--json", "--since", "2026-03-03", "--until", "2026-03-03",
              db=path, env=env)
    assert _listed(before.stdout) == ["at-2026-03-03T12:00:00"], before.stderr
    assert _listed(after.stdout) == [f"at-{midnight}"], after.stderr
    assert _listed(day.stdout) == ["at-2026-03-03T12:00:00"], day.stderr


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles", "Etc/GMT+12"])
def test_until_the_last_day_a_session_can_have_lists_it(tmp_path: Path, zone: str) -> None:
    """``--until 9999-12-31`` ("until forever") in UTC: its last moment, just before the
    year 10000, lies past the last second a session can have, and the request refused it as
    an internal error (exit 70). It lists the sessions up to then; an epoch bound in that
    last second is refused in one line, as any time no session can have is. West of UTC
    the day ends in the year 10000 (UTC), past what Python can show: held there too."""
    path = sessions_at(tmp_path, ("2026-03-03T12:00:00", "9999-12-31T23:59:59"))
    env = {"TZ": zone}
    forever = run("recent", "--json", "--until", "9999-12-31", db=path, env=env)
    assert forever.returncode == 0, forever.stderr
    assert _listed(forever.stdout) == ["at-9999-12-31T23:59:59", "at-2026-03-03T12:00:00"]
    past = run("recent", "--until", "253402300799.5", db=path, env=env)
    assert past.returncode == 2, past.stderr
    assert past.stderr.startswith("harkback: --until '253402300799.5' is not a moment a "
                                  "session can have"), past.stderr


def test_a_day_a_question_names_ends_before_the_next_midnight(tmp_path: Path) -> None:
    """"What did I do yesterday?" (昨天, 어제, 昨日), "on wednesday", "on march 4", "in
    february" and "last week" listed a session that started at the next day's (month's,
    week's) midnight too, as ``--until DAY`` did: it is listed in its own day only."""
    path = sessions_at(tmp_path, ("2026-02-28T12:00:00", "2026-03-01T00:00:00",
                                  "2026-03-02T00:00:00", "2026-03-04T12:00:00",
                                  "2026-03-05T00:00:00"))
    env = {"TZ": "UTC"}
    asked = {"what did I do yesterday?": ["at-2026-03-04T12:00:00"],
             "昨天做了什么": ["at-2026-03-04T12:00:00"],
             "어제 뭐 했지": ["at-2026-03-04T12:00:00"],
             "昨日何をした": ["at-2026-03-04T12:00:00"],
             "what did I do on wednesday?": ["at-2026-03-04T12:00:00"],
             "what did I do on march 4?": ["at-2026-03-04T12:00:00"],
             "what did I do in february?": ["at-2026-02-28T12:00:00"],
             "what did I do last week?": ["at-2026-03-01T00:00:00", "at-2026-02-28T12:00:00"]}
    for question, listed in asked.items():
        done = run("search", question, "--as-of", "2026-03-05T12:00", "--json", db=path, env=env)
        assert json.loads(done.stdout)["mode"] == "recent", question
        assert _listed(done.stdout) == listed, question


def test_a_session_dated_after_now_is_listed_with_a_note(tmp_path: Path) -> None:
    """A session dated in 2099 (a clock set wrong where it was recorded) sat on top of
    every ``recent`` listing with nothing said: it stays there (newest first; the date may
    be right), and the listing says why, in the payload's notes and above the table; an
    hour ahead is no wrong clock, and ``--until today`` leaves the far one out."""
    soon = datetime.fromtimestamp(time.time() + 3600, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    path = sessions_at(tmp_path, ("2026-03-03T12:00:00", "2099-01-01T00:00:00", soon))
    listed = run("recent", "--json", db=path)
    payload = json.loads(listed.stdout)
    assert _listed(listed.stdout) == ["at-2099-01-01T00:00:00", f"at-{soon}",
                                      "at-2026-03-03T12:00:00"]
    (note,) = payload["notes"]
    assert note.startswith("1 session listed is dated more than a day after now")
    human = run("recent", db=path).stdout
    assert human.splitlines()[0] == f"note: {note}"
    today = run("recent", "--json", "--until", "today", db=path)
    assert _listed(today.stdout)[-1] == "at-2026-03-03T12:00:00"  # (soon may be tomorrow)
    assert "at-2099-01-01T00:00:00" not in _listed(today.stdout)
    assert "notes" not in json.loads(today.stdout)


def test_asked_as_of_a_past_moment_only_sessions_after_the_real_now_are_noted(
        tmp_path: Path) -> None:
    """``--as-of`` in the past hides nothing: the sessions recorded since are listed, and
    they are no sign of a clock set wrong (they were called "dated more than a day after
    now" too); a session dated after the real now still is, as of any moment."""
    path = sessions_at(tmp_path, ("2026-02-20T12:00:00", "2026-03-03T12:00:00",
                                  "2099-01-01T00:00:00"))
    for as_of in ("2026-03-01", "2026-02-01"):
        listed = run("search", "", "--json", "--as-of", as_of, db=path)
        assert len(_listed(listed.stdout)) == 3
        (note,) = json.loads(listed.stdout)["notes"]
        assert note.startswith("1 session listed is dated more than a day after now")
    bounded = run("search", "", "--json", "--as-of", "2026-03-01", "--until", "2026-03-01",
                  db=path)
    assert _listed(bounded.stdout) == ["at-2026-02-20T12:00:00"]
    assert "notes" not in json.loads(bounded.stdout)
