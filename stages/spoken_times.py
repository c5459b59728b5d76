"""Times written in words, as ``--since``/``--until`` values take them: ``yesterday``,
``last week``, ``3 days ago`` (:func:`spoken_time`), and any time a question names alone,
上周, 先週, 지난주, "the week before last" (:func:`named_time`).

>>> DAY = 86400.0
>>> spoken_time("yesterday", 10.5 * DAY) / DAY
9.0
"""

from __future__ import annotations

import math
import re
from datetime import date

from harkback.stages.calendar_words import calendar_windows, previous_periods
from harkback.stages.local_days import day_start, days_before, last_moment
from harkback.stages.named_times import named_times
from harkback.stages.query import topic_tokens
from harkback.stages.record_checks import LATEST_EPOCH
from harkback.stages.weekday_words import WEEKDAYS
from harkback.stages.when import COUNT, DAY, UNIT_DAYS, count_of, latest_weekday


def held_last_moment(day: date) -> float:
    """The last moment of the local ``day``, just before the next day's midnight: an upper
    bound takes moments up to it inclusive, and a session that starts at midnight belongs
    to the day it starts, not to the day before as well. For 9999-12-31 in UTC, the last
    second a session can have (:data:`~harkback.stages.record_checks.LATEST_EPOCH`): a
    moment after it, which the request refused as an internal error, holds no session.

    >>> held_last_moment(date(9999, 12, 31)) == LATEST_EPOCH  # with TZ=UTC
    True
    """
    return min(last_moment(day), LATEST_EPOCH)


# A bound counts back to the minute (--since "3 hours ago" as --since 3h), where a
# question's "3 hours ago" is a window about then and its minutes are not read at all.
_SPOKEN_UNIT = r"(day|week|month|year|hour|minute)s?"
_SPOKEN_DAYS = UNIT_DAYS | {"hour": 1 / 24, "minute": 1 / 1440}
_SPOKEN_AGO = re.compile(rf"^{COUNT}\s+{_SPOKEN_UNIT}\s+ago$")
_SPOKEN_LAST = re.compile(rf"^(?:last|past|previous)\s+(?:{COUNT}\s+)?{_SPOKEN_UNIT}$")
_SPOKEN_PERIOD = re.compile(r"^(this|last|previous)\s+(?:week|month|year|weekend)$")
_SPOKEN_WEEKDAY = re.compile(rf"^(?:(?:last|on)\s+)?({'|'.join(WEEKDAYS)})$")


def spoken_time(text: str, now: float, *, end: bool = False) -> float | None:
    """The moment a few English words name, counted back from ``now``; None if not read.

    ``today``, ``yesterday`` and a weekday (``tuesday``, ``last tuesday``: the latest
    before today) are the start of that local day (:mod:`local_days
    <harkback.stages.local_days>`), or with ``end`` its end: ``--until yesterday`` takes
    in all of yesterday. So are ``last week``, ``last month`` and ``last year`` of the
    calendar's week (from Monday), month or year before the current one, as a question
    reads them (:func:`~harkback.stages.calendar_words.previous_periods`), and ``last
    weekend`` of that week's Saturday and Sunday; ``this week`` (month, year, weekend)
    starts at the current one's first day and ends at ``now`` (``this weekend`` on a
    weekday: the Saturday and Sunday just past, as a question reads it). ``3 days
    ago`` and ``past week`` are that long before ``now`` (a month is 30 days, a year 365),
    and so are ``3 hours ago``, ``past 2 hours`` and ``30 minutes ago``.

    >>> DAY = 86400.0
    >>> [spoken_time(t, 10.5 * DAY) / DAY for t in ("today", "yesterday", "2 days ago")]
    [10.0, 9.0, 8.5]
    >>> spoken_time("past week", 10 * DAY) / DAY, spoken_time("a month ago", 40 * DAY) / DAY
    (3.0, 10.0)
    >>> [(DAY - spoken_time(t, DAY)) / 60 for t in ("3 hours ago", "past hour", "5 minutes ago")]
    [180.0, 60.0, 5.0]
    >>> now = 20519.5 * DAY  # Saturday 2026-03-07, noon UTC: last week is 23 Feb to 1 Mar
    >>> spoken_time("last week", now) / DAY, round(spoken_time("last week", now, end=True) / DAY)
    (20507.0, 20514)
    >>> spoken_time("this week", now) / DAY, spoken_time("this week", now, end=True) / DAY
    (20514.0, 20519.5)
    >>> [round(spoken_time("last weekend", now, end=e) / DAY) for e in (False, True)]
    [20512, 20514]
    >>> 9.99 < spoken_time("yesterday", 10.5 * DAY, end=True) / DAY < 10.0  # before midnight
    True
    >>> spoken_time("whenever", 0.0) is None
    True
    """
    words = " ".join(text.lower().split())
    if words == "now":
        return now
    weekday = _SPOKEN_WEEKDAY.match(words)
    if words in ("today", "yesterday") or weekday:
        day = (latest_weekday(weekday.group(1), now) if weekday
               else days_before(now, 0 if words == "today" else 1))
        return held_last_moment(day) if end else day_start(day)
    period = _SPOKEN_PERIOD.match(words)
    if period:
        # The calendar's, as for "yesterday": seven days back left out the start of the
        # week that an agent passed on from "how did we fix it last week?".
        read = calendar_windows if period.group(1) == "this" else previous_periods
        # A weekend before the calendar's first (asked in the year 1's first week) is
        # none a session can have.
        ((_, (start, stop)),) = read(words, now) or [((0, 0), (-math.inf, -math.inf))]
        return stop if end else start
    ago = _SPOKEN_AGO.match(words)
    if ago:
        return now - count_of(ago.group(1)) * _SPOKEN_DAYS[ago.group(2)] * DAY
    last = _SPOKEN_LAST.match(words)
    if last:
        count = count_of(last.group(1)) if last.group(1) else 1
        return now - count * _SPOKEN_DAYS[last.group(2)] * DAY
    return None


_LONGEST_NAMED = 200
"""The most characters a time named alone is read in ("先週の月曜から水曜まで" has 11): a
longer bound is no time, and is not read through (a pasted page would take seconds)."""


def named_time(text: str, now: float, *, end: bool = False) -> float | None:
    """The start (with ``end``: the end) of the time ``text`` names as a question would
    name it alone (:func:`~harkback.stages.named_times.named_times`): 上周, 先週, 지지난주,
    "the week before last", "from last Monday to Wednesday"; None when ``text`` says
    anything else, or names no such moment ("until Wednesday" has no start).

    >>> DAY = 86400.0
    >>> now = 1773921600.0  # Thursday 2026-03-19 12:00 UTC
    >>> [named_time(t, now) / DAY for t in ("上周", "先週", "지난주")]  # Monday 9 March
    [20521.0, 20521.0, 20521.0]
    >>> round(named_time("上上周", now, end=True) / DAY, 6)  # just before Monday 9 March
    20521.0
    >>> named_time("上周 nginx", now) is None
    True
    """
    if len(text) > _LONGEST_NAMED:
        return None
    said = named_times(text, now)
    if said.window is None or topic_tokens(said.rest):
        return None
    moment = said.window[1] if end else said.window[0]
    return moment if math.isfinite(moment) else None
