"""BM25 of one message over the query's units, each word's forms counted as one.

The lexical ranker re-scores every candidate message it reads: BM25 over query *words*
(a word's inflections merged into one term with one IDF), the units each message
covers, and a weight by role (:data:`ROLE_WEIGHTS`). :data:`K1` and :data:`B`, BM25's
usual parameters, are also the in-memory store's.

>>> unit = RankUnit(Term("bike"), ("bike", "bikes"), idf(100, 4))
>>> round(score_message("two bikes and a bike", (unit,), average_length=5.0)[0], 3)
4.278
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import attrs

from harkback.stages.match.counting import Counted, unit_counter
from harkback.stages.project_note import counted
from harkback.stages.query import Term, Unit  # noqa: F401  (Term: the examples' units)
from harkback.stages.records import MessageHit, Role

K1 = 1.2
B = 0.75
"""BM25's usual parameters (also FTS5's); message-level length normalisation."""


def idf(documents: int, containing: int) -> float:
    """BM25's inverse document frequency in its non-negative form, ``ln(1 + (N-n+.5)/(n+.5))``.

    >>> round(idf(100, 1), 3), round(idf(100, 100), 3)
    (4.21, 0.005)
    """
    containing = min(max(containing, 0), documents)
    return math.log(1 + (documents - containing + 0.5) / (containing + 0.5))


ROLE_WEIGHTS: tuple[tuple[Role, float], ...] = (("user", 1.5),)
"""Message scores by role, by default: the user's own words count half again.

People ask about what *they* said, decided and asked for; an assistant's turns are long
and reuse the question's words generically. Assistant and tool text still counts in
full, so "the script you wrote" is found; the weight only breaks near-ties. 1.25, 1.5
and 2.0 scored alike on the dev data (within 0.02 everywhere), so the middle is used.
"""


@attrs.frozen
class RankUnit:
    """One query word or phrase, the index tokens that count for it, and its weight."""

    unit: Unit
    forms: tuple[str, ...]
    idf: float = 0.0
    share: float = 1.0
    """The part of a word this unit is: 1 for a word or phrase, less for one bigram of a
    CJK word (:func:`~harkback.stages.match.plan.bigram_shares`)."""
    names: tuple[int, ...] = ()
    """The units (by position in the plan) of the question's CJK word this unit is the
    English name of, or for an unsearched unit (below) the English word whose CJK words it
    holds and whose weight it takes a share of (:mod:`~harkback.stages.match.across`); ()
    for the others."""
    count: int = 0
    """How many of the store's messages hold it, as it was weighed (0: not counted)."""
    searched: bool = True
    """Whether the store is asked for its forms; False for the CJK words of an English
    question's word (:mod:`~harkback.stages.match.across`) the store holds in many
    messages or none, which weigh the rows the question's own words read and select none
    (:func:`~harkback.stages.match.plan.weigh_units` searches the rare ones)."""
    stand_ins: tuple[str, ...] = ()
    """The forms of a word's near-synonyms (:mod:`~harkback.stages.text.near_words`),
    counted (:func:`~harkback.stages.match.typos.typo_lookups`) and read in their place
    only when the store holds none of its own
    (:func:`~harkback.stages.match.plan.weigh_units`); () once weighed."""
    whole: tuple[str, ...] = ()
    """The katakana words its katakana forms stand for, counted only in the katakana runs
    that fit one (:mod:`~harkback.stages.match.whole_katakana`: ロック not inside ブロック);
    () for a unit with no katakana form, counted wherever its forms are."""


@attrs.frozen
class Scored:
    """A hit re-scored: its message score and the query units it covers.

    >>> hit = MessageHit(session_id="s", position=0, role="user", content="[project: x]",
    ...                  score=0.0)
    >>> Scored(hit, 1.0, frozenset(), read="[x]").text, Scored(hit, 1.0, frozenset()).text
    ('[x]', '[project: x]')
    """

    hit: MessageHit
    score: float
    covered: frozenset[int]
    read: str | None = None
    """What the ranker counted of the hit when it is not its content (a user message's
    project line without its labels, :func:`~harkback.stages.project_note.counted`), kept
    so that a clause of the question reads it again without working it out again; None:
    the content."""

    @property
    def text(self) -> str:
        """What the ranker counted of the hit (:attr:`read`, else its content)."""
        return self.hit.content if self.read is None else self.read


class MessageScorer(Protocol):
    """A message's BM25 over the query's units, and the units it covers (see
    :func:`message_scorer`); ``length`` is the whole message's length in tokens when
    ``text`` is only its start (:attr:`~harkback.stages.records.MessageHit.length`)."""

    def __call__(self, text: str, length: int | None = None, /
                 ) -> tuple[float, frozenset[int]]: ...


