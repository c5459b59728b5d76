"""Days of the week a question names as days gone: "the Monday before last", 上周五,
先週の金曜日, 지난 금요일, 지난주 금요일, 这周一, 今週の月曜日, 이번 주 월요일 ("last Saturday"
and "on Tuesday" are read in :mod:`~harkback.stages.when`).

지난 금요일, as "last Friday", is the latest Friday before today; a day of last week (上周五,
先週の金曜日, 지난주 금요일) is that day of the calendar week before this one (from Monday);
of the week before last (上上周五, 先々週の金曜日, 지지난주 금요일) that day a week earlier, as
지지난 금요일 is the Friday before last; a day of this week (这周一, 本周三, 今週の月曜日, 이번
주 월요일, "this Monday", "on Monday this week"; 这礼拜一 and 上礼拜五 as 这周一 and 上周五)
that day once it has come (asked on a Wednesday, 这周五 is this week so far; "since" it,
这周五起, is from it: nothing yet). A part of the day after it (这周三下午, 上周五晚上)
frames it: the day is read whole.
Without its day, 上周 alone is last week: a number after it that counts (上周一起, together,
but for 从上周一起 and 上周一起我: since Monday; 上周三个 bug, three bugs; 这周三天, three
days) or a word 日 or 天 begins (上周日志, last week's logs; 这周天天, every day) is no day,
nor is 一 of 一共 (in all), 一定 (must), 一般.

>>> DAY = 86400.0
>>> now = 1773921600.0  # Thursday 2026-03-19 12:00 UTC
>>> [round(a / DAY) for _, (a, _) in weekday_windows("上周五做了什么", now)]  # 13 March
[20525]
>>> weekday_windows("上周一起讨论的方案", now)
[]
>>> [round(a / DAY) for _, (a, _) in weekday_windows("从上周一起", now)]  # since 9 March
[20521]
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from harkback.stages.cjk_times import ZH_NOT_THIS
from harkback.stages.local_days import day_start, days_before, last_moment, local_date
from harkback.stages.since_words import opens_since, runs_on
from harkback.stages.weekend_words import NOT_TWICE

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH = "一二三四五六日"
_JA = "月火水木金土日"
_KO = "월화수목금토일"
# What follows a day number that makes it no day: a count (上周三个 bug, 这周三天, 这周三十个,
# 上周三批数据), a word 一 begins (一共, 一定, 一般, 一半, 一下; 一起, together, unless
# since Monday: _together) or 日 begins (日报, 日记, 本周日均, 上周日本), or 天天. Read as
# no day, the week is still listed. A time of day after the day is no count (上周五十点:
# Friday at ten), nor a word the day begins (上周五半夜, 上周五报的, 上周五批量, 上周五批准的,
# 上周五下午, 上周五下载的). 起 after a day is "since" it (上周三起, 上周五起我做了什么:
# calendar_words reads it) but for a count of incidents (上周五起事故, 上周三起严重故障: five
# accidents, three serious faults).
_COUNTED = (r"(?=[\u4e00-\u9fff]{0,2}(?:事故|事件|案|纠纷|糾紛|故障|火灾|火災|车祸|車禍"
            r"|投诉|投訴|冲突|衝突|意外|诈骗|詐騙|袭击|襲擊|爆炸|泄露|洩露|泄漏|洩漏"
            r"|违规|違規|违章|違章))")
_DAY_AFTER = (r"(?![个個次位件种種条條直些样樣点點名人台年月周週志期常子程气氣"
              r"遍份篇项項场場轮輪趟]|批(?![量准準注复復])"
              r"|[一二三四五六七八九十两兩百千万萬]+(?![一二三四五六七八九十两兩]*[点點时時])"
              r"|(?<!日)天|(?<=一)[共定切般半]|(?<=一)下(?!午)"
              rf"|(?<=[二三四五六])起{_COUNTED}"
              r"|(?<=日)[报報记記历曆均活本语語文元])")
_BEFORE_LAST = re.compile(rf"\b({'|'.join(WEEKDAYS)})\s+before\s+last\b")
# A part of the day after the day frames it (上周五晚上, 这周三下午): that day is read whole,
# the words no topic.
_DAYTIME = r"(?:\s?(?:早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜裡))?"
# Each with the word that makes it the week before last (上上周五, 先々週の金曜日, 지지난주
# 금요일) or the day before last (지지난 금요일), then the day.
_LAST_WEEKS = (
    # Chinese: 上周 and a day number, not a count or a longer word.
    re.compile(NOT_TWICE + r"(上?)(?:上周|上週|上星期|上个星期|上個星期|上礼拜|上禮拜|上个礼拜"
               r"|上個禮拜)([一二三四五六日天])" + _DAY_AFTER + _DAYTIME),
    re.compile(rf"先(々?)週の?([{_JA}])曜(?:日)?"),
    re.compile(rf"{NOT_TWICE}(지?)(?:지난|저번)\s?주\s?([{_KO}])요일"),
)
# A day of this week (这周一, 本周三, 今週の月曜日, 이번 주 월요일).
_THIS_WEEK = (
    re.compile(r"(?:这一?周|這一?週|这一?个星期|這一?個星期|这星期|這星期|这个?礼拜|這個?禮拜"
               rf"|{ZH_NOT_THIS}本周|{ZH_NOT_THIS}本週|本星期)([一二三四五六日天]){_DAY_AFTER}"
               + _DAYTIME),
    re.compile(rf"今週の?([{_JA}])曜(?:日)?"),
    re.compile(rf"이번\s?주\s?([{_KO}])요일"),
    # English: "this Monday", "on Monday this week" (that day, not the week); not a name
    # with a dot after it ("this monday.com board": a product).
    re.compile(rf"\bthis\s+({'|'.join(WEEKDAYS)})\b(?!\.\w)"),
    re.compile(rf"\b(?:on\s+)?({'|'.join(WEEKDAYS)})\s+(?:of\s+)?this\s+week\b"),
)
_LATEST = re.compile(rf"{NOT_TWICE}(지?)(?:지난|저번)\s([{_KO}])요일")
# 一起 after a week is "together" (上周一起讨论的方案) but where it is "since Monday": 从 or
# 自 before it (从上周一起, 自上周一起), or a subject, a comma, the end or "until now" after
# it (上周一起我做了什么, --since 上周一起, 上周一起至今, 上周一起到现在; not 上周一起到北京:
# went to Beijing together).
_SINCE_MONDAY = re.compile(r"起(?:[我你他她咱，,。.？?！!、]|\s*$"
                           r"|\s*(?:一直)?[到至]\s*(?:现在|現在|目前|今))")


def _together(text: str, match: re.Match[str]) -> bool:
    """Whether the day 一 ``match`` read is 一 of 一起 (together), not Monday."""
    if not (match.group(0).endswith("一") and text.startswith("起", match.end())):
        return False
    return not (opens_since(text, match.start()) or _SINCE_MONDAY.match(text, match.end()))


def latest_day(index: int, now: float) -> date:
    """The latest local day of the week ``index`` (0: Monday) before ``now``'s day: a
    week back when today is one."""
    return days_before(now, (local_date(now).weekday() - index) % 7 or 7)


def _index(day: str) -> int:
    # The day of the week a day's name or a CJK day number says (天 and 日 are Sunday).
    if day in WEEKDAYS:
        return WEEKDAYS.index(day)
    for names in (_ZH, _JA, _KO):
        if day in names:
            return names.index(day)
    return 6  # 天


def weekday_windows(text: str, now: float
                    ) -> list[tuple[re.Match[str], tuple[float, float]]]:
    """Each day of the week of lower-cased ``text`` this module reads, with its window
    (that whole local day, ending no later than ``now``)."""
    monday = local_date(now) - timedelta(days=local_date(now).weekday())
    found = []
    for match in _BEFORE_LAST.finditer(text):
        found.append((match, latest_day(WEEKDAYS.index(match.group(1)), now) - timedelta(7)))
    for pattern in _LAST_WEEKS:
        for match in pattern.finditer(text):
            if _together(text, match):
                continue
            back = 14 if match.group(1) else 7
            found.append((match, monday - timedelta(days=back - _index(match.group(2)))))
    # Still to come (这周五 on a Wednesday): its date is not needed, nor taken (this week's
    # Sunday asked on Friday 9999-12-31 would be in the year 10000).
    coming: list[re.Match[str]] = []
    since: list[tuple[re.Match[str], float]] = []
    for pattern in _THIS_WEEK:
        for match in pattern.finditer(text):
            if _together(text, match):
                continue
            ahead = _index(match.group(1)) - local_date(now).weekday()
            if ahead <= 0:
                found.append((match, local_date(now) + timedelta(days=ahead)))
            elif runs_on(text, match.span()) and (start := _coming(now, ahead)) is not None:
                # Since a day still to come (这周五起 on a Thursday) is from it: nothing yet,
                # as --since a later date lists nothing (it was this week so far).
                since.append((match, start))
            else:
                coming.append(match)
    for match in _LATEST.finditer(text):
        earlier = timedelta(days=7 if match.group(1) else 0)
        found.append((match, latest_day(_index(match.group(2)), now) - earlier))
    # A day still to come is this week so far, as 这周 alone is.
    return [(match, (day_start(day), min(last_moment(day), now))) for match, day in found] \
        + [(match, (day_start(monday), now)) for match in coming] \
        + [(match, (start, now)) for match, start in since]


def _coming(now: float, ahead: int) -> float | None:
    """The start of the local day ``ahead`` days after ``now``'s, None past the calendar's
    end (this week's Sunday asked on Friday 9999-12-31)."""
    try:
        return day_start(local_date(now) + timedelta(days=ahead))
    except (OverflowError, ValueError, OSError):
        return None
