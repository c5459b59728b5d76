"""Chinese, Japanese and Korean words for times counted back from now: 上周, 先週, 지난주
(last week), 上上个月, 先々月, 지지난달 (the month before last), 3天前, 3日前, 3일 전 (three
days ago), 昨天, 一昨日, 그저께 ... :mod:`~harkback.stages.when` reads them into windows.

>>> [m.group(0) for m in re.finditer(CJK_LAST_WEEK, "上周和上上周, 马上周末")]
['上周']
"""

from __future__ import annotations

import re

from harkback.stages.weekend_words import NOT_TWICE

# The same expressions in Chinese, Japanese and Korean ("上周", "先週", "지난주": last
# week; "3天前", "3日前", "3일 전": three days ago). Each maps to its unit (of days).
# 저번 주 is 지난 주 ("the time before"); a longer word is no week or month: 上周期 (the
# previous cycle), 지난 주문 (a past order), 지난 주요 장애 (past major outages), 지난 주기
# (the previous cycle), 주주총회 (shareholders' meeting), 달러, 달리기 (a run).
# 上月 is no month before 台, 球, 亮, 光 or 饼 (登上月台, onto the platform).
_NOT_WEEK = r"(?![문소식장제요인택차사류변위권행기석주])"
_NOT_MONTH = r"(?![러력성리])"
CJK_LAST_WEEK = (NOT_TWICE + r"(?:上周(?![期边围转长年])|上星期|上个星期|上個星期|先週"
                 rf"|(?:지난|저번)\s?주{_NOT_WEEK})")
CJK_LAST_MONTH = (NOT_TWICE + r"(?:上个月|上個月|上月(?![台球亮光饼])|先月"
                  rf"|(?:지난|저번)\s?달{_NOT_MONTH})")
CJK_LAST_YEAR = r"去年|(?<!一)昨年|(?<!재)작년"
# The one before last: 上上周, 先々週, 지지난주; 上上个月, 先々月, 지지난달; 一昨年, 재작년 (the
# year before last: not 昨年 and 작년 inside them, last year).
CJK_WEEK_BEFORE_LAST = (NOT_TWICE + r"(?:上上周(?![期边围转长年])|上上星期|上上个星期|上上個星期"
                        rf"|先々週|지지난\s?주{_NOT_WEEK})")
CJK_MONTH_BEFORE_LAST = (NOT_TWICE + r"(?:上上个月|上上個月|上上月(?![台球亮光饼])|先々月"
                         rf"|지지난\s?달{_NOT_MONTH})")
CJK_YEAR_BEFORE_LAST = r"一昨年|おととし|재작년"
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
    (re.compile(r"今天|今日|今朝|오늘"), 0),
)
