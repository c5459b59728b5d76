"""Tests of times people write: time bounds, the window a question names, closeness."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from harkback.stages.named_times import named_times
from harkback.stages.request import make_request
from harkback.stages.time_bounds import parse_as_of, parse_time_bound
from harkback.stages.when import DAY, closeness, time_window, time_words

NOW = 1_685_474_340.0  # Tuesday 2023-05-30 19:19 UTC


def _before(midnight: float) -> float:
    """Where a day ending at ``midnight`` ends: just before it, which starts the next day."""
    return math.nextafter(midnight, -math.inf)
moments = st.floats(0.0, 4e9, allow_nan=False)


def test_ago_points_at_the_moment_that_long_before_now() -> None:
    """'two weeks ago' is a week-wide window centred fourteen days back."""
    assert time_window("what did I plant two weeks ago?", NOW) \
        == (NOW - 17.5 * DAY, NOW - 10.5 * DAY)


def test_digits_and_vague_counts_are_read() -> None:
    """'3 days ago' is that whole day; 'a couple of days ago' the whole days one to three back."""
    today = 1_685_404_800.0  # 2023-05-30 00:00 UTC
    assert time_window("3 days ago", NOW) == (today - 3 * DAY, _before(today - 2 * DAY))
    assert time_window("a couple of days ago", NOW) == (today - 3 * DAY, _before(today))


def test_past_and_last_span_until_now() -> None:
    """'in the past three months', 'the past week' and 'the last weeks' reach from then
    until now."""
    assert time_window("in the past three months", NOW) == (NOW - 90 * DAY, NOW)
    assert time_window("what did I buy in the past week", NOW) == (NOW - 7 * DAY, NOW)
    assert time_window("what did I buy in the last weeks", NOW) == (NOW - 7 * DAY, NOW)


def test_last_week_and_last_month_are_the_calendars() -> None:
    """'last week' is Monday to Sunday before this week, 'last month' the month before:
    asked on a Sunday, the seven days back are nearly all this week's."""
    sunday = datetime(2023, 6, 4, 12, tzinfo=ZoneInfo("UTC")).timestamp()
    week = time_window("what did I buy last week", sunday)
    month = time_window("the previous month's invoices", sunday)
    assert week is not None and month is not None
    assert week[0] == datetime(2023, 5, 22, tzinfo=ZoneInfo("UTC")).timestamp()
    assert week[1] == _before(datetime(2023, 5, 29, tzinfo=ZoneInfo("UTC")).timestamp())
    assert month[0] == datetime(2023, 5, 1, tzinfo=ZoneInfo("UTC")).timestamp()
    assert month[1] == _before(datetime(2023, 6, 1, tzinfo=ZoneInfo("UTC")).timestamp())


def test_last_weekday_is_the_most_recent_such_day() -> None:
    """'last Saturday' asked on a Tuesday is the whole Saturday three days before."""
    start, end = time_window("who came to the gig last Saturday?", NOW) or (0.0, 0.0)
    assert (start, end) == (1_685_145_600.0, _before(1_685_145_600.0 + DAY))  # 2023-05-27


def test_a_question_without_time_gives_no_window() -> None:
    """Words such as 'months' alone name no time."""
    assert time_window("how many months have passed since I moved?", NOW) is None


@given(st.text(max_size=80))
def test_any_text_is_read_without_error(text: str) -> None:
    """Whatever the question, the result is None or a window ending no later than now."""
    window = time_window(text, NOW)
    assert window is None or window[0] <= window[1] <= NOW


def test_time_words_are_the_words_of_each_time_read() -> None:
    """Every expression's words count, and so does a duration question's unit."""
    assert time_words("last Saturday, or was it yesterday?") \
        == {"last", "saturday", "yesterday"}
    assert time_words("how many weeks did the move take") == {"how", "many", "weeks"}
    assert time_words("the last time I moved") == frozenset()


def test_a_duration_question_asks_for_it_in_words_no_session_says() -> None:
    """"Have passed since" asks for a duration: a session holds what happened, not those
    words, so they are time words as the unit is (and "passed" elsewhere is not)."""
    assert time_words("how many weeks have passed since I moved") \
        == {"how", "many", "weeks", "have", "passed", "since"}
    assert time_words("how many days had passed since I started") \
        == {"how", "many", "days", "had", "passed", "since"}
    assert time_words("how many days passed between the two trips") \
        == {"how", "many", "days", "passed"}
    assert time_words("which exam have I passed since March") == frozenset()


@given(st.text(max_size=80))
def test_a_window_is_always_named_by_some_words(text: str) -> None:
    """Whatever the question, a time it is read to name has words, all of them in it."""
    found = time_words(text)
    assert all(word in text.lower() for word in found)
    if time_window(text, NOW) is not None:
        assert found


@given(moments, moments, st.floats(DAY, 1e8))
def test_closeness_is_one_inside_and_falls_outside(moment: float, start: float,
                                                   width: float) -> None:
    """Closeness is 1 inside the window and at most a half a window-width outside it."""
    window = (start, start + width)
    value = closeness(moment, window)
    assert 0.0 <= value <= 1.0
    if start <= moment <= start + width:
        assert value == 1.0
    if moment >= start + 2 * width or moment <= start - width:
        assert value <= 0.5


