"""Times people write, read as epoch seconds: time bounds, and the times in a question.

A caller bounds a search by ``--since``/``--until`` values (:func:`parse_time_bound`:
an ISO time, epoch seconds, or a span back from now such as ``7d``), and may set "now"
itself (``--as-of``, :func:`parse_as_of`). A question places what it wants to recall
relative to now: :func:`time_window` reads a small set of English expressions ("two
weeks ago", "last month", "in the past three days") into a window of epoch seconds, so a
ranker can favour sessions from then; anything it does not recognise gives None (no
weighting at all). Months are 30 days and years 365: the
window is a soft hint, not a calendar filter.

>>> parse_time_bound("2026-03-01").unwrap()
1772323200.0
>>> parse_time_bound("7d", now=1_000_000.0).unwrap()
395200.0
>>> DAY = 86400.0
>>> now = 100 * DAY
>>> [(round(a / DAY, 1), round(b / DAY, 1)) for a, b in [time_window("a week ago", now)]]
[(89.5, 96.5)]
>>> [(a / DAY, b / DAY) for a, b in [time_window("what did I buy in the past two weeks", now)]]
[(86.0, 100.0)]
>>> time_window("which museum did I visit", now) is None
True
>>> [(a / DAY, b / DAY) for a, b in [time_window("上周 nginx 超时怎么处理的", now)]]
[(93.0, 100.0)]
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime

from returns.result import Failure, Result, Success

from harkback.stages.errors import QueryRejected
from harkback.stages.text.tokens import tokens

DAY = 86400.0
_UNITS = {"day": 1.0, "week": 7.0, "month": 30.0, "year": 365.0}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
            "a couple of": 2, "couple of": 2, "a few": 3, "few": 3, "several": 3}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_COUNT = r"(\d{1,3}|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six" \
         r"|seven|eight|nine|ten|eleven|twelve)"
_UNIT = r"(day|week|month|year)s?"
_AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b")
_PAST = re.compile(rf"\b(?:past|last|previous)\s+(?:{_COUNT}\s+)?{_UNIT}\b")
_WEEKDAY = re.compile(rf"\blast\s+({'|'.join(_WEEKDAYS)})\b")
_YESTERDAY = re.compile(r"\byesterday\b")
_DAY_BEFORE = re.compile(r"\bday\s+before\s+yesterday\b")
# "Before today", "until today" name all time up to now, not the day: those are left alone.
_TODAY = re.compile(r"\b(?:(before|until|till|up\s+to|as\s+of)\s+)?(?:today|this\s+morning)\b")
# "How many days/weeks/... (have passed)": the unit the answer is counted in.
_DURATION = re.compile(rf"\bhow\s+many\s+{_UNIT}\b")
_WORD = re.compile(r"[a-z0-9]+")

# The same expressions in Chinese, Japanese and Korean ("上周", "先週", "지난주": last
# week; "3天前", "3日前", "3일 전": three days ago). Each maps to a unit of days.
_CJK_PAST = (
    (re.compile(r"上周|上星期|上个星期|上個星期|先週|지난\s?주"), 7.0),
    (re.compile(r"上个月|上個月|上月|先月|지난\s?달"), 30.0),
    (re.compile(r"去年|昨年|작년"), 365.0),
)
_CJK_AGO = (
    (re.compile(r"(\d{1,3})\s*(?:天|日)前|(\d{1,3})\s*일\s*전"), 1.0),
    (re.compile(r"(\d{1,3})\s*(?:周|週|个星期|個星期|週間)前|(\d{1,3})\s*주\s*전"), 7.0),
    (re.compile(r"(\d{1,3})\s*(?:个月|個月|ヶ月|か月|カ月)前|(\d{1,3})\s*(?:개월|달)\s*전"), 30.0),
)
_CJK_YESTERDAY = re.compile(r"昨天|昨日|어제")
# "The day before yesterday": 一昨日 holds 昨日, and must not read as yesterday.
_CJK_DAY_BEFORE = re.compile(r"前天|一昨日|おととい|그저께|그제")
_CJK_TODAY = re.compile(r"今天|今日|今朝|오늘")

# The moments an as-of time may name: epoch 0 to the year 10000 (what datetime can show).
_EARLIEST, _LATEST = 0.0, 253402300800.0
_YEARS = "the years 1970 to 9999"
_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


ACCEPTED_TIMES = ("a date (2026-11-01), an ISO time (2026-11-01T14:00:00+02:00), epoch "
                  "seconds, a span back from now (7d, 24h), or words: now, today, yesterday, "
                  "last week, last month, last year, 3 days ago, 2 weeks ago")
"""The forms :func:`parse_time_bound` reads, as its error lists them."""

_SPOKEN_AGO = re.compile(rf"^{_COUNT}\s+{_UNIT}\s+ago$")
_SPOKEN_LAST = re.compile(rf"^(?:last|past|previous)\s+(?:{_COUNT}\s+)?{_UNIT}$")


def spoken_time(text: str, now: float) -> float | None:
    """The moment a few English words name, counted back from ``now``; None if not read.

    ``today`` and ``yesterday`` are the start of that day (UTC, as naive ISO dates are
    read); ``last week`` and ``3 days ago`` are that long before ``now`` (a month is 30
    days, a year 365).

    >>> DAY = 86400.0
    >>> [spoken_time(t, 10.5 * DAY) / DAY for t in ("today", "yesterday", "2 days ago")]
    [10.0, 9.0, 8.5]
    >>> spoken_time("last week", 10 * DAY) / DAY, spoken_time("a month ago", 40 * DAY) / DAY
    (3.0, 10.0)
    >>> spoken_time("whenever", 0.0) is None
    True
    """
    words = " ".join(text.lower().split())
    today = math.floor(now / DAY) * DAY
    fixed = {"now": now, "today": today, "yesterday": today - DAY}
    if words in fixed:
        return fixed[words]
    ago = _SPOKEN_AGO.match(words)
    if ago:
        return now - _count(ago.group(1)) * _UNITS[ago.group(2)] * DAY
    last = _SPOKEN_LAST.match(words)
    if last:
        count = _count(last.group(1)) if last.group(1) else 1
        return now - count * _UNITS[last.group(2)] * DAY
    return None


_YEAR = re.compile(r"[12][0-9]{3}")
"""A written number that is a year (1000-2999), not epoch seconds."""
_COMPACT_DATE = re.compile(r"([12][0-9]{3})(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])")
"""A written number that is a date without its dashes (20260301), not epoch seconds."""


def _possible(moment: float) -> bool:
    """Whether ``moment`` (epoch seconds) lies in the years a session can have, 1970-9999."""
    return math.isfinite(moment) and _EARLIEST <= moment < _LATEST


def parse_time_bound(text: str, *, now: float | None = None, what: str = "time bound"
                     ) -> Result[float, QueryRejected]:
    """Parse a written time: ``2026-03-01``, ``2026-03-01T14:00:00+02:00``, epoch seconds,
    ``7d``/``24h``, or words (:func:`spoken_time`: ``yesterday``, ``last week``,
    ``3 days ago``).

    Relative bounds count back from ``now``. Naive ISO times are taken as UTC. ``what``
    names the value in the error, which lists :data:`ACCEPTED_TIMES`.

    >>> parse_time_bound("3 days ago", now=10 * DAY).unwrap() / DAY
    7.0
    >>> parse_time_bound("someday", what="--since").failure().reason[:31]
    "cannot read --since 'someday': "
    >>> parse_time_bound("99999999999999", what="--since").failure().reason[:44]
    "--since '99999999999999' is not a moment a s"
    >>> parse_time_bound("999999999999d", what="--since").failure().reason[:59]
    "--since '999999999999d' is not a moment a session can have "
    >>> parse_time_bound("6M", what="--since").failure().reason
    "--since '6M' is ambiguous: write 6m for minutes or '6 months ago'"
    >>> parse_time_bound("2026", what="--since").failure().reason
    "--since '2026' reads as a year: write 2026-01-01 for its first day (or epoch seconds)"
    >>> parse_time_bound("20260301", what="--since").failure().reason
    "--since '20260301' reads as a date: write 2026-03-01 (or 20260301.0 for epoch seconds)"
    """
    text = text.strip()
    base = datetime.now(UTC).timestamp() if now is None else now
    rel = _RELATIVE.match(text)
    if rel and rel.group(2) == "M":  # minutes in Go and systemd, months in ISO 8601 and pandas
        return Failure(QueryRejected(f"{what} {text!r} is ambiguous: write {rel.group(1)}m for "
                                     f"minutes or '{rel.group(1)} months ago'"))
    if rel:
        # "99999999999d" reaches back past 1970 (past any float: "9" * 400 + "d"), where it
        # would quietly bound nothing: refused as a number out of range is.
        return _in_range(base - float(rel.group(1)) * _UNIT_SECONDS[rel.group(2).lower()],
                         text, what)
    if _YEAR.fullmatch(text):
        # Epoch second 2026 is ten past midnight, 1 January 1970: nobody means it.
        return Failure(QueryRejected(f"{what} {text!r} reads as a year: write {text}-01-01 "
                                     f"for its first day (or epoch seconds)"))
    compact = _COMPACT_DATE.fullmatch(text)
    if compact:
        # Epoch second 20260301 is in August 1970: it would bound nothing, or everything.
        day = "-".join(compact.groups())
        return Failure(QueryRejected(f"{what} {text!r} reads as a date: write {day} "
                                     f"(or {text}.0 for epoch seconds)"))
    try:
        epoch = float(text)
    except ValueError:
        pass
    else:
        # "nan", "1e400" and year-3-million epochs would filter every session out unseen.
        return _in_range(epoch, text, what)
    spoken = spoken_time(text, base)
    if spoken is not None:
        return _in_range(spoken, text, what)  # "999 years ago": before 1970
    try:
        moment = iso_seconds(text.replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        return Failure(QueryRejected(f"cannot read {what} {text!r}: use {ACCEPTED_TIMES}"))
    return _in_range(moment, text, what)  # 0001-01-01, as a number before 1970 is


def _in_range(moment: float, text: str, what: str) -> Result[float, QueryRejected]:
    if _possible(moment):
        return Success(moment)
    return Failure(QueryRejected(f"{what} {text!r} is not a moment a session can have "
                                 f"({_YEARS}): use {ACCEPTED_TIMES}"))


def epoch_bound(value: float, *, what: str = "time bound") -> Result[float, QueryRejected]:
    """Epoch seconds given as a number (by the library or the MCP server, where the
    command line passes text), held to the moments a session can have, as
    :func:`parse_time_bound` holds a written number.

    >>> epoch_bound(86400).unwrap()
    86400.0
    >>> epoch_bound(10 ** 400, what="since").failure().reason[:44]
    'since (a number past any date) is not a mome'
    >>> epoch_bound([], what="until").failure().reason
    'until must be a time (text or epoch seconds), got list'
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        # A library caller's slip (a list, True, a datetime) is refused as a value, as the
        # rest of a request is, rather than raised as float()'s TypeError.
        return Failure(QueryRejected(f"{what} must be a time (text or epoch seconds), got "
                                     f"{type(value).__name__}"))
    try:
        moment = float(value)
    except OverflowError:  # an int past a float's range: 10 ** 400
        moment = math.inf
    if _possible(moment):
        return Success(moment)
    # repr() of a huge int is pages long, and past 4,300 digits raises.
    shown = (repr(value) if isinstance(value, float) or abs(value) < 10 ** 30
             else "(a number past any date)")
    return Failure(QueryRejected(f"{what} {shown} is not a moment a session can have "
                                 f"({_YEARS}): use {ACCEPTED_TIMES}"))


