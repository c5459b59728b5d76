"""Parts of a month a question names: "the first weekend in March", "the last week of
February", "the end of last month", 上个月底, 先月末, 지난달 말, 이번 달 초 (上上个月底: the
month before last's).

A weekend of a month is a Saturday in it and the Sunday after ("the last weekend of
February 2026" is 28 February and 1 March); a week of it seven days (the first is the 1st
to the 7th, the last its last seven); its start or end ("early March", 月初, 월초; "the
end of last month", 月底, 月末, 월말) its first or last seven days. A named month is the
latest whose part had begun by now (or the year written), as "in March" is read
(:mod:`~harkback.stages.calendar_words`). 月末 or 월말 alone, as 周末 alone, is a topic
("the month-end close"): only a month marked as last or this one is a time.

>>> DAY = 86400.0
>>> now = 1772712000.0  # Thursday 2026-03-05 12:00 UTC
>>> [(a / DAY, round(b / DAY)) for _, (a, b) in month_parts("the last weekend of february", now)]
[(20512.0, 20514)]
>>> [(a / DAY, round(b / DAY)) for _, (a, b) in month_parts("先月末のデプロイ", now)]
[(20506.0, 20513)]
"""

from __future__ import annotations

import bisect
import calendar
import math
import re
from datetime import date, timedelta

from harkback.stages.local_days import ONE_DAY, day_start, last_moment, local_date
from harkback.stages.weekend_words import MONTHS, NOT_TWICE

_ORDINALS = ("first", "second", "third", "fourth", "last")
_NAMED = rf"(?:the\s+)?({'|'.join(MONTHS)})(?:,?\s+(\d{{4}}))?"
_WHICH = rf"(?:{_NAMED}|(last|previous|this)\s+month)"
_ENGLISH = (
    re.compile(rf"\b(first|second|third|fourth|last|1st|2nd|3rd|4th)\s+(weekend|week)\s+"
               rf"(?:of|in)\s+{_WHICH}\b"),
    re.compile(rf"\b(?:(start|beginning|end)\s+of|(early|late))\s+{_WHICH}\b"),
)
# Words a month follows, never a verb: "in early may", "since late may".
_BEFORE_MONTH = re.compile(r"(?<![a-z])(?:in|since|until|till|by|during|from|before|after)"
                           r"\s+$")
# The month first, then its start (初, 初め, 초) or end (底, 末, 말): not 말 of a verb
# (지난달 말했던, what was said last month) or 초 of another word (초대, 초과).
# The month before last too: 上上个月底, 先々月末, 지지난달 말.
_CJK = re.compile(NOT_TWICE + r"(?:((?:上上?|先々?)(?:个月|個月|月)|(?:지?지난|저번)\s?달)"
                  r"|(这个月|這個月|本月|今月|이번\s?달))\s?(初め|初|底|末|초(?![대과청기점])|말(?![하했한씀고]))")


def month_parts(text: str, now: float) -> list[tuple[re.Match[str], tuple[float, float]]]:
    """Each part of a month named in lower-cased ``text``, with its window (epoch seconds,
    local days, ending no later than ``now``); a part not begun by then names nothing."""
    today = local_date(now)
    found = []
    for match, days in _english(text, today) + _asian(text, today):
        if days is not None and day_start(days[0]) <= now:
            found.append((match, (day_start(days[0]), min(last_moment(days[1]), now))))
    return found


def part_spans(text: str) -> list[tuple[int, int]]:
    """Where in lower-cased ``text`` a month part is named, begun or not: the month or week
    inside one ("last month" of "the end of last month") is read as part of it only.

    >>> part_spans("what did i do at the end of last month")
    [(21, 38)]
    """
    today = date(2000, 1, 1)  # any day: where they are said does not turn on it
    return merged([match.span() for match, _ in _english(text, today) + _asian(text, today)])