def scored_hit(scorer: MessageScorer, hit: MessageHit,
               role_weights: Mapping[Role, float]) -> Scored | None:
    """``hit`` scored as the ranker reads it (:func:`~harkback.stages.project_note.counted`:
    a user message's project line without its labels) and weighed by its role; None when
    the labels alone found it.

    >>> one = message_scorer((RankUnit(Term("git"), ("git",), 1.0),), average_length=5.0)
    >>> hit = MessageHit(session_id="s", position=0, role="user", content="", score=1.0)
    >>> scored_hit(one, attrs.evolve(hit, content="fix it\\n\\n[project: /x, git branch: m]"),
    ...            {}) is None
    True
    >>> scored_hit(one, attrs.evolve(hit, content="git it"), {"user": 1.5}).covered
    frozenset({0})
    """
    content = counted(hit.content, hit.role)
    value, covered = scorer(content, hit.length)
    relabelled = content is not hit.content
    if not covered and relabelled:
        return None
    return Scored(hit, value * role_weights.get(hit.role, 1.0), covered,
                  content if relabelled else None)


def message_scorer(units: Sequence[RankUnit], *, average_length: float,
                   k1: float = K1, b: float = B) -> MessageScorer:
    """A function giving a message's BM25 over ``units`` (forms merged) and the units it covers.

    What depends only on the query (which units are plain words, which unit each form
    counts for) is worked out once here, not once per candidate message. A message is
    normalized once (:func:`~harkback.stages.text.tokens.word_stream`); when its words
    are all ASCII it is counted on its bytes. Whole words are counted among the forms a
    message holds (one set intersection); prefixes and phrases in its tokens joined by
    spaces (``str.count``, ``str.find``), not token by token
    (:func:`~harkback.stages.match.counting.unit_counter`).

    Given the whole message's ``length`` in tokens, the text is only its start (a store
    reads no more of a huge message: :data:`~harkback.stages.long_text.LONGEST_READ`): its
    counts stand for the whole at the rate they occur in it, and the whole length
    normalizes them. Messages read whole are scored as they always were.

    >>> score = message_scorer((RankUnit(Term("bike"), ("bike", "bikes"), 2.0),),
    ...                        average_length=5.0)
    >>> score("two bikes and a bike"), score("a car")
    ((2.75, frozenset({0})), (0.0, frozenset()))
    >>> round(score("two bikes and a bike", 50)[0], 3)  # the start of 50 tokens
    3.003
    """
    weigh = _bm25(units, average_length, k1, b)
    nothing: frozenset[int] = frozenset()

    def total(counts: Mapping[int, int], length: int, whole: int | None
              ) -> tuple[float, frozenset[int]]:
        if not counts:
            return 0.0, nothing  # most candidates cover one unit or none: no sort then
        return weigh(counts, length, whole), frozenset(counts)

    return unit_counter(units, total)


def part_scorer(units: Sequence[RankUnit], parts: Sequence[frozenset[int]], *,
                average_length: float, k1: float = K1, b: float = B
                ) -> Counted[tuple[float, ...]]:
    """A function giving a message's BM25 over each of ``parts`` (sets of indices into
    ``units``), the message read once: the same floats as :func:`message_scorer` over
    each part's units alone.

    >>> us = [RankUnit(Term(w), (w,), 2.0) for w in ("bike", "red", "car")]
    >>> score = part_scorer(us, [frozenset({0, 1}), frozenset({2})], average_length=5.0)
    >>> score("a red bike and a bike") == (
    ...     message_scorer(us[:2], average_length=5.0)("a red bike and a bike")[0], 0.0)
    True
    """
    weigh = _bm25(units, average_length, k1, b)

    def total(counts: Mapping[int, int], length: int, whole: int | None
              ) -> tuple[float, ...]:
        return tuple(weigh({j: tf for j, tf in counts.items() if j in part}, length, whole)
                     for part in parts)

    return unit_counter(units, total)


def _bm25(units: Sequence[RankUnit], average_length: float, k1: float, b: float
          ) -> Callable[[Mapping[int, int], int, int | None], float]:
    # BM25 of each unit's count in a message of ``length`` tokens, summed over the units.
    def norm(length: int) -> float:
        return k1 * (1 - b + b * length / average_length) if average_length > 0 else k1

    idfs = [u.idf for u in units]
    k1_plus_1 = k1 + 1

    def weigh(counts: Mapping[int, int], length: int, whole: int | None) -> float:
        if whole is not None:
            return sampled(counts, length, whole)
        n = norm(length)
        # Summed in unit order, so the score is the same float on every path.
        score = 0.0
        for j, tf in sorted(counts.items()) if len(counts) > 1 else counts.items():
            score += idfs[j] * tf * k1_plus_1 / (tf + n)
        return score

    def sampled(counts: Mapping[int, int], length: int, whole: int) -> float:
        # Only the start of a huge message was read: its counts stand for the whole at the
        # rate they occur in that start, and the whole length normalizes them.
        rate = whole / max(length, 1)
        n = norm(whole)
        score = 0.0
        for j, tf in sorted(counts.items()):
            score += idfs[j] * (tf * rate) * k1_plus_1 / (tf * rate + n)
        return score

    return weigh


def score_message(text: str, units: Sequence[RankUnit], *, average_length: float,
                  k1: float = K1, b: float = B) -> tuple[float, frozenset[int]]:
    """BM25 of one message over query units (forms merged), and the units it covers.

    To score many messages for one query, build :func:`message_scorer` once.

    >>> us = (RankUnit(Term("bike"), ("bike", "bikes"), 2.0),)
    >>> score_message("two bikes and a bike", us, average_length=5.0)
    (2.75, frozenset({0}))
    """
    return message_scorer(units, average_length=average_length, k1=k1, b=b)(text)
