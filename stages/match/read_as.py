"""What a search read in place of a question's word no message holds, said in a note.

A misspelt word is read as its spelling the store holds (:mod:`~harkback.stages.match.typos`),
a word the store lacks by its near-synonyms (:mod:`~harkback.stages.match.near`). Either way
the sessions found may not say the question's word at all, and the payload names no query
words: without a note (``--json`` and the MCP tools: ``notes``) a user could not tell why a
session about "docker" answered "dokcer", nor that a correction of a project's name they
spelt right ("fetchr" read as "fetcher") is why a look-alike came first.

>>> from harkback.stages.query import Term
>>> planned = (RankUnit(Term("dokcer"), ("dokcer",)), RankUnit(Term("speed"), ("speed",)))
>>> weighed = (RankUnit(Term("dokcer"), ("dokcer", "docker", "dockers")),
...            RankUnit(Term("speed"), ("speed", "slow", "faster"), share=0.5))
>>> for note in read_as(planned, weighed):
...     print(note)
no message holds 'dokcer': read as 'docker'
no message holds 'speed': read by its near words 'slow', 'faster'
"""

from __future__ import annotations

from collections.abc import Sequence

from harkback.stages.match.score import RankUnit
from harkback.stages.query import Term

SHOWN = 3
"""At most this many near words are named in a note."""


def read_as(planned: Sequence[RankUnit], weighed: Sequence[RankUnit]) -> tuple[str, ...]:
    """A note for each of the ``planned`` words that ``weighed`` (the same units, weighed
    against the store) reads by other words than its own forms."""
    notes = []
    for before, after in zip(planned, weighed, strict=False):
        if not isinstance(before.unit, Term) or before.names:
            continue  # a CJK name of an English word: weighed by the word it names
        own = set(before.forms)
        other = [f for f in after.forms if f not in own]
        if not other:
            continue
        if after.share < before.share:
            named = ", ".join(f"'{f}'" for f in other[:SHOWN])
            notes.append(f"no message holds '{before.unit.text}': read by its near words "
                         f"{named}")
        else:
            notes.append(f"no message holds '{before.unit.text}': read as '{other[0]}'")
    return tuple(notes)
