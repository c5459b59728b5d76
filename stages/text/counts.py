"""Counts and relative times in a Chinese, Japanese or Korean question: framing, not topic.

"晚 8 个小时", "500 条", "8 秒", "3 回", "5 개", "10 分钟": a counter bound to a number
says what the number counts; the number is what the question names ("8" hours off, "500"
rows), the counter is the frame around it and names nothing a session is about. Searched,
a counter weighed as a topic word (条* 4.4 in a question of blind7, 秒* 3.6 in one of
blind9) or glued to the next word as a bigram (2回走った makes 回走). A count written in
words (两次 "twice", 二回, 두 번, 두 개 "two of them", 几天, 数日 "a few days") is how the
question counts, not what it names: it goes whole, numeral and counter.

A time relative to the question (前 of 前に, 前の, 前どう "before"; 数日前, 며칠 전에 "a few
days ago"; 最近 "recently", 这几天 "these days") is framing too, as "recently" is in English
(:data:`~harkback.stages.match.plan.QUESTION_WORDS`): 前, 後 or 后 standing alone (not
part of a word: 前端, 之后 stay as they are), and the words of :data:`RELATIVE_TIMES`.
Neither is ever cut out of a longer word (:data:`WORDS`, the glossary's words): "Redis 7
秒杀" keeps 秒杀 ("flash sale"), "MySQL 8 回滚" 回滚, "TCP三次握手" 三次握手, 最近邻 "nearest
neighbour" stays whole.

>>> without_counts("晚 8 个小时才跑 500条 8 秒 3回 5 개 10 分钟 3번을").split()
['晚', '8', '才跑', '500', '8', '3', '5', '10', '3']
>>> without_counts("扣了两次 두 번씩 나가던 二回実行 数日前の 며칠 전에 배포 둘 다").split()
['扣了', '나가던', '実行', 'の', '배포', '다']
"""

from __future__ import annotations

import re
from functools import lru_cache

from harkback.stages.text.glossary import listed_words
from harkback.stages.text.tokens import normalize

CHINESE_COUNTERS = """
次 个 個 遍 条 條 行 秒 秒钟 秒鐘 毫秒 分钟 分鐘 小时 小時 个小时 個小時 天 周 週 个星期
個星期 个月 個月 年 种 種 台 倍 张 張 份 位 块 塊 回
""".split()
"""Chinese counters: times (次, 遍, 回), things (个, 条, 种, 台, 张, 份), time spans (秒,
分钟, 小时, 天, 周, 个月, 年), times over (倍)."""

JAPANESE_COUNTERS = """
回 回目 個 秒 ミリ秒 分 分間 時間 日 日間 日目 週間 ヶ月 か月 カ月 年 台 本 行 倍 枚 人 番目
""".split()
"""Japanese counters: times (回, 回目), things (個, 台, 本, 行, 枚, 人), order (番目: 3番目
"the third"), time spans (秒, 分, 時間, 日, 週間, ヶ月, 年), times over (倍); 件 ("cases")
frames already (:mod:`~harkback.stages.text.framing`)."""

KOREAN_COUNTERS = """
번 번째 개 가지 초 분 시간 일 주 주일 달 개월 년 명 건 줄 배 원 대 장
""".split()
"""Korean counters: times (번, 번째), things (개, 가지, 건, 줄, 대, 장, 명), time spans (초,
분, 시간, 일, 주, 달, 개월, 년), times over (배), money (원); after a number, also with 씩
("each") or 째 and a particle ("두 번씩", "3번을"), or after digits with 전 or 후 written
on ("3일전에" "three days ago", "5분후")."""

NUMERALS = "一二三四五六七八九十百千万两兩几幾数數何"
"""Numbers written as Chinese or Japanese characters (几, 数 and 何 "how many", "a few")."""

KOREAN_NUMERALS = ("한", "두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉", "열",
                   "몇", "여러")
"""Korean numbers written as words (한 "one", 두 "two", 몇 "how many", 여러 "several");
glued to a counter only 번, 번째, 개 and 가지 are read (두번, 몇개), since 세일 ("sale")
and 세대 ("generation") are words."""

RELATIVE_TIMES = """
最近 近期 这几天 這幾天 前几天 前幾天 这两天 這兩天 先日 この間
""".split()
"""Chinese and Japanese words of a time relative to the question: recently (最近, 近期),
these or the last few days (这几天, 前几天, 先日, この間)."""

KOREAN_COUNT_WORDS = ("둘", "셋")
"""Korean counts standing alone ("둘 다 보여줘" "show me both"), also with a particle."""

KOREAN_TIMES = ("최근", "요즘", "며칠", "이번")
"""Korean words of a time relative to the question, a word starting with one going whole:
recently (최근에, 요즘), a few days (며칠), this time (이번에, and 이번 주 "this week",
이번 달 "this month")."""

KOREAN_BEFORE_AFTER = ("전", "후")
"""Before and after in Korean ("며칠 전에", "3일 전", "배포 후"): framing as a word of their
own, with a particle (전에, 후부터); inside a word (전체, 후보) they stay."""

TIME_ALONE = "前後后"
"""Before and after (前に, 前の, 後に, 3 天后): a time relative to another, framing when it
stands alone or before the particle 的 (三天前的 "of three days ago", whose 的 goes with the
framing after it and left 前 alone to search); inside a word (前端, 前缀, 以後) it stays."""

