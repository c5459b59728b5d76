"""Stretches a question names by their ends ("from last Monday to Wednesday", "until
Wednesday", 从上周一到周三, 先週の月曜から水曜まで, 지난주 월요일부터 수요일까지, 今まで), and the
same words as ``--since``/``--until`` values: each end is read as a question reads it."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.recent import browse_window
from harkback.stages.request import SearchRequest
from harkback.stages.time_bounds import parse_time_bound
from harkback.stages.time_ranges import time_ranges

NOW = datetime(2026, 3, 19, 12, tzinfo=UTC).timestamp()  # a Thursday


def _day(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _before(text: str) -> float:
    return math.nextafter(_day(text), -math.inf)


def _listed(question: str) -> tuple[float | None, float | None]:
    listed = browse_window(SearchRequest(query=question), NOW)
    assert listed is not None and listed.query == "", question
    return listed.since, listed.until


@pytest.mark.parametrize(("question", "since", "until"), [
    # Last week's Monday to Wednesday, 9-11 March: these were searched as words, or listed
    # from last Monday (or last week) until now.
    ("从上周一到周三做了什么", _day("2026-03-09"), _before("2026-03-12")),
    ("上周一到周三为止做了什么", _day("2026-03-09"), _before("2026-03-12")),
    ("先週の月曜から水曜まで何をした？", _day("2026-03-09"), _before("2026-03-12")),
    ("지난주 월요일부터 수요일까지 뭐 했지", _day("2026-03-09"), _before("2026-03-12")),
    # "Last Monday" is the latest Monday (16 March), Wednesday the first after it.
    ("what did I do from last Monday to Wednesday?", _day("2026-03-16"), _before("2026-03-19")),
    ("what did I do from Monday to Wednesday?", _day("2026-03-16"), _before("2026-03-19")),
    # From the calendar's last week (not the seven days back) to yesterday's end.
    ("what did I do from last week until yesterday?", _day("2026-03-09"),
     _before("2026-03-19")),
    ("先週から昨日まで何をした？", _day("2026-03-09"), _before("2026-03-19")),
    ("지난주부터 어제까지 뭐 했지", _day("2026-03-09"), _before("2026-03-19")),
    ("从上周到昨天做了什么", _day("2026-03-09"), _before("2026-03-19")),
    # 起 or 开始 ending the first: they were "until now" from no start, listing everything.
    ("从上周起到现在做了什么", _day("2026-03-09"), NOW),
    ("从昨天开始到现在做了什么", _day("2026-03-18"), NOW),
    ("what did I do between 2026-03-02 and 2026-03-05?", _day("2026-03-02"),
     _before("2026-03-06")),
    # Until a time alone: from no start to its end ("before" it: to its start).
    ("what did I do until Wednesday?", None, _before("2026-03-19")),
    ("what did I do until last week?", None, _before("2026-03-16")),
    ("what did I do before last week?", None, _before("2026-03-09")),
    # "Thru" as "through": it joined two ends ("from monday thru wednesday") but alone was
    # no "until" (thru wednesday listed nothing, thru last week listed last week).
    ("what did I do through Wednesday?", None, _before("2026-03-19")),
    ("what did I do thru Wednesday?", None, _before("2026-03-19")),
    ("what did I do thru last week?", None, _before("2026-03-16")),
    ("周三为止做了什么", None, _before("2026-03-19")),
    ("水曜まで何をした？", None, _before("2026-03-19")),
    ("수요일까지 뭐 했지", None, _before("2026-03-19")),
    # "Up to" after "was I" is what I was doing: last week, yesterday (no "until": these
    # named no time and were searched as words).
    ("what was I up to last week?", _day("2026-03-09"), _before("2026-03-16")),
    ("what were we up to yesterday?", _day("2026-03-18"), _before("2026-03-19")),
    ("what did I do up to last week?", None, _before("2026-03-16")),
    # Until now.
    ("到现在做了什么", None, NOW),
    ("今まで何をした？", None, NOW),
    ("지금까지 뭐 했지", None, NOW),
    ("what did I do until now?", None, NOW),
])
def test_a_range_is_listed_from_its_first_end_to_its_second(
        question: str, since: float | None, until: float) -> None:
    assert _listed(question) == (since, until)


@pytest.mark.parametrize("question", [
    "先週から何をした？", "上周以来做了什么", "what did I do since last monday?",
    "what did I do yesterday and last week?", "回到上周的配置",
])
def test_since_and_two_times_are_no_range(question: str) -> None:
    """"Since" a time alone (から, 以来) still runs until now, and two times joined by
    "and" are two, listed together as before; 回到上周 (back to last week's) bounds nothing."""
    assert time_ranges(question.lower(), NOW) == []


def test_a_topic_beside_a_range_is_searched() -> None:
    """A range beside a topic lists nothing: the question is searched as before."""
    assert browse_window(SearchRequest(query="从上周一到周三 nginx 超时怎么修的"), NOW) is None


@pytest.mark.parametrize(("value", "since", "until"), [
    ("上周", _day("2026-03-09"), _before("2026-03-16")),
    ("先週", _day("2026-03-09"), _before("2026-03-16")),
    ("지난주", _day("2026-03-09"), _before("2026-03-16")),
    ("上上周", _day("2026-03-02"), _before("2026-03-09")),
    ("the week before last", _day("2026-03-02"), _before("2026-03-09")),
    ("先週の月曜から水曜まで", _day("2026-03-09"), _before("2026-03-12")),
    ("上个月底", _day("2026-02-22"), _before("2026-03-01")),
])
def test_a_bound_takes_the_words_a_question_takes(value: str, since: float,
                                                  until: float) -> None:
    """``--since 上周`` was refused ("use a date ... or words: ... last week"): a bound
    now reads any time a question names alone, its start as ``--since``, its end as
    ``--until``."""
    assert parse_time_bound(value, now=NOW, what="--since").unwrap() == since
    assert parse_time_bound(value, now=NOW, what="--until", end=True).unwrap() == until


@pytest.mark.parametrize("value", ["someday", "上周 nginx", "until wednesday", "周末"])
def test_a_bound_naming_anything_else_is_refused_in_one_line(value: str) -> None:
    """Words beside the time, a time with no start, or no time at all: one refusal that
    lists what is read."""
    reason = parse_time_bound(value, now=NOW, what="--since").failure().reason
    assert reason.startswith(f"cannot read --since '{value}': use a date")
    assert "(上周, 先週, 지난주)" in reason


_PIECES = ["from ", "to ", "until ", "before ", "between ", " and ", "last monday ", "wednesday ",
           "now ", "last week ", "yesterday ", "上周一", "到", "周三", "为止", "从", "现在", "先週",
           "の月曜", "から", "水曜", "まで", "今", "지난주 ", "월요일", "부터 ", "수요일", "까지 ",
           "지금", "上上周", "지지난주 ", "2026-03-02 ", "做了什么", " nginx "]


@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_any_mix_of_time_words_reads_without_error(text: str) -> None:
    """Whatever the words and their order, each range ends no later than now and starts no
    later than it ends, a listing's bounds are in order, and a bound is read or refused."""
    for _, (start, end) in time_ranges(text.lower(), NOW):
        assert start <= end <= NOW
    listed = browse_window(SearchRequest(query=text), NOW)
    if listed is not None and listed.since is not None and listed.until is not None:
        assert listed.since <= listed.until
    for end in (False, True):
        parse_time_bound(text, now=NOW, end=end)  # a Success or a Failure, never raised
