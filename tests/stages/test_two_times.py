"""A question naming two times ("yesterday and last week") lists every session of both:
the listing spans from the earliest start to the latest end of the times it names,
whichever comes first in the question, in English, Chinese, Japanese and Korean."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from harkback.stages.recent import browse_window
from harkback.stages.request import SearchRequest

NOW = datetime(2026, 3, 5, 12, tzinfo=UTC).timestamp()  # a Thursday


def _at(day: int) -> float:
    return datetime(2026, 3, day, tzinfo=UTC).timestamp()


def _just_before(day: int) -> float:
    """The last moment before midnight starting 2026-03-``day``: the day before's end."""
    return math.nextafter(_at(day), -math.inf)


LAST_MONDAY = datetime(2026, 2, 23, tzinfo=UTC).timestamp()  # last week's Monday
END_OF_YESTERDAY = _just_before(5)


@pytest.mark.parametrize("question", [
    "what did I do yesterday and last week?", "what did I do last week and yesterday?",
    "昨天和上周我做了什么", "上周和昨天我做了什么",
    "昨日と先週は何をした", "先週と昨日は何をした",
    "어제와 지난주에 뭐 했지", "지난주와 어제 뭐 했지",
])
def test_two_times_list_the_span_covering_both(question: str) -> None:
    """Last week's Monday to the end of yesterday, in either order."""
    listed = browse_window(SearchRequest(query=question), NOW)
    assert listed is not None and listed.query == ""
    assert (listed.since, listed.until) == (LAST_MONDAY, END_OF_YESTERDAY)


def test_the_day_before_yesterday_is_not_also_yesterday() -> None:
    """'The day before yesterday' (一昨日) holds 'yesterday' (昨日), which is no second
    time: with last week, the listing ends with the day before yesterday."""
    for question in ("what did I do last week and the day before yesterday",
                     "先週と一昨日は何をした"):
        listed = browse_window(SearchRequest(query=question), NOW)
        assert listed is not None and (listed.since, listed.until) == (LAST_MONDAY, _just_before(4))
