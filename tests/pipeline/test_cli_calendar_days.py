"""Days as the person asking lives them, through the real CLI: the local day of "today",
the calendar week of "last week", and an upper bound that takes in the day it names."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.pipeline.test_cli import run
from tests.pipeline.test_cli_times import just_before, sessions_at

# Eight hours behind UTC all year: a POSIX zone rule, read without the tz database.
PACIFIC = {"TZ": "PST8"}


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _listed(stdout: str) -> list[str]:
    return [r["session_id"] for r in json.loads(stdout)["results"]]


# Around Thursday 2026-03-05: the weeks of 23 February and 2 March, February, and 2025.
_MOMENTS = ["2025-12-31T12:00:00", "2026-01-31T12:00:00", "2026-02-01T12:00:00",
            "2026-02-22T12:00:00", "2026-02-23T09:00:00", "2026-03-01T20:00:00",
            "2026-03-02T08:00:00", "2026-03-04T21:00:00"]


def test_last_week_month_and_year_list_the_calendar_period_before_this_one(
        tmp_path: Path) -> None:
    """Asked on Thursday 5 March, "last week" (上周, 先週, 지난주) lists Monday 23 February
    to Sunday 1 March, not the seven days back (which took in this week's Monday and
    Wednesday and left out 23 February), as "this week" lists from this Monday; "last
    month" (先月) is February and "last year" (去年) 2025. The payload's window says so."""
    path = sessions_at(tmp_path, _MOMENTS)
    asked = ("--as-of", "2026-03-05T12:00", "--limit", "10", "--json")
    for question in ("what did I do last week?", "上周做了什么", "先週何をした？",
                     "지난주에 뭐 했지"):
        done = run("search", question, *asked, db=path)
        assert _listed(done.stdout) == ["at-2026-03-01T20:00:00", "at-2026-02-23T09:00:00"], \
            question
        assert json.loads(done.stdout)["window"] == {"since": _epoch("2026-02-23T00:00:00"),
                                                     "until": just_before("2026-03-02T00:00:00")}
    for question in ("what did I do last month?", "先月何をした？"):
        done = run("search", question, *asked, db=path)
        assert _listed(done.stdout) == ["at-2026-02-23T09:00:00", "at-2026-02-22T12:00:00",
                                        "at-2026-02-01T12:00:00"], question
    for question in ("what did I do last year?", "去年做了什么"):
        done = run("search", question, *asked, db=path)
        assert _listed(done.stdout) == ["at-2025-12-31T12:00:00"], question
    # "The past week" says the seven days back, and is listed so.
    done = run("search", "what did I do in the past week?", *asked, db=path)
    assert _listed(done.stdout) == ["at-2026-03-04T21:00:00", "at-2026-03-02T08:00:00",
                                    "at-2026-03-01T20:00:00"]


def test_today_is_the_local_day_and_times_say_their_zone(tmp_path: Path) -> None:
    """At 22:00 on 4 March in UTC-8 (06:00 UTC on the 5th), "what did I do today?" lists
    4 March local time, not the UTC day just begun; each ``when`` and the listed window
    name the offset they are shown in."""
    path = sessions_at(tmp_path, ["2026-03-04T07:00:00", "2026-03-04T09:00:00",
                             "2026-03-04T21:00:00"])
    asked = ("--as-of", "2026-03-05T06:00:00Z")
    done = run("search", "what did I do today?", *asked, "--json", db=path, env=PACIFIC)
    payload = json.loads(done.stdout)
    assert _listed(done.stdout) == ["at-2026-03-04T21:00:00", "at-2026-03-04T09:00:00"]
    assert payload["window"]["since"] == _epoch("2026-03-04T08:00:00")
    assert payload["results"][0]["when"] == "March 04, 2026 at 01:00 PM UTC-08:00"
    shown = run("search", "what did I do yesterday?", *asked, db=path, env=PACIFIC)
    assert shown.stdout.startswith('Sessions of "what did I do yesterday?": '
                                   "2026-03-03T00:00:00-08:00 to 2026-03-04T00:00:00-08:00")
    assert "March 03, 2026 at 11:00 PM UTC-08:00" in shown.stdout
    # A date typed as a bound is a local day too.
    bounded = run("search", "notes", "--since", "2026-03-04", *asked, "--json", db=path,
                  env=PACIFIC)
    assert sorted(_listed(bounded.stdout)) == ["at-2026-03-04T09:00:00",
                                               "at-2026-03-04T21:00:00"]


