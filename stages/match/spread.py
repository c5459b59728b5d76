"""How a word's messages spread over sessions: a topic is repeated, a generic word scattered.

A word's IDF counts messages. A session about kintone names it in eight of its messages;
a generic word (配置 "config", 에러 "error") is said once or twice in each of eight
sessions. Counted by messages the two weigh the same, and a recent session in the
question's language that holds two generic words in one message beats the answer that
names the question's tool throughout. Counted by sessions, the tool is in one, the
generic word in eight.

The store counts messages only, but the candidates the ranker reads tell how a word's
messages gather: ``m`` candidate messages from ``s`` sessions. Its count is taken as
``count * (s / m) ** SESSION_SPREAD``, between the messages (0) and the sessions (1) it
is found in, and its weight is scaled by the IDF of that count over its IDF
(:func:`by_sessions`).

>>> from harkback.stages.query import Term
>>> units = (RankUnit(Term("kintone"), ("kintone",), idf(1000, 8), count=8),
...          RankUnit(Term("配置"), ("配置",), idf(1000, 8), count=8))
>>> spread = by_sessions(units, [(0, "a")] * 8 + [(1, str(i)) for i in range(8)], 1000)
>>> [round(u.idf, 2) for u in units], [round(u.idf, 2) for u in spread]
([4.77, 4.77], [5.66, 4.77])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import attrs

from harkback.stages.match.score import RankUnit, idf

SESSION_SPREAD = 0.5
"""How far a word's count moves from its messages (0) to its sessions (1): 0.5 is the
geometric mean of the two.

On the seed sets (:mod:`benchmarks.seeds`, lexical, eight sets) 0.5 gains three questions
(x-ja-build-cache, b7-zh-kintone, b7-zh-nacos) and loses none; 0.25 gains one and loses
two (b4-zh-android-dup, b6-en-csp), 0.75 gains three and loses three (those two and
h2-zh-413-upload, whose Chinese answer says 上传 once in each of a few messages while a
look-alike repeats it): the questions it moves are near-ties either way."""


SPREAD_CAP = 2.0
"""The most a word's weight may grow by gathering in few sessions: twice its IDF.

The growth is the IDF of the smaller count over the IDF of the word's own count, and for a
word in most of the store's messages the second is near 0: a word in half of 100k messages
(IDF 0.69), all its ~300 candidates from three sessions, would count as one in 5 % (IDF
3.0), four times its weight. Measured (ratios logged for every unit the rule moved): at
most 1.25 on the ten seed sets alone, 1.58 among the generated 100k messages, 1.20 among
LongMemEval's 110k and 1.89 on LongMemEval half A per question, so the cap changes no
ranking there; it bounds what a word said everywhere can gain."""


def by_sessions(units: Sequence[RankUnit], found: Iterable[tuple[int, str]],
                documents: int) -> tuple[RankUnit, ...]:
    """``units`` with each weight scaled by how its candidate messages gather in sessions.

    ``found`` holds ``(unit, session id)`` once per candidate message covering the unit;
    a unit found in ``m`` messages of ``s`` sessions is counted as ``count * (s / m) **``
    :data:`SESSION_SPREAD` of the :attr:`~RankUnit.count` messages the store gave it, its
    weight growing at most :data:`SPREAD_CAP` times. A unit no candidate holds, or one with
    no count, keeps its weight.
    """
    messages: Counter[int] = Counter()
    sessions: Counter[int] = Counter()
    for (j, _), n in Counter(found).items():
        messages[j] += n
        sessions[j] += 1
    out = []
    for j, unit in enumerate(units):
        if unit.idf > 0 and unit.count > 0 and messages[j] > sessions[j]:
            gathered = (sessions[j] / messages[j]) ** SESSION_SPREAD
            before = idf(documents, unit.count)
            after = idf(documents, max(round(unit.count * gathered), 1))
            # (Computed as before the cap, so an uncapped weight is the same float.)
            grown = (unit.idf * after / before if after <= SPREAD_CAP * before
                     else unit.idf * SPREAD_CAP)
            unit = attrs.evolve(unit, idf=grown if before else unit.idf)
        out.append(unit)
    return tuple(out)
