"""Chinese, Japanese and Korean words for times counted back from now: 上周, 先週, 지난주
(last week), 上上个月, 先々月, 지지난달 (the month before last), 3天前, 3日前, 3일 전 (three
days ago), 昨天, 一昨日, 그저께, and the days back until now: 过去一年, 過去1年, 지난 1년 (the
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
# 上月 is no month before 台, 球, 亮, 光 or 饼 (登上月台, onto the platform).
# 이번 주 (this week) alike: 이번 주문 is this order, 이번 주요 변경 this major change.
NOT_WEEK = r"(?![문소식장제요인택차사류변위권행기석주])"
"""What follows 주 (week) in a longer Korean word: 주문, 주요, 주기, 주주총회."""
NOT_MONTH = r"(?![러력성리])"
"""What follows 달 (month) in a longer Korean word: 달러, 달력, 달성, 달리기."""
ZH_NOT_WEEK = r"(?![期边围转长年])"
"""What follows 周 (week) in a longer Chinese word: 上周期, 本周期 (the previous, this cycle)."""
CJK_LAST_WEEK = (NOT_TWICE + rf"(?:上周{ZH_NOT_WEEK}|上星期|上个星期|上個星期|先週"
                 rf"|(?:지난|저번)\s?주{NOT_WEEK})")
CJK_LAST_MONTH = (NOT_TWICE + r"(?:上个月|上個月|上月(?![台球亮光饼])|先月"
                  rf"|(?:지난|저번)\s?달{NOT_MONTH})")
# 지난해 is last year, with its particle (지난해에, 지난해부터) or alone: not 지난 해결 (a past
# fix) nor 지지난해 (the year before last).
_KO_YEAR = r"\s?해(?=[에의는도와만랑엔]|부터|까지|보다|처럼|[^가-힣]|$)"
CJK_LAST_YEAR = rf"去年|(?<!一)昨年|(?<!재)작년|(?<!지)(?:지난|저번){_KO_YEAR}"
# The one before last: 上上周, 先々週, 지지난주; 上上个月, 先々月, 지지난달; 一昨年, 재작년,
# 지지난해 (the year before last: not 昨年 and 작년 inside them, last year). 前年 is the year before
# last in Chinese; in Japanese the previous year, and kana just before it or anywhere after
# it in its sentence (前年の, 前年実績は, 売上の前年実績) make it Japanese: not read, nor in
# 前年比, 前年度, 前年同期 (year on year), 当前年份, 提前年底.
CJK_WEEK_BEFORE_LAST = (NOT_TWICE + rf"(?:上上周{ZH_NOT_WEEK}|上上星期|上上个星期|上上個星期"
                        rf"|先々週|지지난\s?주{NOT_WEEK})")
CJK_MONTH_BEFORE_LAST = (NOT_TWICE + r"(?:上上个月|上上個月|上上月(?![台球亮光饼])|先々月"
                         rf"|지지난\s?달{NOT_MONTH})")
CJK_YEAR_BEFORE_LAST = (r"一昨年|おととし|재작년|지지난" + _KO_YEAR
                        + r"|(?<![\u3040-\u30ff提当當目之以空眼超大])前年"
                          r"(?![^。？！?!\n]*[\u3040-\u30ff])"
                          r"(?![轻輕纪紀级級龄齡份度同比限薪会會终終])")
# Each with its unit (of days) and how many units back it ends.
CJK_PAST = (
    (re.compile(CJK_LAST_WEEK), 7.0, 0),
    (re.compile(CJK_LAST_MONTH), 30.0, 0),
    (re.compile(CJK_LAST_YEAR), 365.0, 0),
    (re.compile(CJK_WEEK_BEFORE_LAST), 7.0, 1),
    (re.compile(CJK_MONTH_BEFORE_LAST), 30.0, 1),
    (re.compile(CJK_YEAR_BEFORE_LAST), 365.0, 1),
)
# (?<!\d): "3000000天前" is no time, not the "000天前" (today) its last digits would say.
CJK_AGO = (
    (re.compile(r"(?<!\d)(\d{1,3})\s*(?:天|日)前|(?<!\d)(\d{1,3})\s*일\s*전"), "day"),
    (re.compile(r"(?<!\d)(\d{1,3})\s*(?:周|週|个星期|個星期|週間)前|(?<!\d)(\d{1,3})\s*주\s*전"),
     "week"),
    (re.compile(r"(?<!\d)(\d{1,3})\s*(?:个月|個月|ヶ月|か月|カ月)前"
                r"|(?<!\d)(\d{1,3})\s*(?:개월|달)\s*전"), "month"),
)
# Each day counted back by its own word: 前天, 一昨日, 그저께 (two days back) hold 昨天,
# 昨日 and 어제's neighbours, and are read whole (``when.time_spans``); 大前天, 一昨昨日,
# 그끄저께 are three days back.
CJK_DAYS = (
    (re.compile(r"昨天|昨日|어제"), 1),
    (re.compile(r"前天|一昨日|おととい|그저께|그제"), 2),
    (re.compile(r"大前天|一昨昨日|さきおととい|그끄저께|그끄제"), 3),
    (re.compile(r"今天|今日|今朝|오늘(?!날)"), 0),  # 오늘날: nowadays
)


# The days back until now a count of units names: 过去一年, 過去1年, 최근 1년, 지난 한 해 (the
# past year, 365 days), 近一个月, 最近一周, 지난 일주일, ここ1週間. A few of them (几, 数, 몇;
# 这几天, 最近几天, この数日, 요 며칠) are three, as "the past few days" reads; 这两天 two.
# A month is 个月, ヶ月, 개월 or 달 (三月 is March). 接近一个月, 将近一年, 几近一年, 逼近一个月
# are nearly as long, no time; 지난 3일에 is as likely the 3rd of the month: 일 with 에 or 날
# after is not read.
_COUNT = r"(\d{1,3}|[一二两兩三四五六七八九十]{1,3}|几|幾|数|數|한|두|세|네|몇|일)"
_SPAN_UNITS = {
    "天": 1.0, "日": 1.0, "日間": 1.0, "일": 1.0,
    "周": 7.0, "週": 7.0, "週間": 7.0, "星期": 7.0, "个星期": 7.0, "個星期": 7.0,
    "礼拜": 7.0, "禮拜": 7.0, "주": 7.0, "주일": 7.0, "주간": 7.0,
    "个月": 30.0, "個月": 30.0, "か月": 30.0, "ヶ月": 30.0, "カ月": 30.0, "ケ月": 30.0,
    "ヵ月": 30.0, "箇月": 30.0, "개월": 30.0, "달": 30.0,
    "年": 365.0, "年間": 365.0, "년": 365.0, "해": 365.0,
}
_CJK_SPANS = (
    # Chinese and Japanese: after 过去, 最近, 近, 直近, ここ, この (这 only before a few).
    re.compile(r"(?:(?:过去|過去|最近)的?|(?<![接将將靠附临臨几幾逼])近|直近|ここ|この)\s*" + _COUNT
               + r"\s*(个星期|個星期|星期|礼拜|禮拜|个月|個月|か月|ヶ月|カ月|ケ月|ヵ月|箇月"
                 r"|日間|日|天|週間|周|週|年間|年)"
                 r"(?![气氣数數期末年级級纪紀龄齡轻輕度生报報本志])"),
    re.compile(r"(?:这|這)\s*(几|幾|两|兩)\s*(个星期|個星期|星期|个月|個月|天|周|週|年)"
               r"(?![气氣数數期末年级級纪紀龄齡轻輕度])"),
    # Korean: after 지난, 최근, 요 (요 며칠, 요 몇 주), with 동안 or 간 (during) after.
    re.compile(r"(?:지난|최근|(?<![가-힣])요)\s?" + _COUNT
               + rf"\s?(개월|달{NOT_MONTH}|주일|주간|주{NOT_WEEK}|해|년(?![생도대])"
                 r"|일(?!\s?(?:에|날|자)))(?:\s?(?:동안|간))?"),
    re.compile(r"(?:지난|최근|(?<![가-힣])요)\s?(며칠)(?:\s?(?:동안|간))?"),
)
_NUMBERS = {"一": 1, "两": 2, "兩": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
            "八": 8, "九": 9, "한": 1, "일": 1, "두": 2, "세": 3, "네": 4}
_FEW = "几幾数數몇며칠"


def _count(written: str) -> int:
    """The number a count of :data:`_COUNT` says: 十二 is 12, 二十 20, a few 3, and two
    numbers side by side (三四天, 两三年: three or four, two or three; 二三十, 十一二) the
    larger.

    >>> [_count(c) for c in ("3", "十", "十二", "二十", "两", "几", "한", "三四", "两三")]
    [3, 10, 12, 20, 2, 3, 1, 4, 3]
    >>> [_count(c) for c in ("二三十", "十一二")]
    [30, 12]
    """
    if written.isdigit():
        return int(written)
    if written[0] in _FEW:
        return 3
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
            yield match, _count(count) * _SPAN_UNITS[unit]
