"""Calendar days in the local time zone (``TZ``), the zone results show their times in.

"Today", "yesterday", "3 days ago", a date and "this week" name days as the person asking
lives them: at 22:00 in UTC-8, "today" is that evening's date, not the UTC day that has
already begun. A day starts at local midnight and ends at the next one (23 or 25 hours
across a daylight-saving change). With ``TZ=UTC`` (servers, the test suite) a day is the
UTC day.

>>> import time
>>> day = local_date(time.time())
>>> day_start(day) <= time.time() < day_end(day)
True
"""

from __future__ import annotations

import calendar
import math
from datetime import UTC, date, datetime, timedelta

ONE_DAY = timedelta(days=1)


def local_date(moment: float) -> date:
    """The local calendar date ``moment`` (epoch seconds) falls on; a moment past what the
    platform converts (beyond the year 9999 locally) is held to the calendar's last day.

    >>> local_date(1e20)
    datetime.date(9999, 12, 31)
    """
    try:
        return datetime.fromtimestamp(moment).date()
    except (OverflowError, OSError, ValueError):
        return date.max if moment > 0 else date(1970, 1, 1)


def day_start(day: date) -> float:
    """Epoch seconds of local midnight starting ``day``."""
    # A naive datetime's timestamp() is read in the local zone, its offset that day's.
    return datetime(day.year, day.month, day.day).timestamp()


def day_end(day: date) -> float:
    """Epoch seconds of local midnight ending ``day`` (the next day's start)."""
    try:
        return day_start(day + ONE_DAY)
    except OverflowError:  # 9999-12-31 has no next day: its end is a day after its start
        return day_start(day) + 86400.0


def last_moment(day: date) -> float:
    """The last moment of the local ``day``, just before the next day's midnight: a window
    taken up to its end inclusively holds a session that starts at midnight in the day it
    starts only, not in the day before as well.

    >>> day = date(2026, 3, 4)
    >>> day_start(day) < last_moment(day) < day_end(day)
    True
    """
    return math.nextafter(day_end(day), -math.inf)


def at_hour(day: date, hour: int) -> float:
    """Epoch seconds of ``hour`` o'clock local time on ``day`` (18: the evening, however
    long the day is across a daylight-saving change).

    >>> at_hour(date(1970, 1, 2), 6)  # with TZ=UTC
    108000.0
    """
    return datetime(day.year, day.month, day.day, hour).timestamp()


def months_before(day: date, count: int) -> date | None:
    """The date ``count`` months before ``day``, on its day of the month or the last one
    that month has; None before the calendar's start.

    >>> months_before(date(2026, 3, 31), 1), months_before(date(2028, 2, 29), 12)
    (datetime.date(2026, 2, 28), datetime.date(2027, 2, 28))
    """
    year, month = divmod(day.year * 12 + day.month - 1 - count, 12)
    if year < 1:
        return None
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def previous_period(unit: str, now: float, back: int = 1) -> tuple[float, float] | None:
    """The calendar week (Monday to Sunday), month or year ``back`` before the one ``now``
    falls in, from its first moment to its last, as "last week", 先週, 지난달 (``back`` 1)
    or "the week before last", 上上个月, 一昨年 (2) name it; None for another unit or
    before the calendar's start.

    Asked on a Sunday, "last week" is not the seven days back, which are nearly all this
    week's: weighed so, a look-alike of Wednesday came above the answer of last Friday.

    >>> [round(t / 86400, 2) for t in previous_period("week", 20520.5 * 86400)]  # Sun 2026-03-08
    [20507.0, 20514.0]
    >>> [round(t / 86400, 2) for t in previous_period("month", 1772712000.0, 2)]  # January
    [20454.0, 20485.0]
    """
    today = local_date(now)
    try:
        if unit == "week":
            first = today - timedelta(days=today.weekday() + 7 * back)
            following = first + timedelta(days=7)
        elif unit == "month":
            first = today.replace(day=1)
            for _ in range(back):
                first = (first - ONE_DAY).replace(day=1)
            following = (first + timedelta(days=31)).replace(day=1)
        elif unit == "year":
            first, following = date(today.year - back, 1, 1), date(today.year - back + 1, 1, 1)
        else:
            return None
    except (OverflowError, ValueError):  # asked in the year 1: no period before it
        return None
    return day_start(first), last_moment(following - ONE_DAY)


def days_before(moment: float, count: int) -> date:
    """The local date ``count`` days before the one ``moment`` falls on (0: that date)."""
    return local_date(moment) - timedelta(days=count)


def zone_label(offset: timedelta | None) -> str:
    """An offset from UTC as results name it: ``UTC``, ``UTC-08:00``, ``UTC+05:30``.

    >>> zone_label(timedelta(hours=-8)), zone_label(timedelta(hours=5, minutes=30))
    ('UTC-08:00', 'UTC+05:30')
    """
    minutes = round((offset or timedelta()).total_seconds() / 60)
    if minutes == 0:
        return "UTC"
    sign = "-" if minutes < 0 else "+"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def local_iso(moment: float | None) -> str:
    """``moment`` as an ISO time in the local zone, with its offset:
    ``2026-03-04T00:00:00-08:00`` (``Z`` when that is UTC; in UTC when the local zone
    cannot show it, the year 10000 there).

    >>> local_iso(None)
    'any time'
    """
    if moment is None:
        return "any time"
    try:
        shown = datetime.fromtimestamp(moment).astimezone().isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError):
        shown = datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")
    return shown.replace("+00:00", "Z")
