"""A question's misspelt word ("dokcer", "postgress", "kuberntes") read as the word one edit
away that the store holds most often.

A word no message holds is asked of the store once more, in one call, by its near-synonyms
(:mod:`~harkback.stages.match.near`: counted only then, so a question whose words the store
holds asks nothing more) and, where it has none the store holds, by its spellings one
edit away (:func:`one_edit`: two neighbouring letters swapped, a letter typed twice read once,
a vowel put in; :data:`LONGEST_EDITS` of them at most); the one the store holds in most messages, in
at least :data:`LEAST_MESSAGES`, joins the word's forms (:func:`with_corrections`). Only the
question's first :data:`MOST_WORDS` such words of :data:`SHORTEST` letters or more are
corrected, so the further lookups stay a few hundred at most, and a word the store holds is
never touched; nor is a query in search syntax. The word's own spelling stays among its
forms (:func:`~harkback.stages.match.plan.weigh_units`), for a title or project that holds it.

>>> one_edit("dokcer")[:3]
('odkcer', 'dkocer', 'docker')
>>> "postgres" in one_edit("postgress"), "kubernetes" in one_edit("kuberntes")
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.match.score import RankUnit
from harkback.stages.ports import SessionStore, TermStats
from harkback.stages.query import Term
from harkback.stages.text.stem import inflections

SHORTEST = 5
"""Shorter words are left as written, and no word is read as a shorter one: one edit away
from a short word lie many others ("chart", a helm chart the store never names, one letter
from "chat"; "axios" from "axis", "crate" from "rate", "spark" from "park")."""

MOST_WORDS = 3
"""At most this many absent words of a question are looked up again."""

LEAST_MESSAGES = 2
"""A spelling one edit away replaces nothing it is not held in at least this many messages."""

LONGEST_EDITS = 200
"""At most this many spellings are asked of the store for one question."""

_VOWELS = "aeiou"


def one_edit(word: str) -> tuple[str, ...]:
    """``word``'s spellings one typing slip away: neighbours swapped, a letter typed twice
    read once ("postgress"), a vowel put in, in that order, each once. A consonant a slip
    left out is not put back ("adress" is no "address")."""
    swapped = (word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1))
    # A letter left out only where it doubles its neighbour ("postgress"): any other reads a
    # word the store lacks as a shorter one it holds ("sentry" as "entry", "router" as
    # "route", "stripe" as "strip"), a different word more often than a slip.
    dropped = (word[:i] + word[i + 1:] for i in range(1, len(word)) if word[i] == word[i - 1])
    added = (word[:i] + v + word[i:] for i in range(len(word) + 1) for v in _VOWELS)
    return tuple(w for w in dict.fromkeys((*swapped, *dropped, *added)) if w != word)


def _spellings(word: str) -> tuple[str, ...]:
    # The spellings one edit away that a slip may have made of it: none shorter than SHORTEST.
    return tuple(w for w in one_edit(word) if len(w) >= SHORTEST)


def _absent(units: Sequence[RankUnit], stats: TermStats) -> list[int]:
    # The plain words held in no form (a word's CJK names are weighed by the word).
    counts = dict(stats.counts)
    return [j for j, ru in enumerate(units)
            if isinstance(ru.unit, Term) and not ru.unit.prefix and not ru.names
            and not any(counts.get(f, 0) for f in ru.forms)]


def _misspelt(units: Sequence[RankUnit], absent: Sequence[int]) -> list[tuple[int, str]]:
    # The first MOST_WORDS absent words a slip may have made, with their text.
    texts = ((j, units[j].unit) for j in absent)
    return [(j, u.text) for j, u in texts if isinstance(u, Term) and u.text.isascii()
            and u.text.isalpha() and len(u.text) >= SHORTEST][:MOST_WORDS]


@attrs.frozen
class Lookups:
    """What :func:`typo_lookups` asks the store of, and for which words."""

    asked: tuple[str, ...]
    """The forms to count: the absent words' near-synonyms, then their spellings."""
    misspelt: tuple[tuple[int, tuple[str, ...]], ...] = ()
    """Each word a slip may have made (its place among the units) and its spellings one
    edit away."""


def typo_lookups(units: Sequence[RankUnit], stats: TermStats) -> Lookups:
    """What to ask the store's ``term_stats`` of for the absent words of ``units``
    (planned, counted in ``stats``): their near-synonyms' forms
    (:attr:`~harkback.stages.match.score.RankUnit.stand_ins`), then their spellings one
    edit away; none when every word is held, so a question the store knows asks nothing more.
    """
    absent = _absent(units, stats)
    misspelt = tuple((j, _spellings(word)) for j, word in _misspelt(units, absent))
    near = tuple(dict.fromkeys(f for j in absent for f in units[j].stand_ins))
    edits = dict.fromkeys(w for _, spellings in misspelt for w in spellings)
    return Lookups((*near, *tuple(w for w in edits if w not in near)[:LONGEST_EDITS]), misspelt)


def with_corrections(units: Sequence[RankUnit], stats: TermStats, lookups: Lookups,
                     more: TermStats) -> tuple[tuple[RankUnit, ...], TermStats]:
    """``units`` with each misspelt word of ``lookups`` whose near-synonyms the store lacks
    given its most held spelling one edit away (in ``more``, the counts of what ``lookups``
    asked) and its inflections among its forms, and ``stats`` with those counts."""
    found = dict(more.counts)
    out = list(units)
    for j, spellings in lookups.misspelt:
        if any(found.get(f, 0) for f in units[j].stand_ins):
            continue  # read by its near-synonyms (near.py)
        held = [(found[w], w) for w in spellings if found.get(w, 0) >= LEAST_MESSAGES]
        if held:
            best = max(held, key=lambda c: c[0])[1]
            out[j] = attrs.evolve(units[j], forms=tuple(dict.fromkeys(
                (*units[j].forms, *inflections(best)))))
    return tuple(out), attrs.evolve(stats, counts=(*stats.counts, *more.counts))


Corrected = tuple[tuple[RankUnit, ...], TermStats]
"""A question's planned units and the store's counts of their forms, misspellings corrected."""


def corrected(store: SessionStore, units: tuple[RankUnit, ...], stats: TermStats, *,
              literal: bool = False) -> FutureResult[Corrected, StoreUnavailable]:
    """``units`` and ``stats`` (:func:`with_corrections`) once ``store`` was asked of the
    near-synonyms and spellings of their absent words (:func:`typo_lookups`): as they are
    when none is, or the query is ``literal`` (search syntax means what it says:
    ``"kuberntes"`` in quotes is that spelling, held in a title perhaps)."""
    if literal or not (asked := typo_lookups(units, stats)).asked:
        return FutureResult.from_value((units, stats))
    return store.term_stats(asked.asked).map(
        lambda more: with_corrections(units, stats, asked, more))
