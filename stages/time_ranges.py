"""Stretches of time a question names by their ends: "from last Monday to Wednesday",
"between March 2nd and March 5th", "until Wednesday", "before last week", "until now",
从上周一到周三, 上周一到周三为止, 先週の月曜から水曜まで, 지난주 월요일부터 수요일까지, 到现在,
今まで, 지금까지, 截至上周三, 上周五以前 (until), 上周五之前, 金曜日より前, 금요일 전에 (before).

A range runs from the first moment of its first time to the last of its second; a day of
the week alone at its end is the first such day from its start on (上周一到周三: last week's
Wednesday; from a longer time, the latest before today if later: "from last month to
Wednesday" runs to this week's), alone at its start the latest such day before today, as
"on Monday" is ("from Monday to Wednesday" asked on a Thursday: this week's); a range of
two days alone is the latest whose last day has come ("from Wednesday to Monday" asked on
a Thursday: the Wednesday a week before yesterday on). "Until" a time alone (到...为止,
まで, 까지, 以前, 截至) runs from no start to that time's end (a day alone: the latest
before today), "before" one (之前, より前, 전에) to its start; "now" (现在, 今, 지금) is ``now``.
Each end is read as the rest of the question's times are (:mod:`~harkback.stages.when`,
:mod:`~harkback.stages.calendar_words`), the words around it aside: "until last week" is no
longer left out, nor "from" read as from it until now.

>>> DAY = 86400.0
>>> now = 1773921600.0  # Thursday 2026-03-19 12:00 UTC
>>> [(span, round(a / DAY), round(b / DAY)) for span, (a, b) in
...  time_ranges("从上周一到周三做了什么", now)]  # 9 to 11 March
[((0, 7), 20521, 20524)]
>>> [(span, a, round(b / DAY)) for span, (a, b) in time_ranges("先週まで", now)]
[((0, 4), -inf, 20528)]
"""

from __future__ import annotations

import math
import re
from datetime import timedelta

import attrs

from harkback.stages.calendar_words import (
    DOING,
    UNTIL_WORDS,
    Span,
    calendar_windows,
    previous_periods,
)
from harkback.stages.local_days import day_start, last_moment, local_date
from harkback.stages.weekday_words import WEEKDAYS, latest_day
from harkback.stages.when import DAY, _outermost, time_spans

Window = tuple[float, float]

# A day of the week named alone, which only a range's other end places.
_WEEKDAY = re.compile(rf"\b({'|'.join(WEEKDAYS)})\b|(?:周|週|星期|礼拜|禮拜)([一二三四五六日天])"
                      r"|([月火水木金土日])曜日?|([월화수목금토일])요일")
_DAY_NAMES = ("一二三四五六日", "月火水木金土日", "월화수목금토일")
# Now as a range's end: 到现在, 到目前为止, 至今, 今まで, これまで, 지금까지, "until now".
_NOW = re.compile(r"\bnow\b|现在|現在|目前|(?<=至)今|(?:今|これ)(?=\s*まで)|지금")
# The words between a range's two ends; から, より, 부터 and 에서 only with まで or 까지 after
# the second ("先週から水曜まで"), "and" only after "between"; "the" may follow ("to the day
# before yesterday": its span starts at "day").
# 起, 开始 or 以来 may end the first (从上周起到现在, 从昨天开始到现在: since then until now).
_JOIN = re.compile(r"\s*(?:(?:起|开始|開始|以来|以來)\s*)?"
                   r"(?:(to|until|till|through|thru|-|–|~|〜|到|至|一直到|直到)|(and)"
                   r"|(から|より|부터|에서))\s*(?:the\s+)?")