def parse_as_of(value: str | float, *, what: str = "as_of") -> Result[float, QueryRejected]:
    """The moment a question is taken to be asked: as :func:`parse_time_bound` reads it;
    a failure names the value ``what`` (the keyword, or a command's flag, ``--as-of``), as
    the bounds' failures name ``since`` or ``--since``.

    Its time words ("two weeks ago") and relative bounds (``--since 7d``) count back from
    this moment instead of the wall clock.

    >>> parse_as_of("2026-03-01").unwrap(), parse_as_of(86400).unwrap()
    (1772323200.0, 86400.0)
    >>> parse_as_of("someday", what="--as-of").failure().reason[:28]
    "cannot read --as-of 'someday"
    """
    if not isinstance(value, str):
        return epoch_bound(value, what=what)
    return parse_time_bound(value, what=what)


def iso_seconds(text: str) -> float:
    """The epoch seconds of an ISO 8601 time; a time without an offset is UTC.

    Raises ``ValueError`` when ``text`` is not ISO 8601 (``OverflowError`` when its time
    has no epoch seconds); callers turn that into their own error value.

    >>> iso_seconds("1970-01-02"), iso_seconds("1970-01-01T02:00:00+02:00")
    (86400.0, 0.0)
    """
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[text]


def time_window(question: str, now: float) -> tuple[float, float] | None:
    """The span of time ``question`` points at, as ``(start, end)`` epoch seconds, or None.

    ``N units ago`` is the moment N units before ``now``, half a unit either side,
    except that ``N days ago`` is that whole calendar day (UTC, as ``--since yesterday``
    reads it); ``past/last N units`` (or ``last week``) is everything from then until
    ``now``; ``last Saturday`` is that day; ``yesterday`` the day before today, ``today``
    the day so far. The first expression found wins.

    >>> time_window("yesterday", 10.2 * DAY)[0] / DAY
    9.0
    """
    text = question.lower()
    found: list[tuple[int, tuple[float, float]]] = []
    for match in _AGO.finditer(text):
        found.append((match.start(), _ago(_count(match.group(1)), _UNITS[match.group(2)], now)))
    for match in _PAST.finditer(text):
        unit = _UNITS[match.group(2)] * DAY
        count = _count(match.group(1)) if match.group(1) else 1
        found.append((match.start(), (now - count * unit, now)))
    for match in _WEEKDAY.finditer(text):
        back = (math.floor(now / DAY) + 3 - _WEEKDAYS.index(match.group(1))) % 7 or 7
        # Epoch day 0 was a Thursday (index 3); the window is that whole day.
        start = (math.floor(now / DAY) - back) * DAY
        found.append((match.start(), (start, start + DAY)))
    for match in _YESTERDAY.finditer(text):
        found.append((match.start(), _ago(1, 1.0, now)))
    for match in _DAY_BEFORE.finditer(text):
        found.append((match.start(), _ago(2, 1.0, now)))
    for match in _today(text):
        found.append((match.start(), _ago(0, 1.0, now)))
    found += _cjk_windows(text, now)
    if not found:
        return None
    return min(found)[1]


