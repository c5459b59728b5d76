"""Each query unit's count in a message, a word's forms together, found the fastest way
for the message's writing: ASCII bytes, a CJK text's words and bigrams, or its tokens.

:func:`unit_counter` gives a function that counts a message once and hands the counts to
what the caller sums them into (:mod:`~harkback.stages.match.score`: one BM25 for the
whole question, or one per clause).

>>> from harkback.stages.match.score import RankUnit
>>> from harkback.stages.query import Term
>>> count = unit_counter((RankUnit(Term("bike"), ("bike", "bikes"), 1.0),),
...                      lambda counts, length, whole: (dict(counts), length))
>>> count("two bikes and a bike")
({0: 2}, 5)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, AnyStr, Protocol, TypeVar

import attrs

from harkback.stages.query import Phrase, Term, Unit, phrase_count, unit_matches
from harkback.stages.text.katakana import is_katakana, katakana_runs, part_count, stem
from harkback.stages.text.tokens import (
    ASCII_FOLD,
    ASCII_FOLD_BYTES,
    Folded,
    folded_words,
    index_tokens,
    is_bigram,
    is_cjk,
    overlapping_count,
    plain_cjk,
    word_stream,
)

if TYPE_CHECKING:  # score.py builds on this module: the record is only named here
    from harkback.stages.match.score import RankUnit


def message_tokens(text: str) -> Sequence[str]:
    """The index tokens of a message (as :func:`index_tokens`), faster for ASCII text.

    On ASCII text the index's words are the runs of ``[a-z0-9]`` after lower-casing;
    one ``str.translate`` that lower-cases and blanks everything else, then a split,
    finds them about four times faster than a regex, and ranking does this to every
    candidate message.

    >>> message_tokens("Fixed the CORS-error (2x), then re_tried!")
    ['fixed', 'the', 'cors', 'error', '2x', 'then', 're', 'tried']
    """
    if text.isascii():
        return text.translate(ASCII_FOLD).split()
    return index_tokens(text)

@lru_cache(maxsize=1024)
def _plain(unit: Unit) -> bool:
    # A whole word counts as exact tokens (a CJK bigram too: the index holds it as one
    # token); a prefix is matched. A question's lone CJK character is parsed as a prefix;
    # one that is not is a Korean noun the planner gave its forms (text/korean.py).
    return isinstance(unit, Term) and not unit.prefix


T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Counted(Protocol[T_co]):
    """What a message's counts give, summed (see :func:`unit_counter`)."""

    def __call__(self, text: str, length: int | None = None, /) -> T_co: ...

@attrs.frozen
class _Needles:
    """What to look for in a message's tokens joined by single spaces, for the units not
    counted as whole tokens: ``(unit's index, needle)`` pairs. A needle starts with a
    space, so it is found where a token starts (a prefix, or a phrase's words in a row),
    and ends with one when its last word must end a token too; ``raw`` holds the needles
    for ASCII bytes (None: it cannot occur there)."""

    text: tuple[tuple[int, str], ...]
    raw: tuple[tuple[int, bytes | None], ...]
    words: bool = False
    """Whether each raw needle is the start of one token (a prefix of a word): it is then
    found as often in the folded bytes after a space as in the tokens joined by spaces."""


def _katakana_parts(ru: RankUnit) -> tuple[tuple[str, tuple[str, ...]], ...]:
    # What a unit counts of its katakana words, each part with the words it is counted in:
    # a phrase or a word form the word itself (its stem: the last long vowel written or
    # not), a bigram of the question's word the bigram. A part stands once, with all its
    # words, so that a run fitting two of them (ロック for ブロック and ロック) counts once.
    if isinstance(ru.unit, Phrase):
        pairs = [(stem(w), w) for w in ru.whole]
    else:
        pairs = [pair for f in ru.forms if is_katakana(f)
                 for pair in ([(stem(f), f)] if f in ru.whole
                              else [(f, w) for w in ru.whole if f in w])]
    words: dict[str, dict[str, None]] = {}
    for part, word in pairs:
        words.setdefault(part, {})[word] = None
    return tuple((part, tuple(of)) for part, of in words.items())