# 以前 after a time is until it, its end included, in Chinese law and in Japanese alike
# (上周五以前, 昨日以前); 之前, より前, 전에 (上周五之前, 先週の金曜日より前, 지난주 금요일 전에)
# are before it.
_CLOSE = re.compile(r"\s*(?:为止|為止|まで|にかけて|까지|以前)")
_EARLIER = re.compile(r"\s*(?:之前|より前|(?:이)?전에|이전까지|전까지)")
# What opens a range of two ends; not calendar_words' "since"/"after"/"from", which run a
# time alone on until now ("since last week" is no range: time_ranges leaves it be).
_FROM = re.compile(r"(?:\bfrom|\bbetween|从|從|自)\s*(?:the\s+)?$")
_BETWEEN = re.compile(r"\bbetween\s*(?:the\s+)?$")
# Before an end named alone: "until Wednesday", "up to last week", 直到周三; 到 alone (also
# "arrive", 回到上周: back to last week) only before now (到现在) or with 为止 after.
# "The" may come between: "until the end of last month" (its span starts at "end").
_UNTIL = re.compile(rf"(?:{UNTIL_WORDS})\s*(?:the\s+)?$")
_TO = re.compile(r"到\s*$")
_BEFORE = re.compile(r"\bbefore\s*(?:the\s+)?$")


@attrs.frozen
class _End:
    """A time that may end a range: its window, or the day of the week it names alone
    (``weekday``, 0 Monday), or now."""

    span: Span
    window: Window | None = None
    weekday: int | None = None
    is_now: bool = False


def time_ranges(text: str, now: float) -> list[tuple[Span, Window]]:
    """Each range of lower-cased ``text`` with where it is (its first and last word) and
    its window ``(start, end)``, the end no later than ``now``; a range with no start
    ("until Wednesday") starts at ``-inf``."""
    ends = _ends(text, now)
    found: list[tuple[Span, Window]] = []
    index = 0
    while index < len(ends):
        first = ends[index]
        second = ends[index + 1] if index + 1 < len(ends) else None
        joined = _joined(text, first, second) if second is not None else None
        if second is not None and joined is not None:
            start, end = _between(first, second, now)
            if start <= end:
                found.append((joined, (start, end)))
            index += 2
            continue
        alone = _alone(text, first, now)
        if alone is not None:
            found.append(alone)
        index += 1
    return found


def _ends(text: str, now: float) -> list[_End]:
    """Every time of ``text`` that may end a range, outermost only, by where it starts."""
    # The calendar's last week (previous_periods) before the seven days back (time_spans).
    read = [_End(span, window) for span, window in calendar_windows(text, now, bounded=False)]
    read += [_End(span, window) for span, window in previous_periods(text, now, bounded=False)]
    read += [_End(span, window) for span, window in time_spans(text, now, listing=True)]
    read += [_End(m.span(), is_now=True) for m in _NOW.finditer(text)]
    read += [_End(m.span(), weekday=_weekday(m)) for m in _WEEKDAY.finditer(text)]
    outer = _outermost([end.span for end in read])
    kept: dict[Span, _End] = {}
    for end in read:  # one reading of each span: the first reader's
        if end.span in outer:
            kept.setdefault(end.span, end)
    return sorted(kept.values(), key=lambda end: end.span)


def _weekday(match: re.Match[str]) -> int:
    # The day of the week (0: Monday) a name of _WEEKDAY says (天 and 日 are Sunday).
    if match.group(1):
        return WEEKDAYS.index(match.group(1))
    day = next(g for g in match.groups()[1:] if g)
    return next((names.index(day) for names in _DAY_NAMES if day in names), 6)


def _joined(text: str, first: _End, second: _End) -> Span | None:
    """Where the range from ``first`` to ``second`` is in ``text`` (the words that open
    and close it included), or None when the words between them join no range."""
    join = _JOIN.fullmatch(text, first.span[1], second.span[0])
    if join is None or first.is_now:
        return None
    closing = _CLOSE.match(text, second.span[1])
    opening = _FROM.search(text, max(0, first.span[0] - 12), first.span[0])
    if join.group(2) and not _BETWEEN.search(text, max(0, first.span[0] - 12),
                                             first.span[0]):
        return None  # "yesterday and last week": two times, listed together as ever
    if join.group(3) and closing is None:
        return None  # "先週から" alone: since last week
    return (opening.start() if opening else first.span[0],
            closing.end() if closing else second.span[1])