def within(at: int, parts: list[tuple[int, int]]) -> bool:
    """Whether the expression starting at ``at`` starts inside one of ``parts`` (as
    :func:`merged` gives them), by halving: a question of 10,000 time words took seconds
    checking each against each.

    >>> within(5, [(0, 3), (4, 9)]), within(3, [(0, 3), (4, 9)])
    (True, False)
    """
    index = bisect.bisect_right(parts, (at, math.inf)) - 1
    return index >= 0 and at < parts[index][1]


def merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, those that overlap made one (what :func:`within` looks in).

    >>> merged([(4, 9), (0, 3), (5, 12)])
    [(0, 3), (4, 12)]
    """
    joined: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if joined and start < joined[-1][1]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined


Days = tuple[date, date]


def _english(text: str, today: date) -> list[tuple[re.Match[str], Days | None]]:
    found: list[tuple[re.Match[str], Days | None]] = []
    for match in _ENGLISH[0].finditer(text):
        which = _ORDINALS[("1st", "2nd", "3rd", "4th").index(match.group(1))] \
            if match.group(1)[0].isdigit() else match.group(1)
        part = (which, match.group(2))
        found.append((match, _part_of(part, match.group(3, 4, 5), today)))
    for match in _ENGLISH[1].finditer(text):
        if match.group(2) and match.group(3) == "may" and not match.group(4) \
                and not _BEFORE_MONTH.search(text[max(0, match.start() - 10):match.start()]):
            continue  # "an early may help": the verb; "in early may" is the month
        edge = "first" if (match.group(1) or match.group(2)) in ("start", "beginning",
                                                                 "early") else "last"
        found.append((match, _part_of((edge, "days"), match.group(3, 4, 5), today)))
    return found


def _asian(text: str, today: date) -> list[tuple[re.Match[str], Days | None]]:
    found: list[tuple[re.Match[str], Days | None]] = []
    for match in _CJK.finditer(text):
        edge = "first" if match.group(3) in ("初め", "初", "초") else "last"
        relative = "this" if not match.group(1) else (
            "before last" if match.group(1)[:2] in ("上上", "先々", "지지") else "last")
        found.append((match, _part_of((edge, "days"), (None, None, relative), today)))
    return found


def _part_of(part: tuple[str, str], which: tuple[str | None, ...], today: date
             ) -> Days | None:
    # The days of ``part`` (an ordinal and weekend/week/days) of the month ``which`` names:
    # (month name, year written, "last"/"previous"/"this").
    name, year, relative = which
    if relative is not None:
        first = today.replace(day=1)
        for _ in range(("this", "last", "before last").index(relative)):
            if first == date.min:
                return None  # no month before the calendar's first
            first = (first - ONE_DAY).replace(day=1)
        return _days(part, first.year, first.month)
    month = MONTHS.index(name or "") + 1
    if year is not None:
        return _days(part, int(year), month)
    for back in (0, 1):  # the latest begun by today
        days = _days(part, today.year - back, month)
        if days is not None and days[0] <= today:
            return days
    return None


def _days(part: tuple[str, str], year: int, month: int) -> Days | None:
    """The first and last day of ``part`` of that month; None past the calendar's ends.

    >>> _days(("first", "weekend"), 2026, 3)
    (datetime.date(2026, 3, 7), datetime.date(2026, 3, 8))
    >>> _days(("last", "week"), 2026, 2)
    (datetime.date(2026, 2, 22), datetime.date(2026, 2, 28))
    """
    if not 1 <= year <= 9999:
        return None
    length = calendar.monthrange(year, month)[1]
    which, unit = part
    try:
        if unit == "weekend":
            saturdays = [d for d in range(1, length + 1)
                         if date(year, month, d).weekday() == 5]
            saturday = date(year, month, saturdays[_ORDINALS.index(which) if which != "last"
                                                   else -1])
            return saturday, saturday + ONE_DAY
        start = 1 + 7 * _ORDINALS.index(which) if which != "last" else length - 6
        return date(year, month, start), date(year, month, start) + timedelta(days=6)
    except (OverflowError, IndexError):  # no fifth Saturday; the Sunday after 9999-12-25
        return None
