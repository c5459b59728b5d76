"""Calendar names in a question: a date, a month, or this week, month or year.

:func:`~harkback.stages.when.time_window` reads times counted back from now ("two weeks
ago"); these name a stretch of the calendar instead, in the local time zone
(:mod:`~harkback.stages.local_days`, as ``--since 2026-03-01`` reads a date):
``on 2026-03-04``, ``March 4th``, ``in March`` (the latest March begun by then, or
``in March 2025``), ``this week`` (from Monday), ``this weekend`` (its Saturday and Sunday;
on a weekday the ones just past: :func:`~harkback.stages.weekend_words.latest_weekend`),
``this month``, ``this year`` and their Chinese, Japanese and Korean words (本周, 今週,
이번 주, 这周末, 今週末, 이번 주말, 这个月, 今月, 이번 달, 今年, 올해).
A stretch not begun by now names nothing; the word before one bounds it: "since March" (or
after, from) runs from March until now, "until 2026-03-04" (before, till, up to) names no
stretch to list, and a date or month past the calendar's ends ("in march 0000") none.

"Last week", "last month" and "last year" (上周, 先月, 작년 ...) are the calendar period
before the current one, "last weekend" (上周末 ...) that week's Saturday and Sunday
(:func:`previous_periods`).

Only a question of a time alone reads them ("what did I do in March?" lists March's
sessions, :func:`~harkback.stages.recent.browse_window`); the ranker does not: lifting
the sessions of a month a question names cost LongMemEval's pooled store 2 questions of
237 at five (any@5 0.667 to 0.658 as published), other people's sessions of that month
rising with the one meant.

>>> DAY = 86400.0
>>> now = 1772712000.0  # Thursday 2026-03-05 12:00 UTC
>>> [(start / DAY, end / DAY) for _, (start, end) in calendar_windows("in march", now)]
[(20513.0, 20517.5)]
>>> [(start / DAY, end / DAY) for _, (start, end) in calendar_windows("this week", now)]
[(20514.0, 20517.5)]
"""

from __future__ import annotations

import bisect
import math
import re
from datetime import date, timedelta

from harkback.stages.cjk_times import (
    CJK_LAST_MONTH,
    CJK_LAST_WEEK,
    CJK_LAST_YEAR,
    CJK_MONTH_BEFORE_LAST,
    CJK_WEEK_BEFORE_LAST,
    CJK_YEAR_BEFORE_LAST,
    NOT_MONTH,
    NOT_WEEK,
    ZH_NOT_THIS,
    ZH_NOT_WEEK,
)
from harkback.stages.last_periods import before_last, spans_back
from harkback.stages.local_days import (
    day_start,
    last_moment,
    local_date,
    previous_period,
)
from harkback.stages.month_parts import merged, month_parts, part_spans, within
from harkback.stages.since_words import runs_on
from harkback.stages.text.tokens import tokens
from harkback.stages.weekday_words import weekday_windows
from harkback.stages.weekend_words import (
    CJK_LAST_WEEKEND,
    CJK_WEEKEND_BEFORE_LAST,
    MONTHS,
    latest_weekend,
    weekend,
    weekend_time,
)
from harkback.stages.when import blanked

_MONTHS = MONTHS
_MONTH = "|".join(_MONTHS)
_DAY_NUMBER = r"(\d{1,2})(?:st|nd|rd|th)?"
# "may" and "march" are also verbs: a month is read only beside a day number ("may 4",
# "4th of may") or after in/during/since/of ("in may", "in march 2025").
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_DAY = re.compile(rf"\b({_MONTH})\s+{_DAY_NUMBER}\b(?!\s*(?:am|pm|:))(?:,?\s+(\d{{4}}))?")
_DAY_OF_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)\s+(?:of\s+)?({_MONTH})\b"
                           rf"(?:,?\s+(\d{{4}}))?")