def _counted_forms(ru: RankUnit) -> Sequence[str]:
    # The forms counted as tokens: not a katakana one standing for a word counted whole.
    forms = dict.fromkeys(ru.forms)
    return tuple(f for f in forms if not is_katakana(f)) if ru.whole else tuple(forms)


def _needles(units: Sequence[RankUnit]) -> _Needles | None:
    text: list[tuple[int, str]] = []
    for j, ru in enumerate(units):
        unit = ru.unit
        if _plain(ru.unit) or ru.whole:
            continue  # (a phrase of katakana bigrams: its word counted whole)
        words = (unit.text,) if isinstance(unit, Term) else unit.terms
        if not words or any(not w or w != w.strip() or " " in w for w in words):
            return None  # no such token: counted the slow way
        # A prefix (a CJK character is one) counts tokens starting with it; a phrase its
        # words in a row, the last one whole unless the phrase is a prefix.
        whole = isinstance(unit, Phrase) and not unit.prefix
        text.append((j, " " + " ".join(words) + (" " if whole else "")))
    raw = tuple((j, needle.encode("ascii") if needle.isascii() else None)
                for j, needle in text)
    return _Needles(tuple(text), raw, all(b" " not in needle[1:] for _, needle in raw
                                          if needle is not None))



def unit_counter(units: Sequence[RankUnit],
                 total: Callable[[Mapping[int, int], int, int | None], T]) -> Counted[T]:
    # Each unit's count in a message (a word's forms together) and the message's length
    # in tokens, given to ``total`` with the whole message's length when only its start
    # was read; the fastest way for the message's writing (see the module).
    owners: dict[str, list[int]] = {}
    for j, ru in enumerate(units):
        if _plain(ru.unit):
            for form in _counted_forms(ru):
                owners.setdefault(form, []).append(j)
    # A unit's katakana words count in the runs that fit them (whole_katakana.py), their
    # forms not as tokens: after the rest, from the folded text.
    wholes = tuple((j, _katakana_parts(ru)) for j, ru in enumerate(units) if ru.whole)
    parts = frozenset(part for _, pairs in wholes for part, _ in pairs)

    def with_wholes(counts: dict[int, int], folded: str) -> dict[int, int]:
        if not any(part in folded for part in parts):
            return counts  # most candidates: a search in C per part
        runs = katakana_runs(folded)
        for j, pairs in wholes:
            if tf := sum(part_count(runs, part, *fit) for part, fit in pairs):
                counts[j] = counts.get(j, 0) + tf
        return counts
    raw_owners = {form.encode("ascii"): js for form, js in owners.items() if form.isascii()}
    forms, raw_forms = frozenset(owners), frozenset(raw_owners)
    bigrams = {form: js for form, js in owners.items() if is_bigram(form)}
    # Folded.bigram_count inlined (a call per bigram and candidate): two different
    # characters never overlap, so ``str.count`` counts them.
    bigram_counts = tuple((form, js, form[0] != form[1]) for form, js in bigrams.items())
    words = frozenset(form for form in owners if not is_cjk(form))
    needles = _needles(units)
    # Counted from a folded CJK text without listing its tokens: whole words and bigrams.
    by_runs = (needles is not None and not needles.text
               and len(bigrams) + len(words) == len(owners))
    # The same counts on a plain CJK text's UTF-8 (:func:`plain_cjk`): a word beyond ASCII
    # is not among its words, so only the ASCII ones are looked for.
    raw_words = frozenset(form.encode("ascii") for form in words if form.isascii())
    raw_bigrams = tuple((form.encode(), js, distinct) for form, js, distinct in bigram_counts)

    def raw_path(raw: bytes, found: _Needles | None, whole: int | None
                 ) -> T:
        folded = raw.translate(ASCII_FOLD_BYTES)
        toks = folded.split()
        counts: dict[int, int] = {}
        # An intersection hashes every token, also with no form to find (a phrase, a prefix).
        for form in raw_forms.intersection(toks) if raw_forms else ():
            tf = toks.count(form)
            for j in raw_owners[form]:
                counts[j] = counts.get(j, 0) + tf
        if found is not None and found.raw:
            # Folded bytes hold only token characters and spaces: a token starts after a
            # space, so one word's start needs no join of the tokens.
            joined = b" " + folded if found.words else b" " + b" ".join(toks) + b" "
            for j, needle in found.raw:
                if needle is not None and (tf := overlapping_count(joined, needle)):
                    counts[j] = tf
        return total(counts, len(toks), whole)

    def text_path(folded: Folded, found: _Needles | None, whole: int | None
                  ) -> T:
        toks = folded.tokens()
        counts: dict[int, int] = {} if not wholes else with_wholes({}, folded)
        for form in forms.intersection(toks) if forms else ():
            tf = toks.count(form)
            for j in owners[form]:
                counts[j] = counts.get(j, 0) + tf
        if found is not None and found.text:
            joined = " " + " ".join(toks) + " "
            for j, needle in found.text:
                if tf := overlapping_count(joined, needle):
                    counts[j] = tf
        return total(counts, len(toks), whole)

    def run_path(folded: Folded, whole: int | None) -> T:
        others = folded.words()
        counts = _words_and_bigrams(folded, others, words, owners, bigram_counts)
        if wholes:
            with_wholes(counts, folded)
        return total(counts, len(others) + folded.cjk_chars(), whole)

    def plain_path(raw: bytes, cjk_chars: int, whole: int | None
                   ) -> T:
        others = raw.translate(ASCII_FOLD_BYTES).split()
        counts = _words_and_bigrams(raw, others, raw_words, raw_owners, raw_bigrams)
        return total(counts, len(others) + cjk_chars, whole)

    def score(text: str, whole: int | None = None, /) -> T:
        if by_runs and not text.isascii() and (plain := plain_cjk(text)) is not None:
            return plain_path(*plain, whole)
        stream = word_stream(text)
        if isinstance(stream, bytes):
            return raw_path(stream, needles, whole)
        return (run_path(stream, whole) if by_runs
                else text_path(stream, needles, whole))

    def token_path(text: str, whole: int | None = None, /) -> T:
        toks = message_tokens(text)
        token_set = frozenset(toks)
        counts: dict[int, int] = {}
        for j, ru in enumerate(units):
            if _plain(ru.unit):
                tf = sum(toks.count(f) for f in _counted_forms(ru) if f in token_set)
            else:
                tf = 0 if ru.whole else _unit_count(ru.unit, toks, token_set)
            if tf:
                counts[j] = tf
        if wholes and not text.isascii():
            with_wholes(counts, folded_words(text))
        return total(counts, len(toks), whole)

    return score if needles is not None else token_path


