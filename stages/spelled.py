"""Each unit of a question with the other spellings the ranker searched it by.

The ranker finds "my bike was serviced" for "how many bikes did I service" and an English
session for "超时" (:attr:`~harkback.stages.query.ParsedQuery.spellings`). Whatever shows
the session afterwards (the load stage's cut, the model's focus, the rerank passages, the
extractive summary) must look for the same words, or it misses the line that matched.

>>> from harkback.stages.query import ParsedQuery, Term
>>> parsed = ParsedQuery(expression=Term("bikes"), units=(Term("bikes"),), advanced=False,
...                      spellings=(("bike",),))
>>> spelled_units(parsed)
((Term(text='bikes', prefix=False), Term(text='bike', prefix=False)),)
>>> [u.text for u in searched_units(parsed)]
['bikes', 'bike']
"""

from __future__ import annotations

from harkback.stages.query import ParsedQuery, Term, Unit


def spelled_units(parsed: ParsedQuery) -> tuple[tuple[Unit, ...], ...]:
    """Each query unit followed by its other spellings as terms, by the unit's place."""
    extra = parsed.spellings
    return tuple((unit, *(Term(form) for form in (extra[i] if i < len(extra) else ())))
                 for i, unit in enumerate(parsed.units))


def searched_units(parsed: ParsedQuery) -> tuple[Unit, ...]:
    """The query units and every other spelling of them, for finding where a match is."""
    return tuple(unit for group in spelled_units(parsed) for unit in group)
