"""A bound of a title's BM25, computed by the server from its ``tsvector``: never below the
score this process gives the title (:func:`~harkback.adapters.stores.postgres_search.fit`),
equal to it for a query of plain words.

BM25 grows with each unit's frequency, so a frequency never below the true one gives a
score never below the true one. The frequencies come from the vector:

- a title whose every token is distinct (as many lexemes as tokens, at most
  :data:`~harkback.adapters.stores.postgres_text.MAX_POSITIONS`, so no position was
  dropped) holds a word once if the vector matches it, else not at all: one cheap test per
  word (a word cut to the lexeme's limit may match another cut the same: still never
  below). Most titles are so; a query with a prefix does not take this way (how many
  words a prefix starts is not one test);
- any other title within :data:`~harkback.adapters.stores.postgres_text.MAX_POSITION`
  tokens: the word's positions counted (``unnest``), a prefix's summed over the lexemes
  it starts; the bound only when the vector kept every position and cut no word;
- a phrase: its least frequent word's frequency (each occurrence of the phrase is one of
  each of its words').

Any other title has no bound (NULL): its score is not known from the vector. The title's
length is its stored token count, the idfs and average length those this process counted;
each term is the same operations in the same order as
:func:`~harkback.adapters.stores.memory_match.bm25`, on doubles, so both round alike.

>>> from harkback.stages.query import Phrase
>>> sql, words = bound([Term("cors"), Phrase(("api", "key"))], [2.0, 1.5], 4.0)
>>> words[:4], words[6:8]  # each frequency is written twice, so are its words
(["'cors'", "'cors'", "'api'", "'key'"], ['cors', 'cors'])
>>> sql.startswith("CASE WHEN s.length <= 256 AND length(s.tokens) = s.length THEN")
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harkback.adapters.stores.postgres_text import (
    MAX_LEXEME_CHARS,
    MAX_POSITION,
    MAX_POSITIONS,
    tsquery,
)
from harkback.stages.match.score import K1, B
from harkback.stages.query import Term, Unit


def _words(unit: Unit) -> list[Term]:
    """The unit's words as terms (a phrase's last one a prefix if the phrase is)."""
    if isinstance(unit, Term):
        return [unit]
    last = len(unit.terms) - 1
    return [Term(t, prefix=unit.prefix and i == last) for i, t in enumerate(unit.terms)]


Frequency = Callable[[Term], tuple[str, str]]
"""A word's frequency in a candidate: SQL with one ``%s``, and its value."""


def _sum(leaves: Sequence[Unit], idfs: Sequence[float], average: float,
         frequency: Frequency, values: list[str]) -> str:
    """BM25 over the weighed leaves, each word's frequency by ``frequency`` (values added
    to ``values`` in the order of the SQL)."""
    norm = (f"({K1!r}::float8 * (1::float8 - {B!r}::float8 + {B!r}::float8 * s.length "
            f"/ {average!r}::float8))" if average else f"{K1!r}::float8")
    parts = []
    for unit, weight in zip(leaves, idfs, strict=True):
        if not weight:  # an excluded unit: never in a match, weighs nothing
            continue
        words = [frequency(w) for w in _words(unit)]
        found = words[0][0] if len(words) == 1 else (
            "LEAST(" + ", ".join(sql for sql, _ in words) + ")")
        # idf * (f * (K1 + 1)) / (f + norm), as memory_match.bm25 has it: the frequency
        # twice, so its values twice.
        values += [v for _, v in words] * 2
        parts.append(f"{weight!r}::float8 * ({found} * {K1 + 1!r}::float8) "
                     f"/ ({found} + {norm})")
    return " + ".join(parts) if parts else "0::float8"


def _present(word: Term) -> tuple[str, str]:
    return "(s.tokens @@ %s::tsquery)::int::float8", tsquery(word)


def _positions(word: Term) -> tuple[str, str]:
    return (f"COALESCE(sum(cardinality(u.positions)) FILTER (WHERE u.lexeme "
            f"{'^@' if word.prefix else '='} %s), 0)::float8", word.text)


def bound(leaves: Sequence[Unit], idfs: Sequence[float], average: float
          ) -> tuple[str, list[str]]:
    """The bound over a candidate ``s`` (see the module), and its values."""
    values: list[str] = []
    # A prefix's frequency is how many distinct words it starts: not known from a test.
    distinct = "" if any(w.prefix for u in leaves for w in _words(u)) else (
        f"WHEN s.length <= {MAX_POSITIONS} AND length(s.tokens) = s.length THEN "
        + _sum(leaves, idfs, average, _present, values) + " ")
    counted = _sum(leaves, idfs, average, _positions, values)
    return (f"CASE {distinct}WHEN s.length <= {MAX_POSITION} THEN (SELECT CASE "
            f"WHEN sum(cardinality(u.positions)) = s.length AND max(length(u.lexeme)) "
            f"< {MAX_LEXEME_CHARS} THEN {counted} END FROM unnest(s.tokens) AS u) END",
            values)
