"""A question's word the store never writes, read by its near-synonyms
(:mod:`~harkback.stages.text.near_words`): "speed up" by "slow" and "faster".

The planner gives each plain word the forms of its group as
:attr:`~harkback.stages.match.score.RankUnit.stand_ins` (:func:`stand_ins`), none the
question names itself (:func:`unnamed`: searched as its own word already), counted only
when the store holds none of its own forms (:func:`~harkback.stages.match.typos.typo_lookups`,
one more call); weighing (:func:`~harkback.stages.match.plan.weigh_units`) reads them only
where the store holds none of its own (:func:`read_near`), at :data:`NEAR_SHARE` of its
weight, so a session saying the question's own word never loses to one saying a near word.

>>> stand_ins("speed", ("speed", "speeds"))[:3]
('fast', 'fasts', 'fasted')
>>> from harkback.stages.query import Term
>>> unit = RankUnit(Term("speed"), ("speed",), stand_ins=("slow", "faster"))
>>> read_near(unit, ("speed",), 0, {"slow": 3})
(('speed', 'slow'), 3, 0.5)
>>> read_near(unit, ("speed",), 2, {"slow": 3})
(('speed',), 2, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from harkback.stages.match.score import RankUnit
from harkback.stages.text.near_words import near_words
from harkback.stages.text.stem import inflections

NEAR_SHARE = 0.5
"""The weight of a word's near-synonyms, read where the store holds none of its own forms,
against the word itself: as an English name weighs against a CJK word
(:data:`~harkback.stages.match.across.FOREIGN_SHARE`)."""


def stand_ins(word: str, own: tuple[str, ...]) -> tuple[str, ...]:
    """The inflections of ``word``'s near-synonyms, none of ``own`` (its own forms)."""
    return tuple(dict.fromkeys(f for w in near_words(word) for f in inflections(w)
                               if f not in own))


def unnamed(units: Sequence[RankUnit]) -> tuple[RankUnit, ...]:
    """``units`` without the near-synonyms that are forms of a word the question names: it
    is searched as the question's own ("speed up the slow build" reads "speed" by "faster",
    not by "slow" again, which counted a session saying "slow" twice).

    >>> from harkback.stages.query import Term
    >>> speed = RankUnit(Term("speed"), ("speed",), stand_ins=("slow", "faster"))
    >>> [u.stand_ins for u in unnamed((speed, RankUnit(Term("slow"), ("slow", "slows"))))]
    [('faster',), ()]
    """
    named = {f for ru in units for f in ru.forms}
    return tuple(attrs.evolve(ru, stand_ins=tuple(f for f in ru.stand_ins if f not in named))
                 if ru.stand_ins else ru for ru in units)


def read_near(unit: RankUnit, forms: tuple[str, ...], containing: int,
              counts: Mapping[str, int]) -> tuple[tuple[str, ...], int, float]:
    """``unit``'s forms, the messages holding them and its share, given its own ``forms``
    held in ``containing`` messages: its near-synonyms the store holds join them, at
    :data:`NEAR_SHARE` of its share, when it holds none of its own (its own spelling
    stays first, for a title that holds it: titles are not counted)."""
    near = tuple(f for f in unit.stand_ins if counts.get(f, 0) > 0)
    if containing or not near:
        return forms, containing, unit.share
    return (*forms, *near), sum(counts[f] for f in near), unit.share * NEAR_SHARE
