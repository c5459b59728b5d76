"""Weekends a question names: "last weekend", "over the weekend", "two weekends ago",
"the weekend before last", 上周末, 先週末, 지난 주말, 저번 주말 (上上周末, 先々週末, 지지난 주말:
the one before).

A weekend is the local Saturday and Sunday of a calendar week (from Monday, as "last week"
is read): :func:`weekend`. "Weekend" is also a noun's modifier ("who takes over the
weekend shift", "the last weekend deploy"): there no time is read and the words are
searched (:func:`weekend_time`).

>>> DAY = 86400.0
>>> now = 1772712000.0  # Thursday 2026-03-05 12:00 UTC
>>> [(round(a / DAY), round(b / DAY)) for _, (a, b) in weekend_windows("two weekends ago", now)]
[(20505, 20507)]
>>> weekend_windows("who takes over the weekend shift", now)
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date, timedelta

from harkback.stages.local_days import day_start, last_moment, local_date
from harkback.stages.text.irregular import irregular_forms
from harkback.stages.text.tokens import STOPWORDS

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
OF_MONTH = (rf"\s+(?:of|in)\s+(?:the\s+)?(?:(?:last|previous|this)\s+month"
            rf"|{'|'.join(MONTHS)})\b")
"""What places a week or weekend in a month ("last week of February": no week just past)."""
_OF_MONTH = re.compile(OF_MONTH)
# "Last weekend" is the calendar's, as "last Saturday" is that day: seven days back would
# take in the week after it. "The last weekend of February" is February's
# (:mod:`~harkback.stages.month_parts`), not the one just past.
LAST_WEEKEND = re.compile(r"\b(?:last|previous)\s+weekend\b")
# "Over the weekend" ("what did we change over the weekend?") is the latest one begun
# (:func:`latest_weekend`). "Weekend" alone, as 周末, 週末 and 주말 alone, is a topic
# ("the weekend cron job", "周末值班表", "周末的定时任务"): searched, no time; only a
# weekend marked as this or last one (这周末, 上周末, 今週末, 이번 주말) is a time. "The
# weekend" that words after it place ("of March 7th", "before last", "after the release")
# is no latest one: those are searched, or read on their own ("before last").
OVER_WEEKEND = re.compile(r"\bover\s+the\s+weekend\b(?!\s+(?:of|before|after)\b)")
_COUNT = (r"(\d{1,2}|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of"
          r"|couple of)")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2}
WEEKENDS_AGO = re.compile(rf"\b{_COUNT}\s+weekends?\s+ago\b")
BEFORE_LAST = re.compile(r"\bweekend\s+before\s+last\b")
# Each last week or month word is read after this: 上上周, 上上个月, 지지난주, 지지난달 are
# the week or month before last (read as such), not last week's or month's. Nor is 上 the
# end of a word before it: 马上 (at once: 马上周末, the weekend is near), 加上 (plus: 加上周末,
# weekends too), 登上 (onto: 登上月球, onto the moon), 晚上 (evening), 线上 (online: 线上周报),
# 基本上 (basically), 实际上 (in fact) ... A verb that takes last week as its object is no
# such word: 比上周, 跟上周, 从上周 (than, as, since last week), 关上周的工单 (close last week's
# tickets), 合上周的 PR, 贴上周的日志 (paste last week's log) are last week; so are words
# ending in 本, 实, 加, 马 or 线 that are not 基本上, 事实上, 加上, 马上 or 线上: 那本上周买的书
# (本, a book's measure word), 日本上周, 落实上周的决定 (carry out last week's decision), 核实,
# 参加上周的评审 (attend last week's review), 添加, 增加, 木马上周 (a trojan), 上线上周的版本
# (ship last week's build). Each word it comes before starts with one of NOT_TWICE_FIRST:
# the look-ahead lets the engine pass every other character without trying the six
# look-behinds there (10,000 characters of English: 10 ms a pattern; tests/stages/
# test_not_twice.py checks that no word read after it starts otherwise).
NOT_TWICE_FIRST = "上先지저这這本今이"
NOT_TWICE = (rf"(?=[{NOT_TWICE_FIRST}])"
             r"(?<![上지登爬赶遇碰穿戴挂楼桌墙网身路际面早晚顶])(?<![基根]本)(?<!事实)"
             r"(?<!(?<![参增添追附更])加)(?<!(?<![木宝黑斑河野骏])马)(?<!(?<!上)线)")
# Last weekend: it holds last week's words (上周, 先週, 지난 주), read then within it only.
CJK_LAST_WEEKEND = re.compile(NOT_TWICE + r"(?:上周末|上週末|上个周末|上個週末|上個周末|先週末"
                              r"|(?:지난|저번)\s?주말)")
# The weekend before last: 上上周末, 先々週末, 지지난 주말 (two weekends back).
CJK_WEEKEND_BEFORE_LAST = re.compile(NOT_TWICE + r"(?:上上周末|上上週末|上上个周末|上上個週末"
                                     r"|上上個周末|先々週末|지지난\s?주말)")
_FOLLOWER = re.compile(r"\s*([a-z]+)")
# Words after a time that a modified noun never is (the stopwords hold the commonest):
# "what did I fix last weekend around the auth module" is last weekend's work.
_NOT_NOUNS = frozenset(
    "around besides beside regarding concerning involving without except apart via near "
    "across along within among despite upon inside outside behind like unlike per toward "
    "towards since till already yet either anyway though exactly mostly maybe perhaps "
    "probably instead together alone someone somebody anyone anybody everyone everybody "
    "nobody everything nothing".split())


def weekend(today: date, weeks_back: int = 1) -> tuple[float, float] | None:
    """The local weekend, Saturday's midnight to just before Monday's, of the calendar week
    (from Monday, as "last week" is read) ``weeks_back`` weeks before ``today``'s: 1 is
    last weekend, 0 this week's (ahead on a weekday); None past the calendar's ends.

    >>> DAY = 86400.0
    >>> [round(w / DAY, 9) for w in weekend(date(2026, 3, 5))]  # asked on a Thursday
    [20512.0, 20514.0]
    >>> weekend(date(9999, 12, 31), 0) is None  # a Friday: its Saturday is in year 10000
    True
    """
    try:
        saturday = today + timedelta(days=5 - today.weekday() - 7 * weeks_back)
        sunday = saturday + timedelta(days=1)
    except OverflowError:
        return None
    return (day_start(saturday), last_moment(sunday))


def latest_weekend(today: date) -> tuple[float, float] | None:
    """The latest local weekend begun by ``today``: this week's on a Saturday or Sunday,
    else the one just past (:func:`weekend`). What "this weekend" and "over the weekend"
    name: asked of past sessions on a Wednesday, "what did I do this weekend?" means the
    Saturday and Sunday just gone, not the ones to come, which no session has.

    >>> DAY = 86400.0
    >>> [round(w / DAY, 9) for w in latest_weekend(date(2026, 3, 5))]  # a Thursday
    [20512.0, 20514.0]
    >>> [round(w / DAY, 9) for w in latest_weekend(date(2026, 3, 8))]  # that Sunday
    [20519.0, 20521.0]
    """
    return weekend(today, 0 if today.weekday() >= 5 else 1)


def weekend_time(match: re.Match[str]) -> bool:
    """Whether the "weekend" ending ``match`` names a time, not a noun's modifier: it ends
    the question, or punctuation ("weekend's", "weekend?"), a function word ("over the
    weekend and ...") or a verb's past ("... weekend broke prod") follows it; another word
    ("the weekend shift", "last weekend deploys") is what it describes, and a month after
    it places it there ("the last weekend of February": :mod:`~harkback.stages.month_parts`).

    >>> weekend_time(re.search("over the weekend", "what broke over the weekend?"))
    True
    >>> weekend_time(re.search("over the weekend", "who takes over the weekend shift"))
    False
    """
    if match.string[match.end():match.end() + 1] == "-" or _OF_MONTH.match(match.string,
                                                                           match.end()):
        return False  # "weekend-shift"; "the last weekend of february" is february's
    follower = _FOLLOWER.match(match.string, match.end())
    if follower is None:
        return True
    word = follower.group(1)
    forms = irregular_forms(word)
    return (word in STOPWORDS or word in _NOT_NOUNS or word.endswith("ed")
            or (bool(forms) and word in forms[1:] and word != forms[0]))


def weekend_windows(text: str, now: float
                    ) -> list[tuple[re.Match[str], tuple[float, float]]]:
    """Each weekend of lower-cased ``text`` read as a time, with its window (ending no
    later than ``now``): last weekend (上周末, 지난 주말), N weekends ago and the weekend
    before last the calendar's, over the weekend the latest begun."""
    today = local_date(now)
    found = []
    for match, back in _said(text):
        days = latest_weekend(today) if back is None else weekend(today, back)
        if days is not None and days[0] <= now:
            found.append((match, (days[0], min(days[1], now))))
    return found


def _said(text: str) -> Iterator[tuple[re.Match[str], int | None]]:
    # Each weekend expression and the weeks back it names (None: the latest begun).
    for match in LAST_WEEKEND.finditer(text):
        if weekend_time(match):
            yield match, 1
    yield from ((match, 1) for match in CJK_LAST_WEEKEND.finditer(text))
    yield from ((match, 2) for match in CJK_WEEKEND_BEFORE_LAST.finditer(text))
    for match in OVER_WEEKEND.finditer(text):
        if weekend_time(match):
            yield match, None
    for match in WEEKENDS_AGO.finditer(text):
        count = match.group(1)
        yield match, int(count) if count.isdigit() else _NUMBERS[count]
    yield from ((match, 2) for match in BEFORE_LAST.finditer(text))


def weekend_expressions(text: str) -> Iterator[re.Match[str]]:
    """Each weekend expression of lower-cased ``text`` read as a time (its words are time
    words, not searched)."""
    yield from (match for match, _ in _said(text))
