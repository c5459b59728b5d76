"""The Latin words of a Chinese, Japanese or Korean question: the names it is about.

A developer writing Chinese, Japanese or Korean switches to Latin letters to name a thing:
a tool, a product, a flag, a file ("CloudFront 에서 옛날 JS 파일", "rabbitmq 死信队列",
"tsconfig paths 경로"). The question's own words are weighed by how rare they are in the
store, and in a store held mostly in English every CJK word is rare because its script
is: a generic 배포 ("deploy") or 설정 ("config") weighs as much as "CloudFront", and a
question has many more of them. So a recent session in the question's language holding
two of its generic words out-covers the English answer that names its tool.

In an English question those generic words are common, and the name holds a large share
of the question's weight. The session score therefore counts the share of the question's
Latin words a session covers once more, at :data:`NAME_WEIGHT`
(:func:`~harkback.stages.match.sessions.rank_sessions`): the weight a Latin term of a
CJK question carries among the question's words is brought back toward what it carries
in an English one. Neither the glossary's English names of the question's CJK words
(concepts, not names), nor a lone letter or a number ("两个多G", "晚 8 个小时": amounts,
not names) count. English questions are left as they are, and so is one that names a
single CJK word among its English ones (:func:`names_script`).

>>> from harkback.stages.query import Term
>>> units = (RankUnit(Term("cloudfront"), ("cloudfront",), 5.3),
...          RankUnit(Term("배포"), ("배포",), 4.7), RankUnit(Term("8"), ("8",), 3.0),
...          RankUnit(Term("deploy"), ("deploy",), 1.7, 0.5, names=(1,)))
>>> sorted(latin_names(units, "ko")), latin_names(units, None)
([0], frozenset())
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harkback.stages.match.score import RankUnit
from harkback.stages.query import Term
from harkback.stages.text.scripts import Script, cjk_script
from harkback.stages.text.tokens import is_cjk, normalize

NAME_WEIGHT = 0.25
"""How much the share of a CJK question's Latin words a session covers adds to its score
(beside the 0.5 of the share of the whole question,
:attr:`~harkback.stages.match.sessions.SessionScoring.coverage_weight`).

Measured on the ten seed sets (:mod:`benchmarks.seeds`, lexical, alone): 0.15 gains four
questions, 0.25 seven, 0.35 eight, and none of them loses one but 0.35, which loses the
tuned control ja-ci-cache (a Japanese answer that does not write "CI" beside an English
look-alike that does). English questions (LongMemEval) never reach it."""

# A word in Latin letters (folded: lower case, marks stripped) and digits. Not merely a word
# outside CJK: a Cyrillic or Greek word is rare in the store because its script is, as a
# CJK word is, and so already weighs as a name would.
_LATIN = re.compile("[0-9a-z\u00df-\u024f]+")


def latin_names(units: Sequence[RankUnit], script: Script | None) -> frozenset[int]:
    """The units of a question written in the CJK ``script`` that are its own Latin words
    (none for a question in Latin script, ``script`` None): whole words, not the English
    names the glossary added, not one letter and not a number, not a word in another
    script (кэш)."""
    if script is None:
        return frozenset()
    return frozenset(j for j, u in enumerate(units)
                     if isinstance(u.unit, Term) and not u.unit.prefix and not u.names
                     and u.searched and _LATIN.fullmatch(u.unit.text) and len(u.unit.text) > 1
                     and not u.unit.text.isdigit())


def names_script(question: str) -> Script | None:
    """The CJK writing of a question whose Latin words are names: its
    :func:`~harkback.stages.text.scripts.cjk_script` when its CJK characters outnumber its
    words in Latin letters, else None.

    A question is written in the language of most of its words. "how did we fix the 超时
    on the nginx cache" is English naming one Chinese word: its Latin words are the
    question's own, generic ones too (fix, cache), not names it switched script for. A
    Chinese, Japanese or Korean word takes two or three characters, so counting
    characters against words leans toward the CJK reading: every CJK question of the
    seed sets holds at least 1.6 CJK characters a Latin word (b5-ko-pickle: 10 and 6).

    >>> names_script("上次 nginx 超时是怎么处理的？"), names_script("fix the nginx 超时 cache")
    ('zh', None)
    """
    cjk = sum(map(is_cjk, question))
    words = sum(1 for w in _LATIN.findall(normalize(question)) if not w.isdigit())
    return cjk_script(question) if cjk > words else None
