"""The words that run a time on until now: "since last week", 自从上周, 上周以来, 先週から,
지난주부터 (:func:`since_words`, :func:`runs_on`, :func:`opens_since`).

One list of them (:data:`BEFORE_A_TIME`, :data:`AFTER_A_TIME`) serves every reader: the
calendar's and the counted times' bounds, a listing's framing
(:func:`~harkback.stages.recent.browse_window`) and the ranker's
(:func:`~harkback.stages.when.time_words`), so that a word runs a time on in all or none.

>>> since_words("从上周起我做了什么", (1, 3)), runs_on("last week", (0, 9))
([(0, 1), (3, 4)], False)
"""

from __future__ import annotations

import re

BEFORE_A_TIME = ("since", "after", "from", "自从", "自從", "自")
"""The words before a time that run it on until now: "since last week", 自从上周, 自上周."""
AFTER_A_TIME = ("以来", "以來", "之后", "之後", "以后", "以後", "开始", "開始", "起", "から",
                "以降", "부터", "이후")
"""The words after a Chinese, Japanese or Korean time that run it on until now: 上周以来,
从昨天开始, 从上周起, 先週から, 지난주부터, 지난주 이후."""
EVERY_SINCE_WORD = frozenset(BEFORE_A_TIME + AFTER_A_TIME)
"""Every since word, as a question's framing: no topic to search for."""

# 自 not ending a word: 来自, 源自, 出自, 摘自, 转自 (from: where a thing comes from,
# 来自上周的日志), 各自, 亲自, 私自 (by oneself).
_NOT_A_WORD_END = "(?<![来來源出摘引选選译譯转轉取发發寄各独獨亲親私擅暗径徑])"
# 起 not starting a word (上周起草的: drafted last week; 上周起火了: caught fire; 起步: got
# going; 起效: took effect; 起动: started, of an engine or a service) nor a verb
# (上周起了一个服务: started one up last week).
_NOT_A_WORD_START = "(?![草床来來飞飛诉訴因身码碼了火步效名源点點动動])"


def _before(word: str) -> str:
    # A since word before a time as a pattern: an English one as a whole word.
    if word.isascii():
        return rf"\b{word}"
    return _NOT_A_WORD_END + word if word.startswith("自") else word


def _after(word: str) -> str:
    # A since word after a time as a pattern.
    return word + _NOT_A_WORD_START if word == "起" else word


# Longest first: 自从 before 自.
_FROM = re.compile("(?:" + "|".join(_before(w) for w in sorted(BEFORE_A_TIME, key=len,
                                                                 reverse=True))
                   + r")\s*(?:the\s+)?$")
_FROM_ON = re.compile(r"\s*(?:" + "|".join(_after(w) for w in AFTER_A_TIME) + ")")
# 从 before a time with 起, 开始 or 以来 after it opens the same "since": 从上周起.
_OPENING = re.compile(r"[从從]\s*$")


def since_words(text: str, span: tuple[int, int]) -> list[tuple[int, int]]:
    """Where the words are in ``text`` that run the expression at ``span`` on until now
    (:func:`runs_on`; none when nothing does): what a question's time leaves of it names
    no topic (来我 of 上周以来我做了什么 is no word).

    >>> since_words("从上周起我做了什么", (1, 3)), since_words("since monday", (6, 12))
    ([(0, 1), (3, 4)], [(0, 6)])
    >>> since_words("来自上周的日志", (2, 4))  # from: where the logs come from
    []
    """
    start = max(0, span[0] - 40)
    before = text[start:span[0]]  # the words just before, not all of them
    found = [(start + m.start(), start + m.end()) for m in [_FROM.search(before)] if m]
    after = _FROM_ON.match(text, span[1])
    if after is not None:
        opening = None if found else _OPENING.search(before)
        found += [(start + opening.start(), start + opening.end())] if opening else []
        found.append(after.span())
    return found


def opens_since(text: str, start: int) -> bool:
    """Whether a since word (自从, 自, 从; "since", "from") ends just before ``start`` in
    ``text``: 从 and 自 of 从上周一起 make its 一起 "since Monday", not "together".

    >>> opens_since("从上周一起", 1), opens_since("自上周一起", 1), opens_since("来自上周", 2)
    (True, True, False)
    """
    lo = max(0, start - 8)
    return bool(_FROM.search(text, lo, start) or _OPENING.search(text, lo, start))


def runs_on(text: str, span: tuple[int, int]) -> bool:
    """Whether the words around the expression at ``span`` in ``text`` run it on until
    now: "since" (after, from) before it, or 以来, から, 부터 after it.

    >>> runs_on("since last week", (6, 15)), runs_on("지난주부터", (0, 3))
    (True, True)
    >>> runs_on("last week", (0, 9))
    False
    """
    return bool(since_words(text, span))
