"""Tests of the calendar names a question may hold: dates, months, this week."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.calendar_words import calendar_windows
from harkback.stages.recent import browse_window
from harkback.stages.request import SearchRequest
from harkback.stages.when import time_window, time_words


def _named(question: str) -> tuple[float, float] | None:
    return min(calendar_windows(question.lower(), NOW), default=(0, None))[1]

NOW = datetime(2026, 3, 5, 12, tzinfo=UTC).timestamp()  # a Thursday


def _at(year: int, month: int, day: int) -> float:
    return datetime(year, month, day, tzinfo=UTC).timestamp()


def _before(year: int, month: int, day: int) -> float:
    """Just before that midnight: a day or month named ends there, not at the next one's
    first moment."""
    return math.nextafter(_at(year, month, day), -math.inf)


@pytest.mark.parametrize(("question", "window"), [
    ("what did I do on 2026-03-04?", (_at(2026, 3, 4), _before(2026, 3, 5))),
    ("the deploy on March 4th", (_at(2026, 3, 4), _before(2026, 3, 5))),
    ("what broke on 4th of march, 2025", (_at(2025, 3, 4), _before(2025, 3, 5))),
    ("what did I fix in December", (_at(2025, 12, 1), _before(2026, 1, 1))),
    ("what did I fix in march 2025", (_at(2025, 3, 1), _before(2025, 4, 1))),
    ("what did I do in March", (_at(2026, 3, 1), NOW)),
    ("what did I do this week", (_at(2026, 3, 2), NOW)),
    ("本周做了什么", (_at(2026, 3, 2), NOW)),
    ("이번 달에 뭐 했지", (_at(2026, 3, 1), NOW)),
    ("今年のデプロイ", (_at(2026, 1, 1), NOW)),
    ("what did I do since December", (_at(2025, 12, 1), NOW)),
    ("what changed after 2026-03-01", (_at(2026, 3, 1), NOW)),
])
def test_a_calendar_name_selects_its_stretch(question: str, window: tuple[float, float]) -> None:
    """A date is that day, a month its latest occurrence begun by now, and 'this week'
    runs from Monday until now (UTC)."""
    assert _named(question) == window


@pytest.mark.parametrize("question", ["step 4 may fail", "you may 2 times retry",
                                      "on 2026-02-30", "what is planned for 2027-01-01",
                                      "march on", "what did I do until 2026-03-04",
                                      "sessions before march 4th",
                                      "we run 3 replicas and may 2 of them fail"])
def test_what_is_no_date_or_not_begun_names_nothing(question: str) -> None:
    """'may' the verb (after "and" too, where no day comes before it), an impossible date
    and a date still to come name no window."""
    assert _named(question) is None


def test_a_month_alone_is_listed_and_a_month_with_a_topic_is_searched() -> None:
    """'what did I do in March?' lists March; 'which tests did I fix in March?' is a
    search, and its ranking does not weigh the month (time_window reads none)."""
    listed = browse_window(SearchRequest(query="what did I do in March?"), NOW)
    assert listed is not None and (listed.since, listed.until) == (_at(2026, 3, 1), NOW)
    topical = SearchRequest(query="which tests did I fix in March?")
    assert browse_window(topical, NOW) is None
    assert time_window(topical.query, NOW) is None


@pytest.mark.parametrize(("question", "since", "until"), [
    ("what did I do on the 4th of march?", _at(2026, 3, 4), _before(2026, 3, 5)),
    ("what did I do since march 2?", _at(2026, 3, 2), NOW),
    ("what did I do since the 2nd of march?", _at(2026, 3, 2), NOW),
    ("what did I do in march 2025?", _at(2025, 3, 1), _before(2025, 4, 1)),
    # "May 2" after since, from, to, until is the month's day, not "may" the verb
    ("what did I do since may 2?", _at(2025, 5, 2), NOW),
    ("what did I do from may 2 to may 4?", _at(2025, 5, 2), _before(2025, 5, 5)),
    ("what did I do between may 2 and may 4?", _at(2025, 5, 2), _before(2025, 5, 5)),
    # and before a range's other end, with no word before it
    ("what did I do may 2 to may 4?", _at(2025, 5, 2), _before(2025, 5, 5)),
    ("what did I do may 30 - june 2?", _at(2025, 5, 30), _before(2025, 6, 3)),
])
def test_a_day_of_a_month_is_listed_as_that_day_not_the_month(
        question: str, since: float, until: float) -> None:
    """'Of march' in 'the 4th of march', and 'since march' in 'since march 2', were read
    as the month too: the listing ran from March 1 (to now, or through the 4th), the days
    before the one named included."""
    listed = browse_window(SearchRequest(query=question), NOW)
    assert listed is not None and (listed.since, listed.until) == (since, until)


@pytest.mark.parametrize(("question", "window"), [
    ("what did I do in may 3 times", (_at(2025, 5, 1), _before(2025, 6, 1))),
    ("what did I do the 31st of february", (_at(2026, 2, 1), _before(2026, 3, 1))),
])
def test_a_day_not_read_leaves_its_month_read(question: str, window: tuple[float, float]
                                              ) -> None:
    """'May 3' of 'in may 3 times' (may the verb) and the 31st of February name no day:
    they hid the month they hold too, and the question named no time at all."""
    assert _named(question) == window


@given(st.text(max_size=80))
def test_any_text_is_read_without_error(text: str) -> None:
    """Whatever the question, a calendar window ends no later than now."""
    window = _named(text)
    assert window is None or window[0] <= window[1] <= NOW


_PHRASES = st.sampled_from(["in {m} {y}", "{m} {d} {y}", "{d}th of {m} {y}", "since {m} {y}",
                            "on {y}-{mm}-{dd}"])


@given(_PHRASES, st.sampled_from(["march", "may", "december", "february"]),
       st.integers(0, 9999), st.integers(0, 40))
def test_any_date_or_month_is_read_without_error(phrase: str, month: str, year: int,
                                                 day: int) -> None:
    """Years 0000 and 9999, days past a month's end: a window that ends by now, or none;
    a listing of a time-only question never raises ("in march 0000" did)."""
    question = "what did I do " + phrase.format(m=month, y=f"{year:04d}", d=day,
                                                 mm=f"{day % 13:02d}", dd=f"{day:02d}")
    window = _named(question)
    assert window is None or window[0] <= window[1] <= NOW
    browse_window(SearchRequest(query=question), NOW)


def test_this_weekend_is_the_latest_begun() -> None:
    """"This weekend" (今週末, 이번 주말, 这周末) asked on a weekday named no time (the
    question was searched for its words): of past sessions it means the Saturday and
    Sunday just gone. Asked on Sunday it is Saturday to now."""
    sunday = datetime(2026, 3, 8, 12, tzinfo=UTC).timestamp()
    for question in ("what did I do this weekend", "今週末何をした", "이번 주말에 뭐 했지",
                     "这周末做了什么"):
        named = [window for _, window in calendar_windows(question, sunday)]
        assert named == [(_at(2026, 3, 7), sunday)], question
        for weekday in range(2, 7):  # Monday 2 to Friday 6 March
            asked = datetime(2026, 3, weekday, 12, tzinfo=UTC).timestamp()
            named = [window for _, window in calendar_windows(question, asked)]
            assert named == [(_at(2026, 2, 28), _before(2026, 3, 2))], (question, weekday)


def test_over_the_weekend_is_the_latest_begun() -> None:
    """"Over the weekend" was no time: a question of it alone was searched for "weekend".
    It is the weekend just past on a weekday, this one up to now on Saturday or Sunday;
    and it is weighed beside a topic, its words not searched."""
    question = "what did I do over the weekend"
    saturday = datetime(2026, 3, 7, 12, tzinfo=UTC).timestamp()
    for asked, window in ((NOW, (_at(2026, 2, 28), _before(2026, 3, 2))),
                          (saturday, (_at(2026, 3, 7), saturday))):
        listed = browse_window(SearchRequest(query=question), asked)
        assert listed is not None and (listed.since, listed.until) == window
    topical = "what did I change over the weekend in nginx"
    assert time_window(topical, NOW) == (_at(2026, 2, 28), _before(2026, 3, 2))
    assert "weekend" in time_words(topical)


@pytest.mark.parametrize("question", ["what did I do over the weekend of march 7th",
                                      "what did I do over the weekend of 2026-02-14",
                                      "what broke over the weekend after the release"])
def test_a_weekend_placed_by_the_words_after_it_is_not_the_latest(question: str) -> None:
    """"Over the weekend before last" (asked on Thursday 19 March: 7 and 8 March) was
    listed as 14 and 15 March, the latest weekend; "over the weekend of March 7th" as 1 to
    19 March, from the date to the latest weekend's end. The words after "the weekend"
    place it: no latest weekend is read (its words are searched; "before last" is read
    on its own: :func:`test_the_weekend_before_last_is_the_one_before_the_latest`)."""
    thursday = datetime(2026, 3, 19, 12, tzinfo=UTC).timestamp()
    assert time_window(question, thursday) is None
    assert browse_window(SearchRequest(query=question), thursday) is None
    assert "weekend" not in time_words(question)


def test_the_weekend_before_last_is_the_one_before_the_latest() -> None:
    """"Over the weekend before last", asked on Thursday 19 March, lists 7 and 8 March
    (it was searched for as words: neither the latest weekend nor any)."""
    thursday = datetime(2026, 3, 19, 12, tzinfo=UTC).timestamp()
    listed = browse_window(SearchRequest(query="what did I do over the weekend before last"),
                           thursday)
    assert listed is not None and (listed.since, listed.until) == (_at(2026, 3, 7),
                                                                   _before(2026, 3, 9))


@pytest.mark.parametrize("question", ["周末做了什么", "週末に何をした", "주말에 뭐 했지",
                                      "周末的定时任务", "周末值班表", "週末のバッチ", "주말 당직표",
                                      "what did I do on the weekend", "the weekend cron job"])
def test_weekend_alone_is_a_topic_not_a_time(question: str) -> None:
    """周末, 週末 and 주말 alone were read as "over the weekend": "周末的定时任务" (the
    weekend's scheduled jobs) lost its word 周末 and lifted last weekend's sessions, as
    "周末做了什么" was listed as them. A weekend no word marks as this or the last one
    is what the question is about, as "weekend" alone is: no time, its word searched, no
    listing; asked on a Sunday too."""
    sunday = datetime(2026, 3, 8, 12, tzinfo=UTC).timestamp()
    for asked in (NOW, sunday):
        assert time_window(question, asked) is None
        assert browse_window(SearchRequest(query=question), asked) is None
    assert time_words(question) == frozenset()


@pytest.mark.parametrize("question", ["这周末做了什么", "这个周末做了什么", "本周末做了什么",
                                      "這週末做了什麼", "今週末何をした", "이번 주말에 뭐 했지",
                                      "이번주말에 뭐 했지", "what did I do this weekend"])
def test_a_weekend_marked_as_this_one_is_listed(question: str) -> None:
    """Marked as this weekend, 周末 (週末, 주말) is a time: on a weekday the one just gone."""
    listed = browse_window(SearchRequest(query=question), NOW)
    assert listed is not None
    assert (listed.since, listed.until) == (_at(2026, 2, 28), _before(2026, 3, 2))


@pytest.mark.parametrize("question", ["上周末做了什么", "先週末何をした", "지난 주말에 뭐 했지",
                                      "지난주말에 뭐 했지", "what did I do last weekend"])
def test_last_weekend_asked_on_sunday_is_not_read_as_this_one(question: str) -> None:
    """周末 of 上周末 (주말 of 지난 주말) is no weekend of its own: asked on Sunday, last
    weekend is the week before's alone."""
    sunday = datetime(2026, 3, 8, 12, tzinfo=UTC).timestamp()
    listed = browse_window(SearchRequest(query=question), sunday)
    assert listed is not None
    assert (listed.since, listed.until) == (_at(2026, 2, 28), _before(2026, 3, 2))


@pytest.mark.parametrize("question", ["下周末做什么", "来週末の予定", "毎週末のジョブ",
                                      "다음 주말에 뭐 하지", "매주말 작업"])
def test_another_weekend_named_is_not_the_latest(question: str) -> None:
    """Next weekend, every weekend: no weekend gone, no time read."""
    assert time_window(question, NOW) is None
