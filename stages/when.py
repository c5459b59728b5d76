"""The times in a question, read as epoch seconds (bounds a caller writes, ``--since``
and ``--as-of``, are :mod:`harkback.stages.time_bounds`).

A question places what it wants to recall relative to now: :func:`time_window` reads a
small set of English expressions ("two weeks ago", "last month", "in the past three
days") into a window of epoch seconds, so a ranker can favour sessions from then; anything
it does not recognise gives None (no weighting at all). Months are 30 days and years 365,
but "last week", "last month" and "last year" (上周, 先月, 지난달, 去年) are the calendar's
week (Monday to Sunday), month and year before the current one, and "the week before last"
(上上周, 先々月, 지지난주, 一昨年) the one before that, as a listing reads them
(:mod:`~harkback.stages.last_periods`; "in the last week" spans back from now): the window
is a soft hint, not a calendar filter.

>>> DAY = 86400.0
>>> now = 100 * DAY
>>> [(round(a / DAY, 1), round(b / DAY, 1)) for a, b in [time_window("a week ago", now)]]
[(89.5, 96.5)]
>>> [(a / DAY, b / DAY) for a, b in [time_window("what did I buy in the past two weeks", now)]]
[(86.0, 100.0)]
>>> time_window("which museum did I visit", now) is None
True
>>> [(a / DAY, round(b / DAY)) for a, b in [time_window("上周 nginx 超时怎么处理的", now)]]
[(88.0, 95)]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import date

from harkback.stages.cjk_times import CJK_DAYS, CJK_PAST, cjk_agos, cjk_spans
from harkback.stages.last_periods import before_last, calendar_period, spans_back
from harkback.stages.local_days import (
    day_start,
    days_before,
    last_moment,
    local_date,
    months_before,
)
from harkback.stages.night_words import night_windows
from harkback.stages.since_words import since_words
from harkback.stages.text.tokens import tokens
from harkback.stages.weekday_words import WEEKDAYS, latest_day, weekday_windows
from harkback.stages.weekend_words import (
    OF_MONTH,
    weekend_expressions,
    weekend_windows,
)

DAY = 86400.0
UNIT_DAYS = {"day": 1.0, "week": 7.0, "month": 30.0, "year": 365.0}
_UNITS = {days: unit for unit, days in UNIT_DAYS.items()}
_AGO_DAYS = UNIT_DAYS | {"hour": 1 / 24}
"""The units of a time ago: an hour too ("3 hours ago", 3小时前), though "the past hours"
and "how many hours" stay unread (a duration's hours are what it asks about)."""
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
            "a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3}
# A vague count names a stretch, not one day: "a few days ago" is two to five days back
# (read as the third day alone, which session of the 2nd-4th day a question meant turned
# on the hour it was asked), and so are 几天前, 前几天, 数日前 and 며칠 전 (前两天: "a couple
# of days ago"; :func:`~harkback.stages.cjk_times.cjk_agos`).
VAGUE = {"a couple of": (1, 3), "couple of": (1, 3), "a few": (2, 5), "few": (2, 5),
         "several": (3, 7)}

COUNT = r"(\d{1,3}|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six" \
        r"|seven|eight|nine|ten|eleven|twelve)"
UNIT = r"(day|week|month|year)s?"
# "A week ago today" is that one day (today's weekday a week back), not the week around it;
# "a month ago today", "a year ago today" the same date a month or a year back.
# Not the tail of a longer number: "1.5 hours ago" is no 5 hours ago, nor "1,000 days" 0
# (a count after a comma is: "what did I do,a week ago"); "half an hour ago" is no hour ago
# (minutes are not read, as 30分钟前 is not).
_AGO = re.compile(rf"(?<!\d[.,])(?<!half\s)\b{COUNT}\s+(day|week|month|year|hour)s?\s+ago"
                  r"(?:\s+(today))?\b")
# "The last week of February" is February's (:mod:`~harkback.stages.month_parts`).
_PAST = re.compile(rf"\b(?:past|last|previous)\s+(?:{COUNT}\s+)?{UNIT}\b(?!{OF_MONTH})")
_WEEKDAY = re.compile(rf"\blast\s+({'|'.join(WEEKDAYS)})\b")
# "On Tuesday" in a question naming nothing else ("what did I do on Tuesday?") is the
# Tuesday gone, as "last Tuesday" is; beside a topic it is as often a day of the week
# ("the job that runs on Monday"): there the word is searched for and no day is lifted.
_ON_WEEKDAY = re.compile(rf"\bon\s+({'|'.join(WEEKDAYS)})\b")
_YESTERDAY = re.compile(r"\byesterday\b")
_DAY_BEFORE = re.compile(r"\bday\s+before\s+yesterday\b")
# "Before today", "until today" name all time up to now, not the day: those are left alone.
_TODAY = re.compile(r"\b(?:(before|until|till|up\s+to|as\s+of)\s+)?(?:today|this\s+morning)\b")
# "How many days/weeks/... (have passed since)": the unit the answer is counted in, and
# the words that ask for a duration (no session says "passed since" of what it holds).
_DURATION = re.compile(rf"\bhow\s+many\s+{UNIT}"
                       r"(?:\s+(?:(?:have|has|had)\s+)?passed(?:\s+since)?)?\b")
_WORD = re.compile(r"[a-z0-9]+")



def latest_weekday(name: str, now: float) -> date:
    """The latest local day named ``name`` (``"tuesday"``) before today: a week back when
    today is one.

    >>> latest_weekday("monday", 4.5 * DAY), latest_weekday("thursday", 0.5 * DAY)
    (datetime.date(1969, 12, 29), datetime.date(1969, 12, 25))
    """
    return latest_day(WEEKDAYS.index(name), now)


def count_of(text: str) -> int:
    """The number a count of :data:`COUNT` says: ``count_of("a couple of")`` is 2."""
    return int(text) if text.isdigit() else _NUMBERS[text]


def time_window(question: str, now: float) -> tuple[float, float] | None:
    """The span of time ``question`` points at, as ``(start, end)`` epoch seconds, or None.

    ``N units ago`` (hours too: "3 hours ago", 3小时前, 2時間前, 3시간 전) is the moment N
    units before ``now``, half a unit either side, except that ``N days ago`` is that whole
    local calendar day (as ``--since yesterday``
    reads it); ``past/last N units`` (or ``the past week``) is everything from then until
    ``now``, ``last week``, ``last month`` and ``last year`` the calendar's, ``the week
    before last`` the one before it (:mod:`~harkback.stages.last_periods`); ``last
    Saturday`` is that day, ``last weekend`` (or ``two weekends ago``) the calendar's,
    ``over the weekend`` the latest begun (:mod:`~harkback.stages.weekend_words`;
    "weekend" or 周末 alone is a topic); ``yesterday`` the day before today, ``today``
    the day so far. The first expression found wins (the lexical ranker weighs every one,
    :func:`time_windows`; a listing covers them all: :func:`spanning`).

    >>> time_window("yesterday", 10.2 * DAY)[0] / DAY
    9.0
    """
    return min(time_windows(question, now), default=(0, None))[1]


def time_windows(question: str, now: float, *, listing: bool = False
                 ) -> list[tuple[int, tuple[float, float]]]:
    """Each expression :func:`time_window` reads in ``question``, with its window, by
    where it starts; one inside another ("yesterday" in "the day before yesterday", 昨日
    in 一昨日) is not read on its own. For a ``listing`` (a question naming only a time)
    ``on Saturday`` is that day too.

    >>> [(at, start / DAY) for at, (start, _) in time_windows("the day before yesterday", DAY)]
    [(4, -1.0)]
    >>> time_windows("what runs on monday", DAY), len(time_windows("on monday", DAY, listing=True))
    ([], 1)
    """
    return [(start, window) for (start, _), window in time_spans(question, now,
                                                                 listing=listing)]


def time_spans(question: str, now: float, *, listing: bool = False
               ) -> list[tuple[tuple[int, int], tuple[float, float]]]:
    """:func:`time_windows` with where each expression starts and ends in ``question``
    (what follows it may bound it: 先週から, since last week)."""
    text = question.lower()
    found: list[tuple[re.Match[str], tuple[float, float]]] = []
    for match in _AGO.finditer(text):
        count, unit = match.group(1), match.group(2)
        if match.group(3) and count not in VAGUE and unit != "hour":
            if (window := _same_day(count_of(count), unit, now)) is not None:
                found.append((match, window))
        else:
            found.append((match, _ago_said(count, unit, now)))
    for match in _PAST.finditer(text):
        unit = UNIT_DAYS[match.group(2)] * DAY
        count = count_of(match.group(1)) if match.group(1) else 1
        # "last week" and "previous month" name one; "the past week", "the last weeks" span
        # back from now.
        named = not match.group(1) and not match.group(0).startswith("past") \
            and not match.group(0).endswith("s") and not spans_back(match)
        found.append((match, (named and calendar_period(match.group(2), now))
                      or (now - count * unit, now)))
    for match in before_last(text):
        unit = UNIT_DAYS[match.group(1)] * DAY
        found.append((match, calendar_period(match.group(1), now, 2)
                      or (now - 2 * unit, now - unit)))
    for match in _weekdays(text, listing):
        day = latest_weekday(match.group(1), now)
        found.append((match, (day_start(day), last_moment(day))))
    found += weekend_windows(text, now) + weekday_windows(text, now)
    for match in _YESTERDAY.finditer(text):
        found.append((match, _day_window(1, now)))
    for match in _DAY_BEFORE.finditer(text):
        found.append((match, _day_window(2, now)))
    for match in _today(text):
        found.append((match, _day_window(0, now)))
    found += _cjk_windows(text, now)
    outer = _outermost([match.span() for match, _ in found])
    return sorted((match.span(), window) for match, window in found if match.span() in outer)


def _outermost(spans: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """The spans of ``spans`` lying within no other (the same span twice is one), in one
    sweep: a question of 10,000 time words compared each with each took seconds.

    >>> sorted(_outermost([(4, 13), (0, 13), (0, 13), (14, 20)]))
    [(0, 13), (14, 20)]
    """
    kept: set[tuple[int, int]] = set()
    farthest, reached_from = -1, -1  # the farthest end so far, and the first start to reach it
    for start, end in sorted(spans, key=lambda span: (span[0], -span[1])):
        if end < farthest or (end == farthest and reached_from < start):
            continue
        kept.add((start, end))
        if end > farthest:
            farthest, reached_from = end, start
    return kept


def spanning(windows: Iterable[tuple[float, float]]) -> tuple[float, float] | None:
    """The one window covering every window of ``windows`` (None when there is none):
    a listing of "yesterday and last week" holds both, whichever is named first.

    >>> spanning([(9 * DAY, 10 * DAY), (2 * DAY, 7 * DAY)]) == (2 * DAY, 10 * DAY)
    True
    """
    given = list(windows)
    if not given:
        return None
    return (min(start for start, _ in given), max(end for _, end in given))


def _cjk_windows(text: str, now: float) -> list[tuple[re.Match[str], tuple[float, float]]]:
    found = []
    for pattern, days, back in CJK_PAST:
        for match in pattern.finditer(text):
            found.append((match, calendar_period(_UNITS.get(days, ""), now, back + 1)
                          or (now - (back + 1) * days * DAY, now - back * days * DAY)))
    # 三天前, 两个月前, 几天前 (a few days ago): as "3 days ago", "a few days ago" are read.
    found += [(match, _ago_said(count, unit, now)) for match, count, unit in cjk_agos(text)]
    for pattern, count in CJK_DAYS:
        found += [(match, _day_window(count, now)) for match in pattern.finditer(text)]
    # 过去一年, 这几天: the days back until now, as "the past year", "the past few days".
    found += [(match, (now - days * DAY, now)) for match, days in cjk_spans(text)]
    found += night_windows(text, now)
    return found


def _today(text: str) -> list[re.Match[str]]:
    """Where ``text`` names today ("today", "this morning"), not as an end ("before today")."""
    return [match for match in _TODAY.finditer(text) if match.group(1) is None]


def _ago_said(count: str, unit: str, now: float) -> tuple[float, float]:
    """The window of "``count`` ``unit`` ago": a vague count (:data:`VAGUE`) spans its
    stretch, from the start of its farthest unit to the end of its nearest, whole calendar
    days for days; a number is :func:`_ago`.

    >>> [round(w / DAY, 9) for w in _ago_said("a few", "day", 10.4 * DAY)]
    [5.0, 9.0]
    >>> [w / DAY for w in _ago_said("several", "week", 100 * DAY)]
    [47.5, 82.5]
    """
    if count not in VAGUE:
        return _ago(count_of(count), unit, now)
    near, far = VAGUE[count]
    if unit == "day":
        return (_day_window(far, now)[0], _day_window(near, now)[1])
    return (_ago(far, unit, now)[0], _ago(near, unit, now)[1])


def _ago(count: int, unit: str, now: float) -> tuple[float, float]:
    """``count`` units (day, week, month, year) before ``now``: for days the whole
    calendar day (:func:`_day_window`: "1 day ago" is yesterday), else one unit centred
    there.

    >>> start, end = _ago(2, "day", 10.4 * DAY)
    >>> start / DAY, round(end / DAY, 9), end < 9 * DAY  # just before the next midnight
    (8.0, 9.0, True)
    >>> [w / DAY for w in _ago(1, "week", 10 * DAY)]
    [-0.5, 6.5]
    """
    if unit == "day":
        return _day_window(count, now)
    days = _AGO_DAYS[unit]
    center = now - count * days * DAY
    return (center - days * DAY / 2, center + days * DAY / 2)


def _same_day(count: int, unit: str, now: float) -> tuple[float, float] | None:
    """"``count`` ``unit``s ago today": that one local day (a month or year back, the same
    day of the month, or the month's last); None before the calendar's start."""
    if unit in ("day", "week"):
        return _day_window(count * int(UNIT_DAYS[unit]), now)
    day = months_before(local_date(now), count * (12 if unit == "year" else 1))
    return None if day is None else (day_start(day), last_moment(day))


def _day_window(count: int, now: float) -> tuple[float, float]:
    """The local calendar day ``count`` days before ``now``'s (asked at 9 am, "yesterday"
    is not 9 pm to 9 pm), ending no later than ``now`` (today is the day so far), and
    before the next day's midnight (:func:`last_moment`)."""
    day = days_before(now, count)
    return (day_start(day), min(last_moment(day), now))


def time_words(question: str) -> frozenset[str]:
    """The words that place ``question`` in time rather than name what it is about.

    They are the words of every expression :func:`time_window` reads ("two weeks ago",
    "in the past month", "last Saturday", "yesterday") and the unit a duration question
    counts in ("how many months ..."). A session that says "weeks" is no nearer to "two
    weeks ago" than one that does not; the window, not the words, says when.

    >>> sorted(time_words("What did I bake in the past two weeks?"))
    ['past', 'two', 'weeks']
    >>> sorted(time_words("How many months have passed since I moved?"))
    ['have', 'how', 'many', 'months', 'passed', 'since']
    >>> time_words("which museum did I visit")
    frozenset()
    """
    return time_terms(question)[0]


def without_time(question: str) -> str:
    """``question``, lower-cased, each time expression of :func:`time_words` blanked out:
    what remains is what it asks about (a CJK bigram across the edge, 周我 of 上周我, is not).

    >>> without_time("上周我做了什么"), without_time("What did I do last week?")
    ('  我做了什么', 'what did i do          ?')
    """
    return time_terms(question)[1]


def time_terms(question: str, *, listing: bool = False) -> tuple[frozenset[str], str]:
    """:func:`time_words` and :func:`without_time` of ``question`` from one reading (for a
    ``listing``, ``on Saturday`` too: :func:`time_windows`)."""
    text = rest = question.lower()
    found: set[str] = set()
    for match, cjk in _expressions(text, listing):
        found.update(tokens(match.group(0)) if cjk else _WORD.findall(match.group(0)))
        found.update(_since_terms(text, match.span()))
        rest = blanked(rest, match)
    return frozenset(found), rest


def _since_terms(text: str, span: tuple[int, int]) -> list[str]:
    """The words that run the time at ``span`` on until now (since, 以来, 自从:
    :func:`~harkback.stages.since_words.since_words`), with the bigrams across their join
    with it (周以 of 上周以来): framing, as the time's words are. Searched, they lifted a
    session that says "since" or 以来 of anything above the one that answers.

    >>> _since_terms("上周以来nginx", (0, 2)), _since_terms("nginx since last week", (12, 21))
    (['上周', '周以', '以来'], ['since', 'last', 'week'])
    """
    spans = since_words(text, span)
    if not spans:
        return []
    ends = [*spans, span]
    stretch = text[min(s for s, _ in ends):max(e for _, e in ends)]
    return _WORD.findall(stretch) if stretch.isascii() else list(tokens(stretch))


def blanked(text: str, match: re.Match[str]) -> str:
    """``text`` with the span ``match`` found in it made spaces, every other character
    where it was (so later matches' positions hold).

    >>> blanked("what did i do last week", re.search("last week", "what did i do last week"))
    'what did i do          '
    """
    return text[:match.start()] + " " * (match.end() - match.start()) + text[match.end():]


def _weekdays(text: str, listing: bool) -> list[re.Match[str]]:
    """The weekdays named in ``text`` as days gone: after "last", or for a listing "on"."""
    return [*_WEEKDAY.finditer(text), *(_ON_WEEKDAY.finditer(text) if listing else ())]


def _expressions(text: str, listing: bool = False) -> Iterator[tuple[re.Match[str], bool]]:
    # Each time expression of lower-cased ``text``, and whether it is Chinese, Japanese or
    # Korean (whose words are the tokens' bigrams).
    for pattern in (_AGO, _PAST, _YESTERDAY, _DAY_BEFORE, _DURATION):
        yield from ((match, False) for match in pattern.finditer(text))
    yield from ((match, False) for match in before_last(text))
    # 上周末's words are its bigrams, as the other CJK expressions' are.
    yield from ((match, not match.group(0).isascii()) for match in weekend_expressions(text))
    yield from ((match, not match.group(0).isascii()) for match, _ in weekday_windows(text, 0.0))
    yield from ((match, False) for match in _weekdays(text, listing))
    yield from ((match, False) for match in _today(text))
    for pattern in (*(p for p, _, _ in CJK_PAST), *(p for p, _ in CJK_DAYS)):
        yield from ((match, True) for match in pattern.finditer(text))
    yield from ((match, True) for match, _, _ in cjk_agos(text))
    yield from ((match, True) for match, _ in cjk_spans(text))
    yield from ((match, not match.group(0).isascii()) for match, _ in night_windows(text, 0.0))


def closeness(moment: float, window: tuple[float, float]) -> float:
    """1.0 inside ``window``, falling off outside it: halved one window-width away.

    >>> week = (10 * DAY, 17 * DAY)
    >>> closeness(12 * DAY, week), closeness(24 * DAY, week), closeness(3 * DAY, week)
    (1.0, 0.5, 0.5)
    """
    start, end = window
    width = max(end - start, DAY)
    distance = max(start - moment, moment - end, 0.0)
    return float(0.5 ** (distance / width))
