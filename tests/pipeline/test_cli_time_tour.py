"""Time words as a user asks them, through the real CLI on a real SQLite store: weekends
counted back or placed in a month, parts of a month, last night, three days back, and
"weekend" as a noun's modifier (searched, no time lifted)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.pipeline.test_cli import run
from tests.pipeline.test_cli_times import sessions_at

# Around Thursday 2026-03-19: last weekend is 14-15 March, the one before 7-8 March (the
# first of March), February's last 28 February and 1 March.
_MOMENTS = ["2026-02-20T12:00:00", "2026-02-25T12:00:00", "2026-02-28T12:00:00",
            "2026-03-07T12:00:00", "2026-03-09T12:00:00", "2026-03-12T12:00:00",
            "2026-03-13T12:00:00",
            "2026-03-14T12:00:00", "2026-03-16T12:00:00",
            "2026-03-18T10:00:00", "2026-03-18T22:00:00"]
_SINCE_LAST_WEEK = ["2026-03-18T22:00:00", "2026-03-18T10:00:00", "2026-03-16T12:00:00",
                    "2026-03-14T12:00:00", "2026-03-13T12:00:00", "2026-03-12T12:00:00",
                    "2026-03-09T12:00:00"]
_SINCE_END_OF_FEBRUARY = [*_SINCE_LAST_WEEK, "2026-03-07T12:00:00", "2026-02-28T12:00:00",
                          "2026-02-25T12:00:00"]
_ASKED = ("--as-of", "2026-03-19T12:00", "--limit", "10", "--json")


def _listed(stdout: str) -> list[str]:
    return [r["session_id"].removeprefix("at-") for r in json.loads(stdout)["results"]]


@pytest.mark.parametrize(("question", "listed"), [
    # February's last weekend, not the one just past and all of February as well.
    ("what did I do the last weekend of February?", ["2026-02-28T12:00:00"]),
    # March's first weekend, not all of March.
    ("what did I do the first weekend in March?", ["2026-03-07T12:00:00"]),
    # Counted back: these were searched for as the words "weekends" and "before".
    ("what did I do two weekends ago?", ["2026-03-07T12:00:00"]),
    ("what did I do the weekend before last?", ["2026-03-07T12:00:00"]),
    # 저번 주말 was not read; each language's last weekend is the same two days.
    ("저번 주말에 뭐 했지", ["2026-03-14T12:00:00"]),
    ("지난 주말에 뭐 했지", ["2026-03-14T12:00:00"]),
    ("上周末做了什么", ["2026-03-14T12:00:00"]),
    ("先週末何をした？", ["2026-03-14T12:00:00"]),
    ("what did I do last weekend?", ["2026-03-14T12:00:00"]),
    # 저번 주 is last week (9-15 March), as 지난주 is.
    ("저번 주에 뭐 했지", ["2026-03-14T12:00:00", "2026-03-13T12:00:00",
                     "2026-03-12T12:00:00", "2026-03-09T12:00:00"]),
    # A day of last week is that day (上周五 listed all of last week; 지난 금요일 and
    # "the Monday before last" were searched as words).
    ("上周五做了什么", ["2026-03-13T12:00:00"]),
    ("先週の金曜日に何をした？", ["2026-03-13T12:00:00"]),
    ("지난주 금요일에 뭐 했지", ["2026-03-13T12:00:00"]),
    ("지난 금요일에 뭐 했지", ["2026-03-13T12:00:00"]),
    ("what did I do the Monday before last?", ["2026-03-09T12:00:00"]),
    # A day of this week is that day (这周一 listed all of this week; a range ending in it
    # ran until now), a day still to come this week so far.
    ("这周一做了什么", ["2026-03-16T12:00:00"]),
    ("今週の月曜日に何をした？", ["2026-03-16T12:00:00"]),
    ("이번 주 월요일에 뭐 했지", ["2026-03-16T12:00:00"]),
    ("本周三做了什么", ["2026-03-18T22:00:00", "2026-03-18T10:00:00"]),
    ("从上周五到这周一做了什么", ["2026-03-16T12:00:00", "2026-03-14T12:00:00",
                          "2026-03-13T12:00:00"]),
    ("这周五做了什么", ["2026-03-18T22:00:00", "2026-03-18T10:00:00", "2026-03-16T12:00:00"]),
    # A count or a longer word after the day number is no day: 一共 (in all), 三天 (three
    # days), 天天 (every day) listed Monday, Wednesday, last Sunday alone.
    ("这周一共做了什么", ["2026-03-18T22:00:00", "2026-03-18T10:00:00", "2026-03-16T12:00:00"]),
    ("这周三天做了什么", ["2026-03-18T22:00:00", "2026-03-18T10:00:00", "2026-03-16T12:00:00"]),
    ("上周天天做了什么", ["2026-03-14T12:00:00", "2026-03-13T12:00:00",
                     "2026-03-12T12:00:00", "2026-03-09T12:00:00"]),
    # A week ago today is Thursday 12 March alone (listed: the 8th to today).
    ("what did I do a week ago today?", ["2026-03-12T12:00:00"]),
    # The end of last month is its last seven days, not all of it (nor "end" searched).
    ("what did I do at the end of last month?", ["2026-02-28T12:00:00", "2026-02-25T12:00:00"]),
    ("先月末に何をした？", ["2026-02-28T12:00:00", "2026-02-25T12:00:00"]),
    ("지난달 말에 뭐 했지", ["2026-02-28T12:00:00", "2026-02-25T12:00:00"]),
    ("上个月底做了什么", ["2026-02-28T12:00:00", "2026-02-25T12:00:00"]),
    # Three days back (大前天 read as 前天, two days back, listed the wrong day).
    ("大前天做了什么", ["2026-03-16T12:00:00"]),
    ("그끄저께 뭐 했지", ["2026-03-16T12:00:00"]),
    # Last night: yesterday evening, not yesterday morning (nor "night" searched).
    ("what did we do last night?", ["2026-03-18T22:00:00"]),
    ("昨晚做了什么", ["2026-03-18T22:00:00"]),
    ("어젯밤에 뭐 했지", ["2026-03-18T22:00:00"]),
    # Since a time is from it until now (these listed that time alone, or were searched).
    ("what did I do since yesterday?", ["2026-03-18T22:00:00", "2026-03-18T10:00:00"]),
    ("what did I do since last weekend?", ["2026-03-18T22:00:00", "2026-03-18T10:00:00",
                                           "2026-03-16T12:00:00", "2026-03-14T12:00:00"]),
    ("先週から何をした？", _SINCE_LAST_WEEK),
    ("上周以来做了什么", _SINCE_LAST_WEEK),
    # 上周一起 is "since last Monday" with 从 before it, or a subject or a comma after it
    # (searched as 一起, together, it listed nothing); 上周一起讨论的方案 is still "the
    # plan discussed together last week" (tests/stages/test_named_times.py).
    ("上周一起我做了什么", _SINCE_LAST_WEEK),
    ("从上周一起做了什么", _SINCE_LAST_WEEK),
    ("上周一起，我做了什么？", _SINCE_LAST_WEEK),
    ("从这周一起我做了什么", ["2026-03-18T22:00:00", "2026-03-18T10:00:00",
                         "2026-03-16T12:00:00"]),
    # Since a day still to come this week (Friday, asked on Thursday) is from that day:
    # nothing yet (it listed this week so far, as 这周五 alone does).
    ("这周五起我做了什么", []),
    ("what did I do since this Friday?", []),
    # Since a part of a month, too (these listed the end of February alone).
    ("what did I do since the end of last month?", _SINCE_END_OF_FEBRUARY),
    ("先月末から何をした？", _SINCE_END_OF_FEBRUARY),
    ("지난달 말부터 뭐 했지", _SINCE_END_OF_FEBRUARY),
])
def test_a_time_alone_lists_the_sessions_of_that_time(tmp_path: Path, question: str,
                                                      listed: list[str]) -> None:
    path = sessions_at(tmp_path, _MOMENTS)
    done = run("search", question, *_ASKED, db=path)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout) == listed


def _epoch(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_weekend_before_a_noun_is_searched_not_a_time(tmp_path: Path) -> None:
    """"Who takes over the weekend shift" asks about the weekend shift: the session that
    settled its rota weeks ago comes first, not last weekend's session that shares the
    other words ("over the weekend" was read as last weekend: the word "weekend" went
    unsearched and last weekend's session was lifted)."""
    source = tmp_path / "shift.jsonl"
    sessions = [
        ("rota", "2026-02-10T12:00:00",
         "Dana takes over the weekend shift from March; the weekend shift rota is in the wiki"),
        ("keyboard", "2026-03-14T12:00:00",
         "the shift key takes over a second to register on this keyboard, who takes it back"),
    ]
    source.write_text("".join(json.dumps(
        {"id": name, "started_at": _epoch(when), "messages": [{"role": "user", "content": text}]}
    ) + "\n" for name, when, text in sessions), encoding="utf-8")
    path = tmp_path / "shift.db"
    assert run("ingest", str(source), db=path).returncode == 0
    for question in ("who takes over the weekend shift?", "who takes over the weekend-shift"):
        done = run("search", question, *_ASKED, db=path)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["results"][0]["session_id"] == "rota"


# Around Thursday 2026-03-19 again, over three years: the past year (365 days back) starts
# on 19 March 2025, last year is 2025, the year before last 2024.
_YEARS = ["2024-06-10T12:00:00", "2025-02-10T12:00:00", "2025-03-25T12:00:00",
          "2025-11-20T12:00:00", "2026-01-15T12:00:00", "2026-02-20T12:00:00",
          "2026-03-10T12:00:00", "2026-03-17T12:00:00", "2026-03-18T12:00:00"]
_LAST_YEAR = ["2025-11-20T12:00:00", "2025-03-25T12:00:00", "2025-02-10T12:00:00"]
_PAST_YEAR = ["2026-03-18T12:00:00", "2026-03-17T12:00:00", "2026-03-10T12:00:00",
              "2026-02-20T12:00:00", "2026-01-15T12:00:00", "2025-11-20T12:00:00",
              "2025-03-25T12:00:00"]
_PAST_DAYS = ["2026-03-18T12:00:00", "2026-03-17T12:00:00"]


@pytest.mark.parametrize(("question", "listed"), [
    # 지난해 is last year, as 작년 is; 지지난해 and (in Chinese) 前年 the year before last.
    ("지난해에 뭐 했지", _LAST_YEAR),
    ("지지난해에 뭐 했지", ["2024-06-10T12:00:00"]),
    ("前年做了什么", ["2024-06-10T12:00:00"]),
    # The past year is the 365 days back until now, not the calendar's last year.
    ("过去一年做了什么", _PAST_YEAR),
    ("過去一年做了什麼", _PAST_YEAR),
    ("最近一年做了什么", _PAST_YEAR),
    ("過去1年に何をした？", _PAST_YEAR),
    ("지난 1년 동안 뭐 했지", _PAST_YEAR),
    # The past month and week: 30 and 7 days back.
    ("近一个月做了什么", ["2026-03-18T12:00:00", "2026-03-17T12:00:00",
                     "2026-03-10T12:00:00", "2026-02-20T12:00:00"]),
    ("最近一周做了什么", _PAST_DAYS),
    ("최근 일주일 동안 뭐 했지", _PAST_DAYS),
    # Two numbers side by side (两三, 三四: two or three) count as the larger, not one.
    ("过去两三年做了什么", list(reversed(_YEARS))),
    ("最近两三个月做了什么", ["2026-03-18T12:00:00", "2026-03-17T12:00:00",
                       "2026-03-10T12:00:00", "2026-02-20T12:00:00", "2026-01-15T12:00:00"]),
    # The past few days: three, as "the past few days" reads.
    ("这几天做了什么", _PAST_DAYS),
    ("最近几天做了什么", _PAST_DAYS),
    ("この数日何をした？", _PAST_DAYS),
    ("요 며칠 뭐 했지", _PAST_DAYS),
])
def test_a_year_or_the_days_back_named_in_cjk_list_their_sessions(
        tmp_path: Path, question: str, listed: list[str]) -> None:
    """These were searched as words (지난해, 前年, 过去一年, 最近一周, 这几天, この数日, 요
    며칠 read as no time) and found nothing: each lists the sessions of the time it names."""
    path = sessions_at(tmp_path, _YEARS)
    done = run("search", question, *_ASKED, db=path)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout) == listed