def _cjk_windows(text: str, now: float) -> list[tuple[int, tuple[float, float]]]:
    found = []
    for pattern, days in _CJK_PAST:
        for match in pattern.finditer(text):
            found.append((match.start(), (now - days * DAY, now)))
    for pattern, days in _CJK_AGO:
        for match in pattern.finditer(text):
            found.append((match.start(), _ago(int(match.group(1) or match.group(2)), days, now)))
    for match in _CJK_YESTERDAY.finditer(text):
        found.append((match.start(), _ago(1, 1.0, now)))
    for match in _CJK_DAY_BEFORE.finditer(text):
        found.append((match.start(), _ago(2, 1.0, now)))
    for match in _CJK_TODAY.finditer(text):
        found.append((match.start(), _ago(0, 1.0, now)))
    return found


def _today(text: str) -> list[re.Match[str]]:
    """Where ``text`` names today ("today", "this morning"), not as an end ("before today")."""
    return [match for match in _TODAY.finditer(text) if match.group(1) is None]


def _ago(count: int, days: float, now: float) -> tuple[float, float]:
    """``count`` units of ``days`` days before ``now``: for days that whole calendar day
    (asked at 9 am, "yesterday" is not 9 pm to 9 pm), else one unit centred there.

    >>> [w / DAY for w in _ago(2, 1.0, 10.4 * DAY)], [w / DAY for w in _ago(1, 7.0, 10 * DAY)]
    ([8.0, 9.0], [-0.5, 6.5])
    """
    if days == 1.0:
        start = math.floor(now / DAY) * DAY - count * DAY
        return (start, min(start + DAY, now))
    center = now - count * days * DAY
    return (center - days * DAY / 2, center + days * DAY / 2)