def test_relative_bound_counts_back_from_now() -> None:
    """``24h`` is a day before ``now``."""
    assert parse_time_bound("24h", now=100_000.0) == Success(100_000.0 - 86_400)


def test_naive_iso_date_is_utc() -> None:
    """A date without a zone is read as UTC midnight."""
    assert parse_time_bound("1970-01-02") == Success(86_400.0)


def test_unreadable_bound_is_rejected_with_guidance() -> None:
    """A bound that is neither a date nor a span says what would work ("last tuesday"
    is read now: the latest Tuesday before today)."""
    result = parse_time_bound("next tuesday")
    assert isinstance(result, Failure)
    assert "7d" in result.failure().reason


@pytest.mark.parametrize("epoch", ["nan", "inf", "-inf", "1e400", "99999999999999",
                                   "253402300800"])
def test_an_epoch_no_session_can_have_is_rejected(epoch: str) -> None:
    """Epoch seconds must fall in years 1-9999: past them a bound filters every
    session out, or none, without a word."""
    result = parse_time_bound(epoch, what="--since")
    assert isinstance(result, Failure)
    assert result.failure().reason.startswith(f"--since {epoch!r} is not a moment")


@pytest.mark.parametrize("year", ["1999", "2026", "2100"])
def test_a_bare_year_is_refused_with_the_date_to_write(year: str) -> None:
    """'--since 2026' would be epoch second 2026 (1970) and keep everything: it is refused,
    naming the date to write instead; a small number ('0', from the start) still reads."""
    result = parse_time_bound(year, what="--since")
    assert isinstance(result, Failure)
    assert f"write {year}-01-01" in result.failure().reason
    assert parse_time_bound("0") == Success(0.0)


def test_an_epoch_in_range_is_read_as_it_is() -> None:
    assert parse_time_bound("1780000000.5") == Success(1_780_000_000.5)


@pytest.mark.parametrize(("question", "days"), [
    # day 100 is Saturday 1970-04-11: last week is Monday March 30th to Sunday April 5th
    ("上周 nginx 超时怎么处理的", (88.0, 95.0)),
    ("先週のDockerの件", (88.0, 95.0)),
    ("지난주 CORS 에러", (88.0, 95.0)),
    ("上个月的部署", (59.0, 90.0)),
    ("3天前的部署", (97.0, 98.0)),
    ("2일 전에 뭐 했지", (98.0, 99.0)),
    ("昨日のビルド", (99.0, 100.0)),
    ("一昨日のビルド", (98.0, 99.0)),
    ("前天的部署", (98.0, 99.0)),
    ("그저께 배포", (98.0, 99.0)),
])
def test_chinese_japanese_and_korean_times_select_their_window(
        question: str, days: tuple[float, float]) -> None:
    """上周, 先週, 지난주 and their kin read as the windows their English words do."""
    window = time_window(question, 100 * DAY)
    assert window is not None
    # a day's window ends just before its next midnight; a span back from now, at now
    assert (window[0] / DAY, round(window[1] / DAY, 9)) == days


@pytest.mark.parametrize("question", ["3000000天前的部署", "99999日前のビルド", "12345일 전 배포"])
def test_a_cjk_count_past_three_digits_is_no_time(question: str) -> None:
    """Only a count's last digits matched: "3000000天前" read as "000天前", today."""
    assert time_window(question, 100 * DAY) is None


def test_cjk_time_words_are_not_searched_for() -> None:
    """The bigrams of a CJK time expression are time words, as "last week"'s words are."""
    assert {"上周"} <= time_words("上周 nginx 超时")
    assert {"지난", "난주"} <= time_words("지난주 CORS 에러")


@pytest.mark.parametrize(("question", "framing"), [
    ("上周以来nginx", {"上周", "周以", "以来"}),
    ("nginx 上周以来", {"上周", "周以", "以来"}),
    ("自从上周 nginx", {"自从", "从上", "上周"}),
    ("从上周起 nginx", {"从上", "上周", "周起"}),
    ("nginx 昨天以来", {"昨天", "天以", "以来"}),
    ("지난주 이후 nginx", {"지난", "난주", "이후"}),
    ("nginx since last week", {"since", "last", "week"}),
    ("nginx since yesterday", {"since", "yesterday"}),
])
def test_a_since_word_with_a_time_is_framing_not_searched(question: str,
                                                          framing: set[str]) -> None:
    """A since word that runs a time on (以来, 自从, 起, 이후, "since") frames the question
    as the time's words do, with the bigrams across their join (周以, 从上): they were
    searched for, lifting any session that says 以来 or "since"; nginx is still searched."""
    words = time_words(question)
    assert framing <= words
    assert "nginx" not in words