_MONTH_AFTER = re.compile(rf"\b(?:in|during|since|of)\s+({_MONTH})\b(?:\s+(\d{{4}}))?")
"""A month after "in", "since", "of" ... ("in march"): not inside a day read ("march 2")."""
_THIS = re.compile(r"\bthis\s+(week|month|year|weekend)\b")
# The weekend first: it holds the week's words (今週 of 今週末).
# Not 本周 of 日本周一 (Japan on Monday) or 版本周五 (the version on Friday), 本周期 (this
# cycle), 이번 주문 (this order), nor 今年度 (Japan's fiscal year, from April: asked in
# March, mostly last year). 这礼拜, 这个礼拜 and 这一周 are 这周 (this week).
_THIS_CJK = re.compile(
    r"(?=[本这這今이올])"  # the first words, looked for first: the rest are tried only there
    rf"({ZH_NOT_THIS}本周末|这一?周末|這一?週末|这个周末|這個週末|今週末|이번\s?주말)"
    rf"|((?:{ZH_NOT_THIS}本周|这一?周|這一?週){ZH_NOT_WEEK}|这一?个星期|這一?個星期|今週"
    rf"|这个?礼拜|這個?禮拜|이번\s?주{NOT_WEEK})|(这个月|這個月|本月|今月|이번\s?달{NOT_MONTH})"
    r"|(今年(?!度)|올해)")
PATTERNS = (_DATE, _MONTH_DAY, _DAY_OF_MONTH, _MONTH_AFTER, _THIS, _THIS_CJK)
"""Each calendar expression read, in the order :func:`calendar_windows` tries them."""


def _day(year: int, month: int, day: int) -> float | None:
    try:
        return day_start(date(year, month, day))
    except (ValueError, OverflowError, OSError):  # 2026-02-30, a 13th month
        return None


def _month(year: int, month: int) -> tuple[float, float] | None:
    start, end = _day(year, month, 1), _day(*((year + 1, 1) if month == 12
                                              else (year, month + 1)), 1)
    # None past the calendar's ends ("in march 0000", "in december 9999"); the window ends
    # just before the next month's midnight, which starts that month only
    return None if start is None or end is None else (start, math.nextafter(end, -math.inf))


def _whole_day(year: int, month: int, day: int) -> tuple[float, float] | None:
    start = _day(year, month, day)
    return None if start is None else (start, last_moment(date(year, month, day)))


def _latest_year(month: int, day: int, today: date) -> int:
    # The latest year in which that month and day had begun by today.
    return today.year if (month, day) <= (today.month, today.day) else today.year - 1


# Words "may" the verb never follows, "may" the month does with a day ("since may 2"); the
# "until" words among them, and "between", so that a range's end or an end alone is a day
# too; "and" only after a day ("between may 2 and may 4", "on may 1 and may 3"), as the
# verb follows it too ("3 replicas and may 2 of them fail").
_MAY_DAY = re.compile(r"(?:\b(?:on|since|after|from|to|before|until|till|through|thru"
                      r"|between)|\d(?:st|nd|rd|th)?\s+and)\s+$")
# "May" and a day before a range's other end is the month too: "may 2 to may 4", "may 30
# - june 2".
_MAY_TO = re.compile(rf"\s*(?:(?:to|until|till|through|thru|and)\s+|[-–~]\s*)(?:{_MONTH})\s+\d")


def _window(match: re.Match[str], today: date) -> tuple[float, float] | None:
    groups = match.groups()
    if match.re is _DATE:
        return _whole_day(int(groups[0]), int(groups[1]), int(groups[2]))
    if match.re in (_MONTH_DAY, _DAY_OF_MONTH):
        name, number = (groups[0], groups[1]) if match.re is _MONTH_DAY \
            else (groups[1], groups[0])
        if name == "may" and match.re is _MONTH_DAY and match.group(0)[3:].strip().isdigit() \
                and not _MAY_DAY.search(match.string, max(0, match.start() - 12),
                                        match.start()) \
                and not _MAY_TO.match(match.string, match.end()):
            return None  # "you may 2 times": "may 2nd", "on may 2", "may 2 to may 4" the month
        month, day = _MONTHS.index(name) + 1, int(number)
        year = int(groups[2]) if groups[2] else _latest_year(month, day, today)
        return _whole_day(year, month, day)
    if match.re is _MONTH_AFTER:
        month = _MONTHS.index(groups[0]) + 1
        return _month(int(groups[1]) if groups[1] else _latest_year(month, 1, today), month)
    unit = groups[0] if match.re is _THIS else _UNITS[next(i for i, g in enumerate(groups) if g)]
    if unit == "weekend":  # this week's once begun; on a weekday the one just past
        return latest_weekend(today)
    if unit == "week":
        return (day_start(today - timedelta(days=today.weekday())), math.inf)
    if unit == "month":
        return (day_start(today.replace(day=1)), math.inf)
    return (day_start(date(today.year, 1, 1)), math.inf)


_UNITS = ("weekend", "week", "month", "year")
"""The period each group of a CJK pattern (``_THIS_CJK``, ``_PREVIOUS``') names."""