_BEFORE_FRIDAY = ["2026-03-12T12:00:00", "2026-03-09T12:00:00", "2026-03-07T12:00:00",
                  "2026-02-28T12:00:00", "2026-02-25T12:00:00", "2026-02-20T12:00:00"]


@pytest.mark.parametrize(("question", "listed"), [
    # Before a time (之前, より前, 전에, 이전에) ends at its start: last Friday left out.
    ("上周五之前做了什么", _BEFORE_FRIDAY),
    ("先週の金曜日より前に何をした？", _BEFORE_FRIDAY),
    ("지난주 금요일 전에 뭐 했지", _BEFORE_FRIDAY),
    ("지난주 금요일 이전에 뭐 했지", _BEFORE_FRIDAY),
    # 以前 (Chinese law's and Japanese: its day included) and 截至 (as of) are until it.
    ("上周五以前做了什么", ["2026-03-13T12:00:00", *_BEFORE_FRIDAY]),
    ("截至上周五做了什么", ["2026-03-13T12:00:00", *_BEFORE_FRIDAY]),
])
def test_a_time_before_which_a_cjk_question_asks_bounds_the_listing(
        tmp_path: Path, question: str, listed: list[str]) -> None:
    """These listed last Friday alone (之前, より前, 전에 and 以前 after it, or 截至 before
    it, were left as words that name nothing): each lists what came before it."""
    path = sessions_at(tmp_path, _MOMENTS)
    done = run("search", question, *_ASKED, db=path)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout) == listed