@pytest.mark.parametrize("epoch", [10 ** 400, -(10 ** 400), 1e300, -1e12, float("nan")])
def test_a_number_no_session_can_have_is_rejected_as_text_is(epoch: float) -> None:
    """A bound given as a number (library, MCP) is held to the range a written one is; an
    int past a float's range raised OverflowError."""
    for result in (make_request("x", since=epoch), make_request("x", until=epoch),
                   parse_as_of(epoch)):
        assert isinstance(result, Failure)
        assert "is not a moment a session can have" in result.failure().reason


@pytest.mark.parametrize("question", ["what did I do today?", "what broke this morning",
                                      "今天做了什么", "今日のビルド", "오늘 배포"])
def test_today_is_the_day_so_far(question: str) -> None:
    """'today' (今天, 今日, 오늘) reaches from the start of the day (UTC) until now."""
    assert time_window(question, NOW) == (1_685_404_800.0, NOW)


def test_today_as_an_end_names_no_day() -> None:
    """'before today' or 'up to today' is all time until now, not today's window."""
    assert time_window("which airlines did I fly before today?", NOW) is None
    assert time_words("what have I learned up to today") == frozenset()


@pytest.mark.parametrize("hour", [0.5, 11.0, 23.5])
@pytest.mark.parametrize(("phrase", "near", "far"),
                         [("a few days ago", 2, 5), ("a couple of days ago", 1, 3),
                          ("several days ago", 3, 7)])
def test_a_vague_count_of_days_spans_its_stretch_at_any_hour(hour: float, phrase: str,
                                                              near: int, far: int) -> None:
    """"A few days ago" holds every moment two to five days back whatever the hour it is
    asked: read as the third day alone, a session of two days back fell inside it or
    outside by the hour, and the seed suite's answer with it."""
    now = 20_000 * DAY + hour * 3600
    window = time_window(f"the deploy broke {phrase}", now)
    assert window is not None
    start, end = window
    for days in range(near, far + 1):
        assert start <= now - days * DAY <= end, (phrase, hour, days)
    assert not start <= now - (far + 1) * DAY <= end
    today = now - hour * 3600
    assert not start <= today - (near - 1) * DAY + DAY / 2 <= end  # the noon of a nearer day


@pytest.fixture
def zone(request: pytest.FixtureRequest) -> Iterator[str]:
    """The local zone set to the test's parameter (the suite's UTC put back after)."""
    os.environ["TZ"] = request.param
    time.tzset()
    yield request.param
    os.environ["TZ"] = "UTC"
    time.tzset()


@pytest.mark.parametrize(("zone", "text"), [
    ("UTC", "0001-01-01T00:00:00"), ("UTC", "0001-01-01T08:00:00"),
    ("America/Los_Angeles", "0001-01-01T00:00:00"), ("Asia/Tokyo", "0001-01-01T12:00:00"),
    ("Asia/Tokyo", "9999-12-31T23:59:59"), ("America/Los_Angeles", "9999-12-31T12:00:00")],
    indirect=["zone"])
def test_a_local_time_on_the_calendars_first_or_last_day_is_read(zone: str, text: str) -> None:
    """A time without an offset on 0001-01-01 or 9999-12-31 is local time, as on any day:
    Python places none there (it looks a day past the calendar for the offset), so a moment
    a session can have was refused as "not a moment a session can have (0001-01-01 to
    9999-12-31 UTC)", in UTC too."""
    local = datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).timestamp()
    assert parse_time_bound(text) == Success(local)


@pytest.mark.parametrize(("zone", "text"), [
    ("Asia/Tokyo", "0001-01-01T00:00:00"), ("America/Los_Angeles", "9999-12-31T23:59:59")],
    indirect=["zone"])
def test_a_local_time_before_the_year_1_or_past_9999_utc_is_still_refused(
        zone: str, text: str) -> None:
    """East of UTC the year 1's first hours come before its first UTC moment; west of it,
    9999's last hours after its last: no session can have them."""
    assert isinstance(parse_time_bound(text), Failure)


def test_the_last_week_spans_back_and_last_week_is_the_calendars() -> None:
    """'In the last week', 'over the last month' are the days back until now, weighed and
    listed alike; 'last week' and 'the last weekend' stay the calendar's."""
    sunday = datetime(2023, 6, 4, 12, tzinfo=ZoneInfo("UTC")).timestamp()
    assert time_window("nginx errors in the last week", sunday) == (sunday - 7 * DAY, sunday)
    assert time_window("nginx errors over the last month", sunday) == (sunday - 30 * DAY, sunday)
    assert named_times("what did I do in the last week?", sunday).window == (
        sunday - 7 * DAY, sunday)
    monday = datetime(2023, 5, 29, tzinfo=ZoneInfo("UTC")).timestamp()
    assert named_times("what did I do last week?", sunday).window == (
        datetime(2023, 5, 22, tzinfo=ZoneInfo("UTC")).timestamp(), _before(monday))
    assert named_times("what did I do the last weekend?", sunday).window == (
        datetime(2023, 5, 27, tzinfo=ZoneInfo("UTC")).timestamp(), _before(monday))