UNTIL_WORDS = r"\buntil|\btill|\bup\s+to|\bthrough|\bthru|直到|一直到|截至|截止到|截止"
"""The words before a time that end a stretch with it ("until Wednesday"), as a range
(:mod:`~harkback.stages.time_ranges`) and a time alone read them: one list, so that a word
ends both or neither ("thru" joined a range's two ends, but alone was no "until"); 截至,
截止到 (as of: 截至上周三) are Chinese until words."""
_UNTIL = re.compile(rf"(?:\bbefore|{UNTIL_WORDS})\s*(?:the\s+)?$")
# "What was I up to last week?" asks what I was doing then: no "until".
DOING = re.compile(r"\b(?:was|were|am|is|are|been|be)\s+(?:(?:i|we|you|they|he|she|it)\s+)?"
                   r"up\s+to\s*$")


def _bounded(match: re.Match[str], window: tuple[float, float] | None
             ) -> tuple[float, float] | None:
    """``window`` as the words before the expression bound it: "since March" is March
    on, "until 2026-03-04" names no stretch to list (as "before today" does not)."""
    if window is None:
        return None
    if match.group(0).startswith("since"):
        return (window[0], math.inf)
    return bounded_by(match.string, match.span(), window)


def bounded_by(text: str, span: tuple[int, int], window: tuple[float, float]
               ) -> tuple[float, float] | None:
    """``window``, of an expression at ``span`` in ``text``, as the words around it bound
    it: from it on after "since" (after, from; or before 以来, から, 부터), none after
    "until" (before, till).

    >>> bounded_by("since yesterday", (6, 15), (1.0, 2.0))
    (1.0, inf)
    >>> bounded_by("先週から", (0, 2), (1.0, 2.0))
    (1.0, inf)
    >>> bounded_by("until monday", (6, 12), (1.0, 2.0)) is None
    True
    >>> bounded_by("what was i up to monday", (17, 23), (1.0, 2.0))  # doing, not until
    (1.0, 2.0)
    """
    if runs_on(text, span):
        return (window[0], math.inf)
    before = text[max(0, span[0] - 40):span[0]]  # the words just before, not all of them
    return None if _UNTIL.search(before) and not DOING.search(before) else window


Span = tuple[int, int]
"""Where an expression starts and ends in the text it is read in."""


def calendar_windows(text: str, now: float, *, bounded: bool = True
                     ) -> list[tuple[Span, tuple[float, float]]]:
    """Each calendar expression of lower-cased ``text`` with its window ``(start, end)``
    (epoch seconds, the end no later than ``now``), by where it is in ``text``; unless
    ``bounded`` is False, as the words around it bound it (:func:`bounded_by`)."""
    today = local_date(now)
    # A month part first: "in march" of "the first weekend in march" is read in it only.
    # The words around it bound it as they bound the rest ("since the end of last month").
    found = [(match.span(), (window[0], min(window[1], now)))
             for match, part in month_parts(text, now)
             if (window := bounded_by(text, match.span(), part) if bounded else part)]
    # A month part or a day of a week holds its month or week ("on monday this week" is
    # that Monday, not the week).
    parts = part_spans(text)
    weeks_read = False
    dates: list[Span] = []  # a day of a month: its month is read in it only
    for pattern in PATTERNS:
        days = merged(dates)  # all read by then: the day patterns come first
        for match in pattern.finditer(text):
            if pattern is _MONTH_AFTER and _overlaps(match.span(), days):
                continue  # "the 4th of march", "since march 2": the 4th, the 2nd on
            if pattern in (_THIS, _THIS_CJK) and not weeks_read:
                # Read only once a this-word is: most text has none.
                parts = merged(parts + [day.span() for day, _ in weekday_windows(text, now)])
                weeks_read = True
            said = _window(match, today)
            # Only a day read holds its month: "in may 3 times" (may the verb) and "the
            # 31st of february" name no day, and are read as the month they hold.
            if pattern in (_DATE, _MONTH_DAY, _DAY_OF_MONTH) and said is not None:
                dates.append(match.span())
            window = _bounded(match, said) if bounded else said
            if window is not None and window[0] <= now and not within(match.start(), parts):
                found.append((match.span(), (window[0], min(window[1], now))))
    return found


def _overlaps(span: Span, spans: list[Span]) -> bool:
    """Whether ``span`` overlaps one of ``spans`` (as :func:`merged` gives them), by
    halving: the one that starts last before its end is the only one to look at.

    >>> _overlaps((0, 11), [(6, 13)]), _overlaps((0, 5), [(6, 13)])
    (True, False)
    """
    index = bisect.bisect_left(spans, (span[1],)) - 1
    return index >= 0 and spans[index][1] > span[0]