def test_until_a_day_takes_in_that_day(tmp_path: Path) -> None:
    """``--until 2026-03-04`` and ``--until yesterday`` end with the day they name, in
    ``recent`` and ``search`` alike: ``--since D --until D`` lists day D, where it listed
    nothing (the bound was D's first moment)."""
    path = sessions_at(tmp_path, _MOMENTS)
    done = run("recent", "--since", "2026-03-01", "--until", "2026-03-01", "--json", db=path)
    assert _listed(done.stdout) == ["at-2026-03-01T20:00:00"]
    done = run("search", "notes", "--until", "2026-03-01", "--as-of", "2026-03-05T12:00",
               "--limit", "10", "--json", db=path)
    assert "at-2026-03-01T20:00:00" in _listed(done.stdout)
    assert "at-2026-03-02T08:00:00" not in _listed(done.stdout)
    done = run("search", "notes", "--since", "yesterday", "--until", "yesterday", "--as-of",
               "2026-03-05T12:00", "--json", db=path)
    assert _listed(done.stdout) == ["at-2026-03-04T21:00:00"]
    # recent counts from the clock: a session at yesterday's noon (UTC) and today's.
    today = datetime.fromtimestamp(time.time(), UTC).date()
    noons = [f"{today - timedelta(days=back)}T12:00:00" for back in (0, 1)]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    path = sessions_at(fresh, noons)
    done = run("recent", "--until", "yesterday", "--json", db=path)
    assert _listed(done.stdout) == [f"at-{noons[1]}"]


def test_a_session_without_a_start_is_placed_by_its_first_message(tmp_path: Path) -> None:
    """A session ingested without ``started_at`` starts at its first message's time: it
    is listed by ``recent --since`` (it was left out unseen) and shown with that time."""
    source = tmp_path / "undated.jsonl"
    source.write_text(json.dumps(
        {"id": "undated", "messages": [
            {"role": "user", "content": "rotate the keys", "timestamp": "2026-03-04T10:00:00Z"},
            {"role": "assistant", "content": "done", "timestamp": "2026-03-04T10:05:00Z"}]})
        + "\n", encoding="utf-8")
    path = tmp_path / "h.db"
    assert run("ingest", str(source), db=path).returncode == 0
    done = run("recent", "--since", "2026-03-04", "--json", db=path)
    rows = json.loads(done.stdout)["results"]
    assert [(r["session_id"], r["started_at"]) for r in rows] == [
        ("undated", _epoch("2026-03-04T10:00:00"))]


def test_a_session_without_a_start_read_again_is_unchanged(tmp_path: Path) -> None:
    """The store dates an undated session; the import compared the file's undated copy
    with it, so every read of the same file counted the session updated and wrote it
    again (each ``sync --watch`` wake printed '1 updated')."""
    source = tmp_path / "undated.jsonl"
    source.write_text(json.dumps(
        {"id": "undated", "messages": [
            {"role": "user", "content": "rotate the keys", "timestamp": "2026-03-04T10:00:00Z"}]})
        + "\n", encoding="utf-8")
    path = tmp_path / "h.db"
    first = run("import", "jsonl", str(source), "--json", db=path)
    assert json.loads(first.stdout)["sources"][0]["sessions"]["added"] == 1
    with source.open("a", encoding="utf-8") as handle:  # the file changed: it is read again
        handle.write(json.dumps({"id": "other", "started_at": "2026-03-05T10:00:00Z",
                                 "messages": [{"role": "user", "content": "hi"}]}) + "\n")
    again = json.loads(run("import", "jsonl", str(source), "--json", db=path).stdout)
    # "unchanged" (and its old name "skipped"): read and found unchanged
    assert again["sources"][0]["sessions"] == {"added": 1, "updated": 0, "unchanged": 1,
                                               "skipped": 1}


def test_last_weekend_is_last_weeks_saturday_and_sunday(tmp_path: Path) -> None:
    """Asked on Thursday 5 March, "last weekend" (上周末, 先週末, 지난 주말) was no time:
    a question of it alone was searched for the word "weekend" (and 上周末 listed the
    whole of last week), and ``--since "last weekend"`` could not be read. It is Saturday
    28 February to Sunday 1 March: listed alone, a bound, and a soft hint beside a topic."""
    path = sessions_at(tmp_path, [*_MOMENTS, "2026-02-28T10:00:00"])
    asked = ("--as-of", "2026-03-05T12:00", "--limit", "10", "--json")
    weekend = ["at-2026-03-01T20:00:00", "at-2026-02-28T10:00:00"]
    for question in ("what did I do last weekend?", "上周末做了什么", "先週末何をした？",
                     "지난 주말에 뭐 했지"):
        done = run("search", question, *asked, db=path)
        assert _listed(done.stdout) == weekend, question
        assert json.loads(done.stdout)["window"] == {"since": _epoch("2026-02-28T00:00:00"),
                                                     "until": just_before("2026-03-02T00:00:00")}
    done = run("search", "notes", "--since", "last weekend", "--until", "last weekend",
               *asked, db=path)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout) == weekend
    # Beside a topic every session holds, the weekend's lead, newest first.
    done = run("search", "my notes of last weekend", *asked, db=path)
    assert _listed(done.stdout)[:2] == weekend