@pytest.mark.parametrize("question", [
    "what did I change in the nginx config since last week?",
    "what did I change in the nginx config since last month?",
    "what did I change in the nginx config since last year?",
    "先週から nginx の config を変えた？",
])
def test_since_a_time_beside_a_topic_lifts_the_sessions_until_now(tmp_path: Path,
                                                                   question: str) -> None:
    """"Since last week" beside a topic lifts this week's sessions as much as last week's,
    as its listing runs until now: the ranker weighed last week (month, year) alone, and
    last Tuesday's look-alike came above yesterday's (asked in March, "since last year"
    put last June's first)."""
    path = _look_alikes(tmp_path, ["2025-06-05T12:00:00", "2026-03-01T12:00:00",
                                    "2026-03-10T12:00:00", "2026-03-18T12:00:00"])
    done = run("search", question, *_ASKED, db=path)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout)[0] == "2026-03-18T12:00:00"


@pytest.mark.parametrize(("question", "first"), [
    # Until now: from that Friday on, newest first, not that Friday alone.
    ("上周五到现在 nginx config 改了什么", "2026-03-19T10:00:00"),
    ("what did I change in the nginx config between last friday and now?",
     "2026-03-19T10:00:00"),
    # Until yesterday: today's session is left out, and not lifted as "from" on to now.
    ("what did I change in the nginx config from last monday until yesterday?",
     "2026-03-18T12:00:00"),
])
def test_a_range_beside_a_topic_lifts_the_sessions_it_holds(tmp_path: Path, question: str,
                                                             first: str) -> None:
    """A range beside a topic is weighed as it is listed: 上周五到现在 and "between last
    Friday and now" lifted that Friday alone (its look-alike came above this morning's),
    "from last Monday until yesterday" ran on until now (this morning's came above
    yesterday's)."""
    path = _look_alikes(tmp_path, ["2026-03-01T12:00:00", "2026-03-13T12:00:00",
                                    "2026-03-18T12:00:00", "2026-03-19T10:00:00"])
    done = run("search", question, *_ASKED, db=path)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout)[0] == first