# Each period named as last (one back) or the one before it (two back): the groups of
# the CJK pattern are _UNITS' once and then again for the one before last.
_PREVIOUS = (
    re.compile(r"\b(?:last|previous)\s+(week|month|year|weekend)\b"),
    # The first words of them all, looked for first: the rest are tried only there.
    re.compile(r"(?=[上先지저去昨작一お재前])"
               rf"(?:({CJK_LAST_WEEKEND.pattern})|({CJK_LAST_WEEK})|({CJK_LAST_MONTH})"
               rf"|({CJK_LAST_YEAR})|({CJK_WEEKEND_BEFORE_LAST.pattern})"
               rf"|({CJK_WEEK_BEFORE_LAST})|({CJK_MONTH_BEFORE_LAST})|({CJK_YEAR_BEFORE_LAST}))"),
)


def previous_periods(text: str, now: float, *, bounded: bool = True
                     ) -> list[tuple[Span, tuple[float, float]]]:
    """Each "last week", "last month" or "last year" of lower-cased ``text`` (previous,
    上周, 先週, 지난주, 上个月, 先月, 지난달, 去年, 昨年, 작년), as the whole calendar week
    (Monday to Sunday, as "this week" starts on Monday), month or year before the
    current one, and "last weekend" (上周末, 先週末, 지난 주말) as that week's Saturday
    and Sunday, by where it is in ``text``; "since last week" runs on until ``now``
    (unless ``bounded`` is False: :func:`calendar_windows`). The one before last ("the
    week before last", 上上周, 先々月, 지지난달, 一昨年, 재작년, 上上周末) is the period before.

    The ranker weighs "last week", "last month" and "last year" as the same calendar
    spans (``time_window``), there as a soft hint.

    >>> DAY = 86400.0
    >>> now = 1772712000.0  # Thursday 2026-03-05 12:00 UTC
    >>> [(start / DAY, round(end / DAY, 9), end < 20514 * DAY)  # just before Monday
    ...  for _, (start, end) in previous_periods("last week", now)]
    [(20507.0, 20514.0, True)]
    """
    today = local_date(now)
    found = []
    # "last month" of "the end of last month" is its end, 上周 of 上周五 that Friday
    parts = merged(part_spans(text) + [match.span() for match, _ in weekday_windows(text, now)])
    for match, unit, back in _previous(text):
        if within(match.start(), parts):
            continue
        if unit == "weekend" and not weekend_time(match):
            continue  # "the last weekend deploy", "last weekend of february"
        days = weekend(today, back) if unit == "weekend" else previous_period(unit, now, back)
        window = _bounded(match, days) if bounded else days
        if window is not None and window[0] <= now:
            found.append((match.span(), (window[0], min(window[1], now))))
    return found


def _previous(text: str) -> list[tuple[re.Match[str], str, int]]:
    # Each previous period of ``text``: its match, its unit and how many back it is.
    # "In the last week" is the days back (last_periods.spans_back); "the last weekend" one.
    found = [(match, match.group(1), 1) for match in _PREVIOUS[0].finditer(text)
             if match.group(1) == "weekend" or not spans_back(match)]
    found += [(match, match.group(1), 2) for match in before_last(text)]
    for match in _PREVIOUS[1].finditer(text):
        index = next(i for i, g in enumerate(match.groups()) if g)
        found.append((match, _UNITS[index % 4], 1 + index // 4))
    return found


def calendar_terms(text: str) -> tuple[frozenset[str], str]:
    """The words of each calendar expression of ``text``, and ``text`` lower-cased with
    those expressions blanked out (what else it asks about).

    >>> words, rest = calendar_terms("本周我做了什么")
    >>> sorted(words), rest
    (['本周'], '  我做了什么')
    """
    text = text.lower()
    found: set[str] = set()
    # A part of a month, or a day of a week (今週の月曜日: not 今週 alone), first.
    days = [match.span() for match, _ in weekday_windows(text, 0.0)]
    for start, end in part_spans(text) + days:
        found.update(tokens(text[start:end]))
        text = text[:start] + " " * (end - start) + text[end:]
    for pattern in PATTERNS:
        for match in pattern.finditer(text):
            cjk = pattern is _THIS_CJK
            found.update(tokens(match.group(0)) if cjk else re.findall(r"[a-z0-9]+",
                                                                        match.group(0)))
            text = blanked(text, match)
    return frozenset(found), text
