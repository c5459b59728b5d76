"""Runs of CJK bigrams among a query's units: the stretches of text they spell.

A CJK run of n characters is searched as n-1 overlapping bigrams ("ネッ" "ット" "トワ" …
for ネットワーク); the planner weighs a run as one stretch of words
(:func:`~harkback.stages.match.plan.bigram_shares`) and finds listed words in the text it
spells (:mod:`~harkback.stages.match.across`).

>>> from harkback.stages.query import Term
>>> units = (Term("docker"), Term("ネッ"), Term("ット"), Term("トワ"))
>>> bigram_runs(units), run_text(units[1:])
([(0, 1), (1, 4)], 'ネットワ')
"""

from __future__ import annotations

from collections.abc import Sequence

from harkback.stages.query import Term, Unit
from harkback.stages.text.tokens import is_cjk


def bigram_runs(units: Sequence[Unit]) -> list[tuple[int, int]]:
    """The units as stretches ``(start, end)``: a run of overlapping CJK bigrams is one,
    every other unit one on its own."""
    runs = []
    start = 0
    while start < len(units):
        end = start + 1
        while end < len(units) and continues(units[end - 1], units[end]):
            end += 1
        runs.append((start, end))
        start = end
    return runs


def run_text(units: Sequence[Unit]) -> str:
    """The text a run of overlapping bigrams spells (a unit's own text for one unit)."""
    if not units:
        return ""
    return unit_text(units[0]) + "".join(unit_text(u)[1:] for u in units[1:])


def unit_text(unit: Unit) -> str:
    """A term's text; a phrase has none here."""
    return unit.text if isinstance(unit, Term) else ""


def continues(left: Unit, right: Unit) -> bool:
    """Whether ``right`` is the next bigram of ``left``'s run: they overlap by a character."""
    a, b = unit_text(left), unit_text(right)
    return len(a) == 2 and len(b) == 2 and is_cjk(a) and is_cjk(b) and a[1] == b[0]
