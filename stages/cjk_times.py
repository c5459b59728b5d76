"""Chinese, Japanese and Korean words for times counted back from now: 上周, 先週, 지난주
(last week), 上上个月, 先々月, 지지난달 (the month before last), 3天前, 三天前, 3日前, 3일 전
(three days ago), 3小时前, 2時間前, 3시간 전 (hours ago), 几天前, 数日前, 며칠 전 (a few days
ago), 昨天, 一昨日, 그저께, and the days back until now: 过去一年, 一年来, 過去1年, 지난 1년 (the
past year), 这几天, この数日, 요 며칠 (the past few days) ... :mod:`~harkback.stages.when`
reads them into windows.

>>> [m.group(0) for m in re.finditer(CJK_LAST_WEEK, "上周和上上周, 马上周末")]
['上周']
>>> [(m.group(0), days) for m, days in cjk_spans("过去一年, 最近两周, 요 며칠")]
[('过去一年', 365.0), ('最近两周', 14.0), ('요 며칠', 3.0)]
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from harkback.stages.weekend_words import NOT_TWICE

# The same expressions in Chinese, Japanese and Korean ("上周", "先週", "지난주": last
# week; "3天前", "3日前", "3일 전": three days ago). Each maps to its unit (of days).
# 저번 주 is 지난 주 ("the time before"); a longer word is no week or month: 上周期 (the
# previous cycle), 지난 주문 (a past order), 지난 주요 장애 (past major outages), 지난 주기
# (the previous cycle), 주주총회 (shareholders' meeting), 달러, 달리기 (a run).
# 이번 주 (this week) alike: 이번 주문 is this order, 이번 주요 변경 this major change.
# 礼拜 is a week as 星期 is (上礼拜, 上个礼拜): not 上礼拜堂 (to go to church).
NOT_WEEK = r"(?![문소식장제요인택차사류변위권행기석주])"
"""What follows 주 (week) in a longer Korean word: 주문, 주요, 주기, 주주총회."""
NOT_MONTH = r"(?![러력성리])"
"""What follows 달 (month) in a longer Korean word: 달러, 달력, 달성, 달리기."""
ZH_NOT_WEEK = r"(?![期边围转长年])"
"""What follows 周 (week) in a longer Chinese word: 上周期, 本周期 (the previous, this cycle)."""
ZH_NOT_MONTH = r"(?![台球亮光饼])"
"""What follows 上月 in a longer Chinese word: 登上月台 (onto the platform), 登上月球."""
ZH_NOT_THIS = r"(?<![日版资資基根成样樣文剧劇课課账賬脚腳范範标標原书書])"
"""What comes before 本 that ends a longer Chinese word with it, no "this": 日本周一 (Japan
on Monday), 版本周五发布 (the version ships on Friday), 脚本 (a script), 成本 (cost)."""
CJK_LAST_WEEK = (NOT_TWICE + rf"(?:上周{ZH_NOT_WEEK}|上星期|上个星期|上個星期|先週"
                 r"|上礼拜(?![堂寺])|上禮拜(?![堂寺])|上个礼拜|上個禮拜"
                 rf"|(?:지난|저번)\s?주{NOT_WEEK})")
CJK_LAST_MONTH = (NOT_TWICE + rf"(?:上个月|上個月|上月{ZH_NOT_MONTH}|先月"
                  rf"|(?:지난|저번)\s?달{NOT_MONTH})")
# 지난해 is last year, with its particle (지난해에, 지난해부터) or alone: not 지난 해결 (a past
# fix) nor 지지난해 (the year before last).
_KO_YEAR = r"\s?해(?=[에의는도와만랑엔]|부터|까지|보다|처럼|[^가-힣]|$)"
CJK_LAST_YEAR = rf"去年|(?<![一昨])昨年|(?<!재)작년|(?<!지)(?:지난|저번){_KO_YEAR}"
# The one before last: 上上周, 先々週, 지지난주; 上上个月, 先々月, 지지난달; 一昨年, 재작년,
# 지지난해 (the year before last: not 昨年 and 작년 inside them, last year, nor inside
# 一昨昨年, さきおととし: three years back). 前年 is the year before
# last in Chinese; in Japanese the previous year, and kana just before it or anywhere after
# it in its sentence (前年の, 前年実績は, 売上の前年実績) make it Japanese: not read, nor in
# 前年比, 前年度, 前年同期 (year on year), 当前年份, 提前年底.
CJK_WEEK_BEFORE_LAST = (NOT_TWICE + rf"(?:上上周{ZH_NOT_WEEK}|上上星期|上上个星期|上上個星期"
                        r"|上上礼拜|上上禮拜|上上个礼拜|上上個禮拜"
                        rf"|先々週|지지난\s?주{NOT_WEEK})")
CJK_MONTH_BEFORE_LAST = (NOT_TWICE + rf"(?:上上个月|上上個月|上上月{ZH_NOT_MONTH}|先々月"
                         rf"|지지난\s?달{NOT_MONTH})")
CJK_YEAR_BEFORE_LAST = (r"一昨年|(?<!さき)おととし|재작년|지지난" + _KO_YEAR
                        + r"|(?<![\u3040-\u30ff提当當目之以空眼超大])前年"
                          r"(?![^。？！?!\n]*[\u3040-\u30ff])"
                          r"(?![轻輕纪紀级級龄齡份度同比限薪会會终終])")
# Three years back, as 大前天 is three days back: 大前年, 一昨昨年, さきおととし.
CJK_YEAR_THREE_BACK = r"大前年(?![轻輕纪紀级級龄齡份度同比])|一昨昨年|さきおととし"
# Each with its unit (of days) and how many units back it ends.
CJK_PAST = (
    (re.compile(CJK_LAST_WEEK), 7.0, 0),
    (re.compile(CJK_LAST_MONTH), 30.0, 0),
    (re.compile(CJK_LAST_YEAR), 365.0, 0),
    (re.compile(CJK_WEEK_BEFORE_LAST), 7.0, 1),
    (re.compile(CJK_MONTH_BEFORE_LAST), 30.0, 1),
    (re.compile(CJK_YEAR_BEFORE_LAST), 365.0, 1),
    (re.compile(CJK_YEAR_THREE_BACK), 365.0, 2),
)
# Each day counted back by its own word: 前天, 一昨日, 그저께 (two days back) hold 昨天,
# 昨日 and 어제's neighbours, and are read whole (``when.time_spans``); 大前天, 一昨昨日,
# 그끄저께 are three days back. 今日头条 is a news app, no today.
CJK_DAYS = (
    (re.compile(r"昨天|昨日|어제"), 1),
    (re.compile(r"前天|一昨日|おととい|그저께|그제"), 2),
    (re.compile(r"大前天|一昨昨日|さきおととい|그끄저께|그끄제"), 3),
    (re.compile(r"今天|今日(?!头条|頭條)|今朝|오늘(?!날)"), 0),  # 오늘날: nowadays
)


# The unit words of a count (of days), each with what may not follow it in a longer word
# (달러, 주문; 일 with 에, 날 or 자 after is as likely a day of the month: 지난 3일에). A
# month is 个月, ヶ月, 개월 or 달 (三月 is March); 24小时, 24時間 a day.
_CJK_UNITS = {
    "天": 1.0, "日": 1.0, "日間": 1.0, "周": 7.0, "週": 7.0, "週間": 7.0, "星期": 7.0,
    "个星期": 7.0, "個星期": 7.0, "礼拜": 7.0, "禮拜": 7.0, "个礼拜": 7.0, "個禮拜": 7.0,
    "个月": 30.0, "個月": 30.0, "か月": 30.0, "ヶ月": 30.0, "カ月": 30.0, "ケ月": 30.0,
    "ヵ月": 30.0, "箇月": 30.0, "年": 365.0, "年間": 365.0,
    "小时": 1 / 24, "小時": 1 / 24, "个小时": 1 / 24, "個小時": 1 / 24, "時間": 1 / 24,
}
_KO_UNITS = {
    "일": (1.0, r"(?!\s?(?:에|날|자))"), "주일": (7.0, ""), "주간": (7.0, ""),
    "주": (7.0, NOT_WEEK), "개월": (30.0, ""), "달": (30.0, NOT_MONTH),
    "년": (365.0, r"(?![생도대])"), "해": (365.0, ""), "시간": (1 / 24, ""),
}
_UNIT_DAYS = _CJK_UNITS | {word: days for word, (days, _) in _KO_UNITS.items()}
"""The days of each unit word, Chinese, Japanese and Korean."""
_CJK_UNIT = "(" + "|".join(sorted(_CJK_UNITS, key=len, reverse=True)) + ")"
_KO_UNIT = "(" + "|".join(word + guard for word, (_, guard)
                          in sorted(_KO_UNITS.items(), key=lambda item: -len(item[0]))) + ")"
# A unit is no time inside a longer word: 几天气 (weather), 年级 (a school year), 年轻.
_NOT_UNIT_WORD = r"(?![气氣数數期末年级級纪紀龄齡轻輕度生报報本志然才使空堂])"
_ZH_DIGITS = "一二两兩三四五六七八九十"
_NUMBER = rf"\d{{1,3}}(?:[、〜~-]\d{{1,3}}|,\d{{1,2}}(?!\d))?|[{_ZH_DIGITS}]{{1,3}}"
"""A number (3, 十二, 两三, 2、3 or 3,4: two or three, three or four; 1,000 is none)."""
_NOT_IN_NUMBER = rf"(?<![\d第几幾数數{_ZH_DIGITS}])(?<!\d[,.])"
"""Not the tail of a longer number: 3000000天, 第三天, 几十天 (tens), 1,000天, 1.5天."""
_FEW = "几幾数數些몇며칠"
"""The words of a few (几天, 数日, 这些天, 몇 주, 며칠): three for a span back, as "the past
few days"; "a few" for a time ago, as "a few days ago" (:data:`~harkback.stages.when.VAGUE`)."""