def _alone(text: str, end: _End, now: float) -> tuple[Span, Window] | None:
    """The range an end alone bounds: "until" it, "before" it, or it and まで, 까지, 为止,
    以前 (until), 之前, より前, 전에 (before)."""
    before = max(0, end.span[0] - 12)
    until = (_UNTIL.search(text, before, end.span[0])
             if not DOING.search(text, max(0, end.span[0] - 24), end.span[0]) else None) or (
        _TO.search(text, before, end.span[0]) if end.is_now else None)
    closing = _CLOSE.match(text, end.span[1])
    after = _EARLIER.match(text, end.span[1]) if not closing else None  # 上周五之前
    earlier = _BEFORE.search(text, before, end.span[0])
    if not (until or earlier or after or closing):
        return None
    if (earlier or after) and not until and not closing:
        if end.is_now:
            return None
        stop = math.nextafter(_start(end, now), -math.inf)
    else:
        stop = min(_end(end, -math.inf, now), now)
    opening = until or earlier or _TO.search(text, before, end.span[0])
    last = closing or after
    return ((opening.start() if opening else end.span[0],
             last.end() if last else end.span[1]), (-math.inf, stop))


def _between(first: _End, second: _End, now: float) -> Window:
    """The first and last moments (the last no later than ``now``) of the range from
    ``first`` to ``second``.

    >>> DAY = 86400.0
    >>> now = 1773921600.0  # Thursday 19 March: Wednesday 11 to Monday 16, not 18 to now
    >>> [round(t / DAY, 2) for t in _between(_End((0, 9), weekday=2), _End((13, 19), weekday=0),
    ...                                       now)]
    [20523.0, 20529.0]
    """
    start = _start(first, now)
    end = _end(second, start, now)
    if second.weekday is not None and first.window is not None \
            and first.window[1] - first.window[0] > 1.5 * DAY:
        # From a week, month or year to a day alone ("from last month to Wednesday"): the
        # latest such day, as alone, not the first Wednesday of last month (the first
        # from its start on, as 上周一到周三's Wednesday is last week's).
        end = max(end, _end(second, -math.inf, now))
    if first.weekday is not None and end > last_moment(local_date(now)):
        # Two days alone whose second is still to come ("from Wednesday to Monday" on a
        # Thursday): the week before, which holds both, not the first until now.
        start = day_start(local_date(start) - timedelta(days=7))
        end = _end(second, start, now)
    if start > end and first.window is not None and second.window is not None:
        # Named the later first ("from March 5 to March 2"): both, not since the first.
        start, end = second.window[0], max(first.window[1], second.window[1])
    return start, min(end, now)


def _start(end: _End, now: float) -> float:
    # A range's first moment: a day of the week alone is the latest before today, as "on
    # Wednesday" and --until wednesday read it ("until Wednesday" asked on a Wednesday is
    # up to last week's, not until now).
    if end.is_now:
        return now
    if end.window is not None:
        return end.window[0]
    return day_start(latest_day(end.weekday or 0, now))


def _end(end: _End, start: float, now: float) -> float:
    # A range's last moment: a day of the week alone is the first from ``start`` on (or,
    # with no start, the latest before today).
    if end.is_now:
        return now
    if end.window is not None:
        return end.window[1]
    if start == -math.inf:
        return last_moment(local_date(_start(end, now)))
    first = local_date(start)
    try:
        day = first + timedelta(days=((end.weekday or 0) - first.weekday()) % 7)
    except OverflowError:  # after 9999-12-31: after now, which ends the range
        return math.inf
    return last_moment(day)


