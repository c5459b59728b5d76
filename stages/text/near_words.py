"""Developers' near-synonyms: the other words a developer writes for the same trouble.

A question says how the CI was "sped up"; the session said it was "too slow" and is "faster"
now. A question asks why the backup "broke"; the session says the job "failed" with an
error. No stemmer joins such words, and the question's word is then found nowhere in the
store. The words developers use for the same few troubles (slowness, failure, a crash, a
hang, a refusal) are grouped here, and the ranker reads a question's word that no message
holds by the other words of its group, at a part of its weight
(:data:`~harkback.stages.match.near.NEAR_SHARE`). A word the store holds is searched as
written: its group is never read, so a session saying the question's own word is never
outweighed by one saying a near word. Only words of one meaning in software work are
grouped; a group is no thesaurus entry: "break" is not "pause", and "quick" is left out
(a "quick question" or a "quick fix" is no speed).

>>> near_words("speed")[:3], near_words("broke")[:2], near_words("docker")
(('fast', 'faster', 'slow'), ('fail', 'failure'), ())
"""

from __future__ import annotations

from functools import cache

from harkback.stages.text.irregular import irregular_forms
from harkback.stages.text.stem import stem

# One group a line: words that name the same thing when a developer describes a problem.
_GROUPS = """
speed fast faster slow slower sluggish
break fail failure error
crash die dead killed
hang stuck freeze unresponsive
talk reach connect
refuse reject deny
wrong incorrect
junk spam
flaky intermittent sporadic
remove delete
folder directory
photo picture image
outage downtime
"""


@cache
def _groups() -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for line in _GROUPS.strip().splitlines():
        words = line.split()
        for word in words:
            table[stem(word)] = tuple(w for w in words if w != word)
    return table


def near_words(word: str) -> tuple[str, ...]:
    """The other words of the group of ``word`` (a lower-case token, by its stem:
    "failing" is "fail"; an irregular form by its verb: "broke" is "break"), or () when it
    is in none."""
    base = irregular_forms(word)[:1]
    return _groups().get(stem(base[0] if base else word), ())