# The days back until now a count of units names: 过去一年, 過去1年, 최근 1년, 지난 한 해 (the
# past year, 365 days), 近一个月, 最近一周, 지난 일주일, ここ1週間, 近半年 (half a year),
# 过去24小时 (a day), 一年来, 三个月以来 (the past year, three months). A few of them (几,
# 数, 些, 몇; 这几天, 这些天, 最近几天, この数日, ここ2、3日, 요 며칠) are three, as "the
# past few days" reads; 这两天 two. 接近一个月, 将近一年, 几近一年, 逼近一个月 are nearly as
# long, no time; 一年来一次 (once a year) and 三天来不及 (three days are too few) none.
_COUNT = rf"({_NUMBER}|半|几|幾|数|數|些|한|두|세|네|몇|일)"
_CJK_SPANS = (
    # Chinese and Japanese: after 过去, 最近, 近, 直近, ここ, この (这 only before a few).
    re.compile(r"(?:(?:过去|過去|最近)的?|(?<![接将將靠附临臨几幾逼])近|直近|ここ|この)\s*" + _COUNT
               + rf"\s*{_CJK_UNIT}{_NOT_UNIT_WORD}"),
    # Not 日 starting a word: 这些日常任务, 这些日程 (these daily tasks, schedules), 日元.
    re.compile(rf"(?:这|這)\s*(几|幾|两|兩|些)\s*{_CJK_UNIT}{_NOT_UNIT_WORD}"
               r"(?!(?<=日)[常程历曆语語文元记記])"),
    re.compile(rf"(?=[\d{_ZH_DIGITS}半几幾数數些])(?<![这這那上下本每前后後])"
               + _NOT_IN_NUMBER + _COUNT
               + rf"\s*{_CJK_UNIT}(?:以来|以來|来|來)(?![不得了的一二两三几次回过過])"),
    # Korean: after 지난, 최근, 요 (요 며칠, 요 몇 주), with 동안 or 간 (during) after.
    re.compile(rf"(?:지난|최근|(?<![가-힣])요)\s?{_COUNT}\s?{_KO_UNIT}(?:\s?(?:동안|간))?"),
    re.compile(r"(?:지난|최근|(?<![가-힣])요)\s?(며칠)(?:\s?(?:동안|간))?"),
)
_NUMBERS = {"一": 1, "两": 2, "兩": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
            "八": 8, "九": 9, "한": 1, "일": 1, "두": 2, "세": 3, "네": 4}