def _words_and_bigrams(text: AnyStr, others: list[AnyStr], wanted: frozenset[AnyStr],
                       owners: Mapping[AnyStr, list[int]],
                       bigrams: Sequence[tuple[AnyStr, list[int], bool]]) -> dict[int, int]:
    """Each unit's count in a CJK text: the ``wanted`` words among its ``others`` (the
    words not CJK), then each bigram's occurrences (overlapping ones when its two
    characters are the same); the units a form counts for are its ``owners``."""
    counts: dict[int, int] = {}
    for form in wanted.intersection(others):
        tf = others.count(form)
        for j in owners[form]:
            counts[j] = counts.get(j, 0) + tf
    for form, js, distinct in bigrams:
        if tf := (text.count(form) if distinct else overlapping_count(text, form)):
            for j in js:
                counts[j] = counts.get(j, 0) + tf
    return counts


def _unit_count(unit: Unit, toks: Sequence[str], token_set: frozenset[str]) -> int:
    if isinstance(unit, Phrase):
        return phrase_count(unit, toks) if unit_matches(unit, toks, token_set) else 0
    if not unit_matches(unit, toks, token_set):
        return 0
    if unit.prefix or (len(unit.text) == 1 and is_cjk(unit.text)):
        return sum(1 for t in toks if t.startswith(unit.text))
    return toks.count(unit.text)