@pytest.mark.parametrize(("question", "changed", "checked"), [
    ("what did I change in the nginx upload limit before last friday?",
     "changed the nginx upload limit to 50m", "checked the nginx upload limit"),
    ("上周五之前 nginx 上传限制改了什么",
     "把 nginx 的上传限制改成了 50m", "看了一下 nginx 的上传限制"),
])
def test_a_time_asked_before_beside_a_topic_lifts_nothing(
        tmp_path: Path, question: str, changed: str, checked: str) -> None:
    """"Before last Friday" beside a topic leaves that Friday out: the ranker weighed it as
    "last Friday", and that day's look-alike came above the Wednesday that answers."""
    source = tmp_path / "limit.jsonl"
    said = {"2026-03-11T12:00:00": changed, "2026-03-13T12:00:00": checked}
    source.write_text("".join(json.dumps(
        {"id": f"at-{when}", "started_at": _epoch(when),
         "messages": [{"role": "user", "content": text},
                      {"role": "assistant", "content": "ok, done."}]}) + "\n"
        for when, text in said.items()), encoding="utf-8")
    path = tmp_path / "limit.db"
    assert run("ingest", str(source), db=path).returncode == 0
    done = run("search", question, *_ASKED, db=path)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout) == ["2026-03-11T12:00:00", "2026-03-13T12:00:00"]