def test_this_weekend_at_the_calendars_end_is_read_without_error(tmp_path: Path) -> None:
    """Asked in the calendar's last week (as of Friday 31 December 9999), "this weekend"
    (今週末) fell on a Saturday of the year 10000: the question and ``--since "this
    weekend"`` ended in "internal error: OverflowError". On a weekday it is now the
    weekend just past, as "last weekend" is: listed, and a bound."""
    path = sessions_at(tmp_path, ["9999-12-18T10:00:00", "9999-12-25T10:00:00",
                                  "9999-12-30T10:00:00"])
    asked = ("--as-of", "9999-12-31T12:00", "--json", *("--db", str(path)))
    utc = {"TZ": "UTC"}
    for question in ("what did I do this weekend", "今週末何をした", "what did I do last weekend",
                     "what did I do over the weekend"):
        done = run("search", question, *asked, env=utc)
        assert _listed(done.stdout) == ["at-9999-12-25T10:00:00"], question
    done = run("search", "notes", "--since", "this weekend", "--until", "this weekend",
               *asked, env=utc)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout) == ["at-9999-12-25T10:00:00"]


def test_this_weekend_and_over_the_weekend_are_the_latest_begun(tmp_path: Path) -> None:
    """Asked on Thursday 5 March, "what did I do this weekend?" (今週末, 이번 주말) named no
    time (searched for "weekend", it found nothing) and "over the weekend" was searched as
    words: both list Saturday 28 February and Sunday 1 March, the weekend just past;
    beside a topic "over the weekend" lifts them. Asked on Sunday 8 March they are that
    weekend up to now."""
    path = sessions_at(tmp_path, [*_MOMENTS, "2026-02-28T10:00:00", "2026-03-07T10:00:00"])
    thursday = ("--as-of", "2026-03-05T12:00", "--limit", "10", "--json")
    weekend = ["at-2026-03-01T20:00:00", "at-2026-02-28T10:00:00"]
    for question in ("what did I do this weekend?", "今週末何をした？", "이번 주말에 뭐 했지",
                     "这周末做了什么", "what did I do over the weekend?"):
        done = run("search", question, *thursday, db=path)
        assert _listed(done.stdout) == weekend, question
        assert json.loads(done.stdout)["window"] == {"since": _epoch("2026-02-28T00:00:00"),
                                                     "until": just_before("2026-03-02T00:00:00")}
    done = run("search", "my notes over the weekend", *thursday, db=path)
    assert _listed(done.stdout)[:2] == weekend
    sunday = ("--as-of", "2026-03-08T12:00", "--limit", "10", "--json")
    for question in ("what did I do this weekend?", "what did I do over the weekend?",
                     "这周末做了什么"):
        done = run("search", question, *sunday, db=path)
        assert _listed(done.stdout) == ["at-2026-03-07T10:00:00"], question


def test_weekend_alone_is_searched_as_a_topic(tmp_path: Path) -> None:
    """周末 alone was read as "over the weekend": asked on Thursday 5 March, "周末的定时任务"
    (the weekend's scheduled jobs) was searched without its word 周末 and lifted the
    weekend just past, so a session of that weekend about other scheduled jobs came
    before the one about the weekend's. Now 周末 is searched, as "weekend" is."""
    source = tmp_path / "jobs.jsonl"
    source.write_text("".join(json.dumps(
        {"id": sid, "started_at": _epoch(when),
         "messages": [{"role": "user", "content": text}]}) + "\n" for sid, when, text in [
            ("weekend-jobs", "2026-02-10T10:00:00", "周末的定时任务 改到周六凌晨 两点"),
            ("other-jobs", "2026-03-01T10:00:00", "每天的定时任务 改到凌晨 三点")]),
        encoding="utf-8")
    path = tmp_path / "jobs.db"
    assert run("ingest", str(source), db=path).returncode == 0
    for question in ("周末的定时任务", "周末的定时任务改到几点"):
        done = run("search", question, "--as-of", "2026-03-05T12:00", "--json", db=path)
        assert done.returncode == 0, done.stderr
        assert _listed(done.stdout)[0] == "weekend-jobs", question
        assert "window" not in json.loads(done.stdout), question
