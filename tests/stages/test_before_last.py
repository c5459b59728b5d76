"""The week, month, year, weekend or day before last, as a question names it in English,
Chinese, Japanese and Korean: the calendar's period two back, not last week's (上上周 and
지지난주 were searched as words, 一昨年 and 재작년 read as last year)."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from harkback.stages.calendar_words import previous_periods
from harkback.stages.month_parts import month_parts
from harkback.stages.recent import browse_window
from harkback.stages.request import SearchRequest
from harkback.stages.weekday_words import weekday_windows
from harkback.stages.weekend_words import weekend_windows
from harkback.stages.when import DAY, time_windows, time_words

NOW = datetime(2026, 3, 19, 12, tzinfo=UTC).timestamp()  # a Thursday


def _day(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("question", "first", "following"), [
    # The week before last: Monday 2 March to Sunday 8 March.
    ("what did I do the week before last?", "2026-03-02", "2026-03-09"),
    ("上上周做了什么", "2026-03-02", "2026-03-09"),
    ("上上个星期做了什么", "2026-03-02", "2026-03-09"),
    ("先々週何をした？", "2026-03-02", "2026-03-09"),
    ("지지난주에 뭐 했지", "2026-03-02", "2026-03-09"),
    ("지지난 주에 뭐 했지", "2026-03-02", "2026-03-09"),
    # The month before last: January.
    ("what did I do the month before last?", "2026-01-01", "2026-02-01"),
    ("上上个月做了什么", "2026-01-01", "2026-02-01"),
    ("先々月何をした？", "2026-01-01", "2026-02-01"),
    ("지지난달에 뭐 했지", "2026-01-01", "2026-02-01"),
    # The year before last: 2024 (一昨年 and 재작년 were read as 2025, 昨年 and 작년).
    ("what did I do the year before last?", "2024-01-01", "2025-01-01"),
    ("一昨年何をした？", "2024-01-01", "2025-01-01"),
    ("재작년에 뭐 했지", "2024-01-01", "2025-01-01"),
    # The weekend before last: 7-8 March.
    ("上上周末做了什么", "2026-03-07", "2026-03-09"),
    ("先々週末何をした？", "2026-03-07", "2026-03-09"),
    ("지지난 주말에 뭐 했지", "2026-03-07", "2026-03-09"),
    # A day of the week before last, and the Friday before last: Friday 6 March.
    ("上上周五做了什么", "2026-03-06", "2026-03-07"),
    ("先々週の金曜日に何をした？", "2026-03-06", "2026-03-07"),
    ("지지난주 금요일에 뭐 했지", "2026-03-06", "2026-03-07"),
    ("지지난 금요일에 뭐 했지", "2026-03-06", "2026-03-07"),
    # The end of the month before last: its last seven days, 25-31 January.
    ("上上个月底做了什么", "2026-01-25", "2026-02-01"),
    ("先々月末に何をした？", "2026-01-25", "2026-02-01"),
    ("지지난달 말에 뭐 했지", "2026-01-25", "2026-02-01"),
])
def test_the_one_before_last_is_listed_as_that_period(question: str, first: str,
                                                      following: str) -> None:
    listed = browse_window(SearchRequest(query=question), NOW)
    assert listed is not None and listed.query == "", question
    assert (listed.since, _day(following) - DAY < (listed.until or 0) < _day(following)) \
        == (_day(first), True)


def test_the_one_before_last_is_no_last_one() -> None:
    """上上周 holds 上周, 지지난주 지난주, 一昨年 昨年, 재작년 작년: none of them is read as
    last week or year as well (that listed from last week's start)."""
    for question in ("上上周", "지지난주", "一昨年", "재작년", "上上周末", "上上周五"):
        starts = [start for _, (start, _) in previous_periods(question, NOW)]
        starts += [start for _, (start, _) in weekend_windows(question, NOW)]
        starts += [start for _, (start, _) in weekday_windows(question, NOW)]
        assert all(start < _day("2026-03-09") for start in starts), question
        assert month_parts(question, NOW) == []


@pytest.mark.parametrize(("question", "first", "following"), [
    ("how did we fix nginx the week before last", "2026-03-02", "2026-03-09"),
    ("上上周 nginx 怎么修的", "2026-03-02", "2026-03-09"),
    ("先々週 nginx をどう直した", "2026-03-02", "2026-03-09"),
    ("지지난주 nginx 어떻게 고쳤지", "2026-03-02", "2026-03-09"),
    ("how did we fix nginx the month before last", "2026-01-01", "2026-02-01"),
    ("上上个月 nginx 怎么修的", "2026-01-01", "2026-02-01"),
    ("先々月 nginx をどう直した", "2026-01-01", "2026-02-01"),
    ("지지난달 nginx 어떻게 고쳤지", "2026-01-01", "2026-02-01"),
])
def test_the_ranker_weighs_the_calendar_period_before_last(question: str, first: str,
                                                          following: str) -> None:
    """Beside a topic, the week (month) before last is a soft hint over the calendar's week
    (month) before last week (month), the period a listing of it covers, as "last week" is
    the calendar's: read as the seven days before the last seven, asked on a Thursday it
    held last week's Monday to Wednesday, listed as last week; its words are not searched."""
    windows = time_windows(question, NOW)
    assert windows, question
    start, end = windows[0][1]
    assert (start, end) == (_day(first), math.nextafter(_day(following), -math.inf)), question
    listed = [w for _, w in previous_periods(question.lower(), NOW)]
    assert listed == [(start, end)], question
    assert "nginx" not in time_words(question) and time_words(question), question
