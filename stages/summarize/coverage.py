"""Which query units a transcript line covers, for the extractive summary.

>>> from harkback.stages.query import parse_query
>>> covers = line_coverage(parse_query("docker 数据库").units)
>>> sorted(covers("Docker: 数据库 down")), sorted(covers("数据 only")), sorted(covers("nothing"))
([0, 1, 2], [1], [])
>>> line_heads(parse_query("docker 数据库").units)
('docker',)
>>> sorted(line_coverage(parse_query("bikes").units, (("bike",),))("my bike is fixed"))
[0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from harkback.stages.query import Term, Unit, unit_matches
from harkback.stages.text.tokens import (
    ASCII_FOLD,
    ASCII_FOLD_BYTES,
    Folded,
    folded_words,
    index_tokens,
    is_bigram,
    is_cjk,
)


@lru_cache(maxsize=64)
def line_heads(units: Sequence[Unit], spellings: Sequence[Sequence[str]] = ()
               ) -> tuple[str, ...]:
    """The units' first tokens that an ASCII line can hold (the ASCII ones), their other
    spellings too."""
    heads = {u.text if isinstance(u, Term) else u.terms[0] for u in units}
    heads.update(f for forms in spellings for f in forms)
    return tuple(sorted(h for h in heads if h.isascii()))


@lru_cache(maxsize=64)
def line_coverage(units: Sequence[Unit], spellings: Sequence[Sequence[str]] = ()
                  ) -> Callable[[str], frozenset[int]]:
    """The units a line covers (:func:`unit_matches` over its index tokens): a whole word
    is looked up in the line's tokens at once (as any of its ``spellings``, by the unit's
    place: :attr:`~harkback.stages.query.ParsedQuery.spellings`), the rest one by one.

    A line that is not ASCII and holds only whole words of the query is not tokenized:
    a CJK bigram is one of its tokens exactly when its normalized text holds the two
    characters in a row (they are then in one CJK run), and its other tokens are the
    words of that text (:class:`~harkback.stages.text.tokens.Folded`). Listing every
    bigram of a CJK line cost ~15 us a line, a third of a Chinese question's summary.
    """
    words: dict[str, list[int]] = {}
    others: list[tuple[int, Unit]] = []
    for i, unit in enumerate(units):
        if isinstance(unit, Term) and not unit.prefix and not (
                len(unit.text) == 1 and is_cjk(unit.text)):
            words.setdefault(unit.text, []).append(i)
        else:
            others.append((i, unit))
    for i, forms in enumerate(spellings):
        for form in forms:
            if form not in words or i not in words[form]:
                words.setdefault(form, []).append(i)
    bigrams = tuple((word, tuple(js)) for word, js in words.items() if is_bigram(word))
    plain = {word: js for word, js in words.items() if not is_bigram(word)}
    # An ASCII line's tokens are its folded bytes' words: only the ASCII words can be one.
    raw_words = {word.encode(): js for word, js in words.items() if word.isascii()}
    raw_set = frozenset(raw_words)

    def covers(line: str) -> frozenset[int]:
        toks: Sequence[str]
        if line.isascii():
            if not others:
                raw = line.encode().translate(ASCII_FOLD_BYTES).split()
                return frozenset([i for word in raw_set.intersection(raw)
                                  for i in raw_words[word]])
            toks = line.translate(ASCII_FOLD).split()
        elif not others:
            folded = Folded(folded_words(line))
            found = [i for word, js in bigrams if word in folded for i in js]
            if plain:
                found += [i for word in plain.keys() & folded.words() for i in plain[word]]
            return frozenset(found)
        else:
            toks = index_tokens(line)
        found = [i for word in words.keys() & toks for i in words[word]]
        if others:
            token_set = frozenset(toks)
            found += [i for i, unit in others if unit_matches(unit, toks, token_set)]
        return frozenset(found)
    return covers
