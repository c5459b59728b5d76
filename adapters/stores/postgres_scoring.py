"""What the PostgreSQL store reads of a search's candidates to score them: the places of the
query's words in each candidate's ``tsvector``, not the message itself.

BM25 needs each unit's frequency in a message and the message's length; a phrase needs
where its words stand. The ``tsvector`` holds every index token at its position, so the
server gives, per candidate, only the lexemes a query word could match (each word taken
as a prefix: a superset of what the matcher compares) with their positions, and this
process lays them out at those positions with every other place blank. Scoring those
tokens gives what scoring the whole message would: every other token matches no query
word. A ``tsvector`` keeps a lexeme's first 256 positions up to 16,383 and words up to 500
characters; a candidate whose vector lost anything (its positions do not add up to its
length) is scored from its own text instead, as before.

>>> sparse_tokens(5, ["docker", "bridge"], ["1 4", "2"])
['docker', 'bridge', '', 'docker', '']
>>> complete(5, 5, 6), complete(5, 4, 6), complete(20_000, 20_000, 6)
(True, False, False)
"""

from __future__ import annotations

from collections.abc import Sequence

from harkback.adapters.stores.postgres_text import MAX_LEXEME_CHARS, MAX_POSITION
from harkback.stages.query import Phrase, Unit

LEXEMES = (
    "LEFT JOIN LATERAL (SELECT sum(cardinality(u.positions)) AS stored, "
    "max(length(u.lexeme)) AS longest, "
    "array_agg(u.lexeme) FILTER (WHERE u.lexeme ^@ ANY(%s::text[])) AS lexemes, "
    "array_agg(array_to_string(u.positions, ' ')) FILTER (WHERE u.lexeme ^@ ANY(%s::text[])) "
    "AS places FROM unnest(m.tokens) AS u) AS w ON true")
"""Joined to a candidate ``m``: how many positions its vector keeps, its longest lexeme, and
the lexemes starting with a query word (the word list bound twice) with their positions."""


def query_words(units: Sequence[Unit]) -> list[str]:
    """Every word of ``units``, cut as the index cuts them.

    >>> query_words([Phrase(("docker", "bridge")), Phrase(("docker", "x"))])
    ['docker', 'bridge', 'x']
    """
    words = (w for u in units for w in (u.terms if isinstance(u, Phrase) else (u.text,)))
    return list(dict.fromkeys(w[:MAX_LEXEME_CHARS] for w in words))


def complete(length: int, stored: int | None, longest: int | None) -> bool:
    """Whether a vector of a message of ``length`` tokens kept every one at its place."""
    return (length <= MAX_POSITION and stored == length and longest is not None
            and longest < MAX_LEXEME_CHARS)


def sparse_tokens(length: int, lexemes: Sequence[str] | None, places: Sequence[str] | None
                  ) -> list[str]:
    """The message's index tokens as far as scoring sees them: ``lexemes`` at ``places``
    (space-separated positions from 1), every other place blank."""
    tokens = [""] * length
    for lexeme, spots in zip(lexemes or (), places or (), strict=True):
        for spot in spots.split():
            tokens[int(spot) - 1] = lexeme
    return tokens
