"""Which "last week" names the calendar's week: "last week" and "the week before last" (a
month and a year alike) are the calendar's periods one and two back, as a listing and the
ranker read them (:func:`calendar_period`); "in the last week", "over the last month" the
days back until now (:func:`spans_back`), as "the past week" is.

>>> DAY = 86400.0
>>> [round(t / DAY, 2) for t in calendar_period("week", 20520.5 * DAY)]  # Sun 2026-03-08
[20507.0, 20514.0]
"""

from __future__ import annotations

import re

from harkback.stages.local_days import previous_period
from harkback.stages.weekend_words import weekend_time

# "The week before last" is the calendar week before last week (a month and a year alike);
# "the week before last release" is the week before that release: searched.
BEFORE_LAST = re.compile(r"\b(week|month|year)\s+before\s+last\b")
_THE = re.compile(r"\bthe\s+$")


def before_last(text: str) -> list[re.Match[str]]:
    """Each "week (month, year) before last" of lower-cased ``text`` that names a time, not
    the one before a last thing ("the week before last release").

    >>> [m.group(0) for m in before_last("the week before last, not the week before last deploy")]
    ['week before last']
    """
    return [match for match in BEFORE_LAST.finditer(text) if weekend_time(match)]


def spans_back(match: re.Match[str]) -> bool:
    """Whether a "last week" (month, year) read in ``match.string`` follows "the": "in the
    last week", "over the last month" are the seven (thirty) days back until now, as "the
    past week" is (asked on a Sunday, this week's days); "last week" alone is the calendar's.

    >>> [spans_back(m) for m in re.finditer("last week", "in the last week, not last week")]
    [True, False]
    """
    if not match.group(0).startswith("last"):
        return False
    # Only the words just before are read: searched for in all the text before it, each
    # "last week" of a pasted page read that page again (10,000 characters: ~50 ms).
    before = match.string[:match.start()]
    return _THE.search(before, max(0, len(before.rstrip()) - 4)) is not None


def calendar_period(unit: str, now: float, back: int = 1) -> tuple[float, float] | None:
    """The calendar week, month or year ``back`` before now's, as the ranker weighs "last
    week" (1) and "the week before last" (2): the periods a listing of them covers
    (:func:`~harkback.stages.local_days.previous_period`); None for a day, weighed as the
    days back. "Last year" asked in December is last January to December, not the 365 days
    back, which are nearly all this year's.

    >>> DAY = 86400.0
    >>> [round(t / DAY, 2) for t in calendar_period("week", 20520.5 * DAY, 2)]  # Sun 03-08
    [20500.0, 20507.0]
    >>> [round(t / DAY, 2) for t in calendar_period("year", 20520.5 * DAY)]  # 2025
    [20089.0, 20454.0]
    >>> calendar_period("day", 20520.5 * DAY) is None
    True
    """
    return previous_period(unit, now, back) if unit in ("week", "month", "year") else None