def _count(written: str) -> float:
    """The number a count of :data:`_COUNT` says: 十二 is 12, 二十 20, 半 a half, a few 3,
    and two numbers side by side (三四天, 两三年, 2、3日, 二三十, 十一二: three or four, two
    or three, thirty, twelve) the larger.

    >>> [_count(c) for c in ("3", "十", "十二", "二十", "两", "几", "한", "三四", "两三", "2、3")]
    [3, 10, 12, 20, 2, 3, 1, 4, 3, 3]
    >>> [_count(c) for c in ("二三十", "十一二")]
    [30, 12]
    """
    if written.isdigit():
        return int(written)
    if written[0].isdigit():
        return max(int(number) for number in re.findall(r"\d+", written))
    if written[0] in _FEW:
        return 3
    if written == "半":
        return 0.5
    tens, _, ones = written.partition("十")
    if "十" not in written:
        return _larger(written, 1)
    return (_larger(tens, 1) if tens else 1) * 10 + _larger(ones, 0)


def _larger(numbers: str, none: int) -> int:
    # The larger of numbers side by side (两三: 3), ``none`` when there are none.
    return max((_NUMBERS.get(number, 1) for number in numbers), default=none)


def cjk_spans(text: str) -> Iterator[tuple[re.Match[str], float]]:
    """Each span back until now of lower-cased ``text`` (过去一年, 最近一周, 这几天, 지난 1년,
    この数日), with the days it reaches back."""
    for pattern in _CJK_SPANS:
        for match in pattern.finditer(text):
            count, unit = (match.group(1), "일") if len(match.groups()) == 1 \
                else match.groups()
            yield match, _count(count) * _UNIT_DAYS[unit]


