"""Query decomposition: a question about several events ranks each event on its own too.

"How many days passed between the day I attended the gardening workshop and the day I
planted the tomato saplings?" asks for two sessions. Ranked as one bag of words, the
sessions that repeat one event's rarer words ("gardening workshop") can take every top
place, and the other event's session falls below them. So the question is cut at its
connectives (:func:`split_clauses`: "between ... and", "X or Y", "before", "after",
"when", "than", commas, an inverted "did I" that starts the main clause), each clause
keeps the query units it holds (:func:`clause_units`), the sessions are ranked by each
clause alone as well as by the whole question, and the rankings are fused
(:func:`fuse`): the whole question's order plus each clause's best sessions.

Only the whole question's first :data:`CLAUSE_DEPTH` sessions are reordered: a clause
brings its event's session up among the sessions the whole question already found, not
a session that matches one clause's words alone from far below (in a store of many
people's histories, another person's look-alike of one event). On (``LexicalMatch``'s
default since 2026-12-05; fused over the whole ranking it lost questions on
LongMemEval's pooled store, ``benchmarks/README.md``).

>>> split_clauses("Which device did I set up first, the smart thermostat or the new router?")
('Which device did I set up first', 'the smart thermostat', 'the new router?')
>>> split_clauses("How many days before I bought the iPhone did I attend the Holiday Market?")
('How many days', 'I bought the iPhone', 'attend the Holiday Market?')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harkback.stages.match.score import RankUnit
from harkback.stages.query import MAX_QUERY_CHARS, Phrase, Term, topic_tokens

_CONNECTIVE = re.compile(
    r"[,;:]|\b(?:or|and|between|versus|vs|compared\s+(?:to|with)|instead\s+of"
    r"|as\s+well\s+as|(?P<sub>before|after|when|since|until|while|than))\b"
    # After a subordinate clause, an inverted auxiliary starts the main one: "How many
    # days before I bought X did I attend Y?"
    r"|(?<=\S)\s+(?P<aux>did|do|does|have|has|had|was|were|am|is|are)\s+(?:i|we)\b",
    re.IGNORECASE)
# A quoted name ('The Hate U Give', "Sapiens: A Brief History") is one clause's words,
# whatever connectives it holds.
_QUOTED = re.compile(r"(?<!\w)'[^']+'(?!\w)|\"[^\"]+\"|“[^”]+”|‘[^’]+’")

CLAUSE_WEIGHT = 1.0
"""How much each clause's ranking counts beside the whole question's in :func:`fuse`
(``LexicalMatch``'s default; ``clause_weight=0`` turns decomposition off)."""

CLAUSE_K = 2.0
"""Fusion's rank constant: small, so a clause's first sessions count much more than its
tenth (the rankings fused are a few dozen sessions long)."""

CLAUSE_DEPTH = 10
"""How many of the whole question's first sessions the clauses may reorder (a page of
results); the sessions below keep their places."""

MAX_CLAUSES = 4
"""Clauses ranked on their own at most; a longer list stays one bag of words."""


def split_clauses(text: str) -> tuple[str, ...]:
    """The parts of a question between its connectives, quoted names kept whole (of
    the characters a query reads, :data:`~harkback.stages.query.MAX_QUERY_CHARS`).

    >>> split_clauses("How many days passed between the day I X and the day I Y?")
    ('How many days passed', 'the day I X', 'the day I Y?')
    >>> split_clauses("Which book first, 'War and Peace' or 'Emma'?")
    ('Which book first', "'War and Peace'", "'Emma'?")
    >>> split_clauses("docker network bridge")
    ('docker network bridge',)
    """
    text = text[:MAX_QUERY_CHARS]
    shielded = _QUOTED.sub(lambda m: "\0" * len(m.group()), text)
    parts, start, subordinate = [], 0, False
    for found in _CONNECTIVE.finditer(shielded):
        if found.group("aux") and not subordinate:
            continue
        subordinate = bool(found.group("sub"))
        parts.append(text[start:found.start()])
        start = found.end()
    parts.append(text[start:])
    return tuple(p.strip() for p in parts if p.strip())


def clause_units(clauses: Sequence[str], units: Sequence[RankUnit]) -> tuple[frozenset[int], ...]:
    """For each clause, the indices of the ``units`` it holds, a word with its names in the
    other languages (:attr:`~harkback.stages.match.score.RankUnit.names`): distinct,
    weighed (IDF > 0) sets only, at most :data:`MAX_CLAUSES` (none when fewer than two
    remain).

    >>> us = [RankUnit(Term(w), (w,), 1.0) for w in ("workshop", "tomato", "saplings")]
    >>> clause_units(("I attended the workshop", "I planted tomato saplings"), us)
    (frozenset({0}), frozenset({1, 2}))
    >>> clause_units(("the workshop", "a workshop"), us)
    ()
    """
    out: list[frozenset[int]] = []
    # A clause said twice is read once, and the reading stops at the first set too many:
    # a 10,000-character list of clauses costs what its first few do.
    for clause in dict.fromkeys(clauses):
        words = frozenset(topic_tokens(clause))
        said = {j for j, ru in enumerate(units) if ru.idf > 0 and _held(ru, words)}
        # A word's names in the other languages (across.py) go with the word.
        held = frozenset(said | {j for j, ru in enumerate(units)
                                 if ru.idf > 0 and any(i in said for i in ru.names)})
        if held and held not in out:
            out.append(held)
            if len(out) > MAX_CLAUSES:
                return ()
    return tuple(out) if len(out) > 1 else ()


def _held(ru: RankUnit, words: frozenset[str]) -> bool:
    if isinstance(ru.unit, Term):
        return ru.unit.text in words
    assert isinstance(ru.unit, Phrase)
    return all(t in words for t in ru.unit.terms)


def fuse(whole: Sequence[tuple[str, float]], parts: Sequence[Sequence[tuple[str, float]]],
         weight: float = CLAUSE_WEIGHT, k: float = CLAUSE_K, depth: int = CLAUSE_DEPTH
         ) -> tuple[tuple[str, float], ...]:
    """Reciprocal-rank fusion of the whole question's first ``depth`` sessions and each
    clause's ranking; the sessions below follow as they were.

    Of those first sessions, each scores ``1/(k + its place in whole)`` plus
    ``weight/(k + its place)`` in each clause's ranking (places from 1); ties keep their
    order in ``whole``. The whole question's best session stays first: a clause brings
    the sessions of its own event up, it does not decide what fits best. Each place
    keeps its score, so the scores stay the whole question's, best first (the hybrid
    ranker fuses them).

    >>> whole = (("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0), ("e", 0.5))
    >>> fuse(whole, [(("d", 1.0),), (("b", 1.0),)], depth=4)
    (('a', 4.0), ('b', 3.0), ('d', 2.0), ('c', 1.0), ('e', 0.5))
    >>> [sid for sid, _ in fuse(whole, [(("e", 1.0),)], depth=4)]
    ['a', 'b', 'c', 'd', 'e']
    >>> fuse((), [(("d", 1.0),)])
    ()
    """
    head = whole[:depth]
    fused = {sid: 1 / (k + place) for place, (sid, _) in enumerate(head, 1)}
    for ranking in parts:
        for place, (sid, _) in enumerate(ranking, 1):
            if sid in fused:
                fused[sid] += weight / (k + place)
    order = {sid: i for i, (sid, _) in enumerate(head)}
    first = head[0][0] if head else None
    ranked = sorted(fused, key=lambda sid: (sid != first, -round(fused[sid], 12), order[sid]))
    return (*((sid, score) for sid, (_, score) in zip(ranked, head, strict=True)),
            *whole[depth:])