def test_a_day_of_this_week_at_the_calendars_end_is_read(tmp_path: Path) -> None:
    """Asked on Friday 31 December 9999, this week's Saturday and Sunday (这周日, 今週の土曜日,
    이번 주 일요일) would fall in the year 10000: the question, listed or beside a topic,
    ended in "internal error: OverflowError". Still to come, each is this week so far."""
    path = sessions_at(tmp_path, ["9999-12-26T10:00:00", "9999-12-27T10:00:00",
                                  "9999-12-30T10:00:00"])
    asked = ("--as-of", "9999-12-31T12:00", "--json")
    for question in ("这周日做了什么", "今週の土曜日に何をした？", "이번 주 일요일에 뭐 했지"):
        done = run("search", question, *asked, db=path)
        assert done.returncode == 0, done.stderr
        assert _listed(done.stdout) == ["9999-12-30T10:00:00", "9999-12-27T10:00:00"], question
    done = run("search", "这周六的 notes", *asked, db=path)
    assert done.returncode == 0, done.stderr
    assert _listed(done.stdout)[:2] == ["9999-12-30T10:00:00", "9999-12-27T10:00:00"]


def _look_alikes(tmp_path: Path, moments: list[str]) -> Path:
    """A store of one session a moment, all saying the same about the nginx config (only
    time tells them apart), ingested through the CLI."""
    source = tmp_path / "nginx.jsonl"
    source.write_text("".join(json.dumps(
        {"id": f"at-{when}", "started_at": _epoch(when),
         "messages": [{"role": "user", "content": "changed the nginx config upload limit"}]}
    ) + "\n" for when in moments), encoding="utf-8")
    path = tmp_path / "nginx.db"
    assert run("ingest", str(source), db=path).returncode == 0
    return path


_SINCE_STORE = [
    ("answer", "2026-03-17T10:00:00", "nginx 升级后 502 怎么办",
     "把 nginx 的 upstream keepalive 调大，reload 后 502 消失"),
    ("lookalike", "2026-03-18T10:00:00", "自从上线以来 nginx 日志一直很干净",
     "上线以来没有告警，以来的记录都正常"),
    ("answer-en", "2026-03-16T10:00:00", "nginx returned 502 after the upgrade",
     "raised the nginx upstream keepalive, the 502s stopped"),
    ("lookalike-en", "2026-03-18T11:00:00", "nginx has been quiet since the migration",
     "no alerts since then, logs clean since monday"),
]


@pytest.mark.parametrize(("question", "answer"), [
    ("上周以来nginx怎么了", "answer"),
    ("自从上周 nginx 怎么了", "answer"),
    ("what went wrong with nginx since last week", "answer-en"),
])
def test_a_since_word_with_a_time_is_not_searched(tmp_path: Path, question: str,
                                                  answer: str) -> None:
    """以来, 自从 and "since" with a time run it on until now: searched as words as well,
    they put the session that says 以来 or "since" of something else above the answer."""
    source = tmp_path / "since.jsonl"
    source.write_text("".join(json.dumps(
        {"id": name, "started_at": _epoch(when), "messages": [
            {"role": "user", "content": asked}, {"role": "assistant", "content": said}]},
        ensure_ascii=False) + "\n" for name, when, asked, said in _SINCE_STORE),
        encoding="utf-8")
    path = tmp_path / "since.db"
    assert run("ingest", str(source), db=path).returncode == 0
    done = run("search", question, *_ASKED, db=path)
    assert done.returncode == 0, done.stderr
    listed = [r["session_id"] for r in json.loads(done.stdout)["results"]]
    assert listed.index(answer) < listed.index(answer.replace("answer", "lookalike"))