# A time counted back: 3天前, 三天前, 两周前, 一个月前, 3日前, 3일 전, 두 달 전, 3小时前,
# 三个小时前, 2時間前, 3시간 전 (hours ago), and the vague
# 几天前, 数日前, 며칠 전, 前几天 (a few days ago), 前两天 (a couple of days ago). Not a
# number ending a longer one (3000000天前, 第三天前) nor 前 starting a word (两周前端: two
# weeks of front end; 三天前后, 전화 after 일: a phone call). A verb after 前 is no such
# word: 三天前提交 (submitted, not 前提: a premise), 前进行, 前面试, 前线上, 前任务, 前列出.
_ZH_NOT_AGO = (r"(?![端台后後者缀綴景途沿辈輩夕]|提(?![交出到醒供过過及])|[进進](?![行入])"
               r"|面(?![试試])|[线線](?!上)|任(?![务務职職])|列(?!出))")
# 전 starting a Korean word (전화, 전체, 전부: all), but not 전부터 (since ... ago).
_KO_NOT_AGO = r"(?![화체략송달혀문쟁용자환기력공원]|부(?!터))"
_AGO_UNITS = {"day": 1.0, "week": 7.0, "month": 30.0, "year": 365.0, "hour": 1 / 24}
_AGO = (
    re.compile(rf"(?=[\d{_ZH_DIGITS}几幾数數]){_NOT_IN_NUMBER}({_NUMBER}|几|幾|数|數)\s*"
               rf"{_CJK_UNIT}前{_ZH_NOT_AGO}"),
    re.compile(rf"(?=[\d한두세네몇])(?<![\d가-힣])(\d{{1,3}}|한|두|세|네|몇)\s?{_KO_UNIT}\s?전"
               + _KO_NOT_AGO),
    re.compile(r"(?=며)(?<![가-힣])(며칠)\s?전" + _KO_NOT_AGO),
    re.compile(r"(?=前)(?<![之以提此目当當眼])前(几|幾|两|兩|些)(天|日)子?"),
)


def cjk_agos(text: str) -> Iterator[tuple[re.Match[str], str, str]]:
    """Each time counted back of lower-cased ``text`` (3天前, 三天前, 两个月前, 3일 전,
    几天前, 前几天, 며칠 전, 3小时前), with its count as English writes it ("3", "a few", "a
    couple of") and its unit ("hour", "day", "week", "month", "year"): read as "3 days ago"
    is.

    >>> [(m.group(0), count, unit) for m, count, unit in cjk_agos("两个月前, 前几天, 两周前端")]
    [('两个月前', '2', 'month'), ('前几天', 'a few', 'day')]
    """
    for pattern in _AGO:
        for match in pattern.finditer(text):
            written = match.group(1)
            days = _UNIT_DAYS[match.group(2) if written != "며칠" else "일"]
            name = next(name for name, length in _AGO_UNITS.items() if length == days)
            if match.group(0).startswith("前"):
                count = "a couple of" if written in "两兩" else "a few"
            else:
                count = "a few" if written[0] in _FEW else str(round(_count(written)))
            yield match, count, name