WORDS = """
秒杀 秒殺 条件 條件 行为 行為 分析 分享 分布 分布式 分组 分組 分配 分割 分岐 分散 位置 位图
周期 日期 日付 日本 日本語 年度 个人 個人 个性化 回复 回覆 回收 回退 回帰 回避 張量 张量 行列
三次握手 四次挥手 四次揮手 二次开发 二次開發 二分查找 二分法 二分探索 二分木 百分比 百分位
一本化 最近邻 最近鄰 最近傍 最近接
""".split()
"""Words that start with a counter, a count or a relative time and name a thing: a count
or time is not cut out of them (秒杀 "flash sale" after "双11", 回避 "workaround",
三次握手 "three-way handshake", 二分查找 "binary search", 百分位 "percentile", 最近邻
"nearest neighbour"), nor out of a listed word of the glossary (回滚, 日志, 本番, 間隔 of
この間隔); a Korean word starting with a time is kept by :data:`KOREAN_WORDS`."""

KOREAN_WORDS = ("최근접", "전이")
"""Korean words that start as a relative time does and name a thing: 최근접 ("nearest",
최근접 이웃), 전이 ("transition", "transfer": 상태 전이, 전이 학습), not 전 with 이."""

_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_KOREAN_PARTICLE = "(?:에서|으로|이|가|을|를|은|는|에|의|도|로|만)"
_GLUED_KOREAN = ("번째", "번", "개", "가지")


def _alternation(words: list[str] | tuple[str, ...]) -> str:
    # Longest first: 个小时 before 个, 번째 before 번.
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    han = _alternation(CHINESE_COUNTERS + JAPANESE_COUNTERS)
    korean = _alternation(KOREAN_COUNTERS)
    # A number: digits (not part of a Latin word: utf8, v2), kept; or numerals in
    # characters, with what binds them before (那两次, 好几, 第三), dropped with the counter.
    count = re.compile(
        rf"(?:(?<![a-z0-9._-])(?P<digits>\d+(?:\.\d+)?)\s*[十百千万多余]?\s*|"
        rf"(?:(?<![{_HAN}])|(?<=[了过過]))[那这這好第]?[{NUMERALS}]+)(?:{han})"
        rf"|(?<![a-z0-9._-])(?P<kdigits>\d+(?:\.\d+)?)\s?(?:{korean})(?:씩|째|전|후)?"
        rf"{_KOREAN_PARTICLE}?(?![가-힣])"
        rf"|(?<![가-힣])(?:(?:{_alternation(KOREAN_NUMERALS)})\s(?:{korean})"
        rf"|(?:{_alternation(KOREAN_NUMERALS)})(?:{_alternation(_GLUED_KOREAN)}))"
        rf"(?:씩|째)?{_KOREAN_PARTICLE}?(?![가-힣])"
        rf"|(?<![가-힣])(?:{_alternation(KOREAN_COUNT_WORDS)}){_KOREAN_PARTICLE}?(?![가-힣])")
    times = re.compile(
        rf"{_alternation(RELATIVE_TIMES)}|(?<![{_HAN}])[{TIME_ALONE}](?:(?![{_HAN}])|(?=的))"
        rf"|(?<![가-힣])(?!{_alternation(KOREAN_WORDS)})(?:{_alternation(KOREAN_TIMES)})[가-힣]*"
        rf"(?:\s(?:주|달){_KOREAN_PARTICLE}?(?![가-힣]))?"
        rf"|(?<![가-힣])(?!{_alternation(KOREAN_WORDS)})"
        rf"(?:{_alternation(KOREAN_BEFORE_AFTER)})(?:에는|부터|{_KOREAN_PARTICLE})?"
        rf"(?![가-힣])")
    return count, times


@lru_cache(maxsize=1)
def _words() -> dict[str, tuple[str, ...]]:
    # The glossary's words too: a count before one of them names a thing (Node 18 本番).
    # By first character: a regex of all 1,900 took 23 ms to compile, this 0.5 ms.
    by_first: dict[str, list[str]] = {}
    for word in {*(normalize(w) for w in WORDS), *listed_words()}:
        by_first.setdefault(word[0], []).append(word)
    return {first: tuple(words) for first, words in by_first.items()}


def _in_word(match: re.Match[str]) -> bool:
    # A word starting within the count or time and running past it: 11秒 of 11秒杀.
    text, end = match.string, match.end()
    return any(at + len(word) > end and text.startswith(word, at)
               for at in range(match.start(), end) for word in _words().get(text[at], ()))


def without_counts(text: str) -> str:
    """``text`` (normalised) with counters after numbers, counts in words and relative
    times replaced by spaces; the digits of a count stay.

    >>> without_counts("前に変えた設定, 前端")
    ' に変えた設定, 前端'
    """
    count, times = _patterns()

    def cut(match: re.Match[str]) -> str:
        if _in_word(match):
            return match.group()
        digits = match.group("digits") or match.group("kdigits")
        return f"{digits} " if digits else " "

    return times.sub(lambda m: m.group() if _in_word(m) else " ",
                     count.sub(cut, text))