def time_words(question: str) -> frozenset[str]:
    """The words that place ``question`` in time rather than name what it is about.

    They are the words of every expression :func:`time_window` reads ("two weeks ago",
    "in the past month", "last Saturday", "yesterday") and the unit a duration question
    counts in ("how many months ..."). A session that says "weeks" is no nearer to "two
    weeks ago" than one that does not; the window, not the words, says when.

    >>> sorted(time_words("What did I bake in the past two weeks?"))
    ['past', 'two', 'weeks']
    >>> sorted(time_words("How many months have passed since I moved?"))
    ['how', 'many', 'months']
    >>> time_words("which museum did I visit")
    frozenset()
    """
    found: set[str] = set()
    for match, cjk in _expressions(question.lower()):
        found.update(tokens(match.group(0)) if cjk else _WORD.findall(match.group(0)))
    return frozenset(found)


def without_time(question: str) -> str:
    """``question``, lower-cased, each time expression of :func:`time_words` blanked out:
    what remains is what it asks about (a CJK bigram across the edge, 周我 of 上周我, is not).

    >>> without_time("上周我做了什么"), without_time("What did I do last week?")
    ('  我做了什么', 'what did i do          ?')
    """
    text = question.lower()
    for match, _ in _expressions(text):
        text = text[:match.start()] + " " * (match.end() - match.start()) + text[match.end():]
    return text


def _expressions(text: str) -> Iterator[tuple[re.Match[str], bool]]:
    # Each time expression of lower-cased ``text``, and whether it is Chinese, Japanese or
    # Korean (whose words are the tokens' bigrams).
    for pattern in (_AGO, _PAST, _WEEKDAY, _YESTERDAY, _DAY_BEFORE, _DURATION):
        yield from ((match, False) for match in pattern.finditer(text))
    yield from ((match, False) for match in _today(text))
    cjk = [p for p, _ in (*_CJK_PAST, *_CJK_AGO)] + [_CJK_YESTERDAY, _CJK_DAY_BEFORE,
                                                     _CJK_TODAY]
    for pattern in cjk:
        yield from ((match, True) for match in pattern.finditer(text))


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
