"""How rare a CJK word is among the messages written in its script, not only in the store.

A word's IDF counts the messages of the whole store. In a store of mostly English sessions
every Chinese, Japanese or Korean word is in few of them, whatever it means: 에러 ("error")
in 15 of 100k messages weighs 8.8 against 3.1 for "CORS" in 4,350, so a recent Korean
session saying 에러 beats the one about CORS. Among the messages of its own script, 에러 is
a common word.

The store does not say how many messages it holds in each script, but a question's listed
words (:mod:`~harkback.stages.text.glossary`) tell it: a concept is taken to be as common
among the messages of the word's script as its English name is in the store, so the script
holds about ``documents * count(word) / count(name)`` messages. Over the question's listed
words (the median; none whose name is generic, in more than :data:`GENERIC_NAME` of the
messages: "server" and "config" are too common in a developer's English to tell), that estimate
bounds each CJK unit's IDF to its IDF among that many messages plus :data:`SCRIPT_BONUS`
(:func:`within_script`). English questions have no names and are weighed as before.

>>> units = (RankUnit(Term("에러"), ("에러",), idf(100_000, 15)),
...          RankUnit(Term("error"), ("error",), idf(100_000, 5_000) / 2, 0.5, names=(0,)))
>>> round(units[0].idf, 2), [round(u.idf, 2) for u in within_script(units, (15, 5_000), 100_000)]
(8.77, [3.97, 1.5])
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

import attrs

from harkback.stages.match.score import RankUnit, idf
from harkback.stages.query import Term
from harkback.stages.text.tokens import is_cjk

SCRIPT_BONUS = 1.0
"""How much more a CJK word may weigh than its IDF among the messages of its script (the
estimate of :func:`within_script`): a word rare in a script the store seldom holds is
still told apart from the question's other words, by a bounded amount.

Measured on the seed sets (:mod:`benchmarks.seeds`), alone and inside a copy of a
100k-message English store (``--background``), with :data:`GENERIC_NAME` 0.1: a bonus of
0.5 or 1 gains two held-out questions (h2-mixed-ja-database-url, h2-zh-python312) and three
crosslang ones among 100k messages and loses none anywhere; 2 gains one of each. Alone (a
few hundred messages, a third of them CJK) no question changes."""

GENERIC_NAME = 0.1
"""A name found in more than this share of the messages estimates nothing: a generic
English word ("server" is in 29 % of the generated 100k store) is far more common in
English than its CJK word in its script, and the estimate would make a rare word of the
answer common (x-ko-firewall, whose English answer says 서버 once, is lost at 0.3);
0.05 gains fewer questions (three of five)."""


def within_script(units: Sequence[RankUnit], containing: Sequence[int],
                  documents: int) -> tuple[RankUnit, ...]:
    """``units`` (weighed over ``documents`` messages, each found in ``containing[i]`` of
    them) with every CJK word's IDF bounded by its IDF among the messages of its script,
    as the question's listed words estimate them, plus :data:`SCRIPT_BONUS`."""
    guesses = []
    for unit, found in zip(units, containing, strict=True):
        words = [containing[j] for j in unit.names if containing[j]]
        if words and 0 < found <= GENERIC_NAME * documents:
            guesses.append(documents * min(words) / found)
    if not guesses:
        return tuple(units)
    script = statistics.median(guesses)
    out = []
    for unit, found in zip(units, containing, strict=True):
        if unit.idf and isinstance(unit.unit, Term) and is_cjk(unit.unit.text):
            among = max(int(script), found, 1)
            bound = (idf(among, max(found, 1)) + SCRIPT_BONUS) * unit.share
            unit = attrs.evolve(unit, idf=min(unit.idf, bound))
        out.append(unit)
    return tuple(out)
