"""BM25 of one message over the query's units, each word's forms counted as one.

The lexical ranker re-scores every candidate message it reads: BM25 over query *words*
(a word's inflections merged into one term with one IDF), the units each message
covers, and a weight by role (:data:`ROLE_WEIGHTS`). :data:`K1` and :data:`B`, BM25's
usual parameters, are also the in-memory store's.

>>> unit = RankUnit(Term("bike"), ("bike", "bikes"), idf(100, 4))
>>> round(score_message("two bikes and a bike", (unit,), average_length=5.0)[0], 3)
4.278
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import AnyStr, Protocol, TypeVar

import attrs

from harkback.stages.query import Phrase, Term, Unit, phrase_count, unit_matches
from harkback.stages.records import MessageHit, Role
from harkback.stages.text.tokens import (
    ASCII_FOLD,
    ASCII_FOLD_BYTES,
    Folded,
    index_tokens,
    is_bigram,
    is_cjk,
    overlapping_count,
    plain_cjk,
    word_stream,
)

K1 = 1.2
B = 0.75
"""BM25's usual parameters (also FTS5's); message-level length normalisation."""


def idf(documents: int, containing: int) -> float:
    """BM25's inverse document frequency in its non-negative form, ``ln(1 + (N-n+.5)/(n+.5))``.

    >>> round(idf(100, 1), 3), round(idf(100, 100), 3)
    (4.21, 0.005)
    """
    containing = min(max(containing, 0), documents)
    return math.log(1 + (documents - containing + 0.5) / (containing + 0.5))


ROLE_WEIGHTS: tuple[tuple[Role, float], ...] = (("user", 1.5),)
"""Message scores by role, by default: the user's own words count half again.

People ask about what *they* said, decided and asked for; an assistant's turns are long
and reuse the question's words generically. Assistant and tool text still counts in
full, so "the script you wrote" is found; the weight only breaks near-ties. 1.25, 1.5
and 2.0 scored alike on the dev data (within 0.02 everywhere), so the middle is used.
"""


@attrs.frozen
class RankUnit:
    """One query word or phrase, the index tokens that count for it, and its weight."""

    unit: Unit
    forms: tuple[str, ...]
    idf: float = 0.0
    share: float = 1.0
    """The part of a word this unit is: 1 for a word or phrase, less for one bigram of a
    CJK word (:func:`~harkback.stages.match.plan.bigram_shares`)."""
    names: tuple[int, ...] = ()
    """The units (by position in the plan) of the question's CJK word this unit is the
    English name of, or for an unsearched unit (below) the English word whose CJK words it
    holds and whose weight it takes a share of (:mod:`~harkback.stages.match.across`); ()
    for the others."""
    count: int = 0
    """How many of the store's messages hold it, as it was weighed (0: not counted)."""
    searched: bool = True
    """Whether the store is asked for its forms; False for the CJK words of an English
    question's word (:mod:`~harkback.stages.match.across`), which weigh the rows the
    question's own words read and select none."""


@attrs.frozen
class Scored:
    """A hit re-scored: its message score and the query units it covers."""

    hit: MessageHit
    score: float
    covered: frozenset[int]


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


class MessageScorer(Protocol):
    """A message's BM25 over the query's units, and the units it covers (see
    :func:`message_scorer`); ``length`` is the whole message's length in tokens when
    ``text`` is only its start (:attr:`~harkback.stages.records.MessageHit.length`)."""

    def __call__(self, text: str, length: int | None = None, /
                 ) -> tuple[float, frozenset[int]]: ...


T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Counted(Protocol[T_co]):
    """What a message's counts give (:func:`message_scorer`, :func:`part_scorer`)."""

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


def _needles(units: Sequence[RankUnit]) -> _Needles | None:
    text: list[tuple[int, str]] = []
    for j, ru in enumerate(units):
        unit = ru.unit
        if _plain(ru.unit):
            continue
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


def message_scorer(units: Sequence[RankUnit], *, average_length: float,
                   k1: float = K1, b: float = B) -> MessageScorer:
    """A function giving a message's BM25 over ``units`` (forms merged) and the units it covers.

    What depends only on the query (which units are plain words, which unit each form
    counts for) is worked out once here, not once per candidate message. A message is
    normalized once (:func:`~harkback.stages.text.tokens.word_stream`); when its words
    are all ASCII it is counted on its bytes. Whole words are counted among the forms a
    message holds (one set intersection); prefixes and phrases in its tokens joined by
    spaces (``str.count``, ``str.find``), not token by token.

    Given the whole message's ``length`` in tokens, the text is only its start (a store
    reads no more of a huge message: :data:`~harkback.stages.long_text.LONGEST_READ`): its
    counts stand for the whole at the rate they occur in it, and the whole length
    normalizes them. Messages read whole are scored as they always were.

    >>> score = message_scorer((RankUnit(Term("bike"), ("bike", "bikes"), 2.0),),
    ...                        average_length=5.0)
    >>> score("two bikes and a bike"), score("a car")
    ((2.75, frozenset({0})), (0.0, frozenset()))
    >>> round(score("two bikes and a bike", 50)[0], 3)  # the start of 50 tokens
    3.003
    """
    weigh = _bm25(units, average_length, k1, b)
    nothing: frozenset[int] = frozenset()

    def total(counts: Mapping[int, int], length: int, whole: int | None
              ) -> tuple[float, frozenset[int]]:
        if not counts:
            return 0.0, nothing  # most candidates cover one unit or none: no sort then
        return weigh(counts, length, whole), frozenset(counts)

    return _counting(units, total)


def part_scorer(units: Sequence[RankUnit], parts: Sequence[frozenset[int]], *,
                average_length: float, k1: float = K1, b: float = B
                ) -> _Counted[tuple[float, ...]]:
    """A function giving a message's BM25 over each of ``parts`` (sets of indices into
    ``units``), the message read once: the same floats as :func:`message_scorer` over
    each part's units alone.

    >>> us = [RankUnit(Term(w), (w,), 2.0) for w in ("bike", "red", "car")]
    >>> score = part_scorer(us, [frozenset({0, 1}), frozenset({2})], average_length=5.0)
    >>> score("a red bike and a bike") == (
    ...     message_scorer(us[:2], average_length=5.0)("a red bike and a bike")[0], 0.0)
    True
    """
    weigh = _bm25(units, average_length, k1, b)

    def total(counts: Mapping[int, int], length: int, whole: int | None
              ) -> tuple[float, ...]:
        return tuple(weigh({j: tf for j, tf in counts.items() if j in part}, length, whole)
                     for part in parts)

    return _counting(units, total)


def _bm25(units: Sequence[RankUnit], average_length: float, k1: float, b: float
          ) -> Callable[[Mapping[int, int], int, int | None], float]:
    # BM25 of each unit's count in a message of ``length`` tokens, summed over the units.
    def norm(length: int) -> float:
        return k1 * (1 - b + b * length / average_length) if average_length > 0 else k1

    idfs = [u.idf for u in units]
    k1_plus_1 = k1 + 1

    def weigh(counts: Mapping[int, int], length: int, whole: int | None) -> float:
        if whole is not None:
            return sampled(counts, length, whole)
        n = norm(length)
        # Summed in unit order, so the score is the same float on every path.
        score = 0.0
        for j, tf in sorted(counts.items()) if len(counts) > 1 else counts.items():
            score += idfs[j] * tf * k1_plus_1 / (tf + n)
        return score

    def sampled(counts: Mapping[int, int], length: int, whole: int) -> float:
        # Only the start of a huge message was read: its counts stand for the whole at the
        # rate they occur in that start, and the whole length normalizes them.
        rate = whole / max(length, 1)
        n = norm(whole)
        score = 0.0
        for j, tf in sorted(counts.items()):
            score += idfs[j] * (tf * rate) * k1_plus_1 / (tf * rate + n)
        return score

    return weigh


def _counting(units: Sequence[RankUnit],
              total: Callable[[Mapping[int, int], int, int | None], T]) -> _Counted[T]:
    # Each unit's count in a message (a word's forms together) and the message's length
    # in tokens, given to ``total`` with the whole message's length when only its start
    # was read; the fastest way for the message's writing (see message_scorer).
    owners: dict[str, list[int]] = {}
    for j, ru in enumerate(units):
        if _plain(ru.unit):
            for form in dict.fromkeys(ru.forms):
                owners.setdefault(form, []).append(j)
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

    def text_path(toks: Sequence[str], found: _Needles | None, whole: int | None
                  ) -> T:
        counts: dict[int, int] = {}
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
                else text_path(stream.tokens(), needles, whole))

    def token_path(text: str, whole: int | None = None, /) -> T:
        toks = message_tokens(text)
        token_set = frozenset(toks)
        counts: dict[int, int] = {}
        for j, ru in enumerate(units):
            if _plain(ru.unit):
                tf = sum(toks.count(f) for f in ru.forms if f in token_set)
            else:
                tf = _unit_count(ru.unit, toks, token_set)
            if tf:
                counts[j] = tf
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


def score_message(text: str, units: Sequence[RankUnit], *, average_length: float,
                  k1: float = K1, b: float = B) -> tuple[float, frozenset[int]]:
    """BM25 of one message over query units (forms merged), and the units it covers.

    To score many messages for one query, build :func:`message_scorer` once.

    >>> us = (RankUnit(Term("bike"), ("bike", "bikes"), 2.0),)
    >>> score_message("two bikes and a bike", us, average_length=5.0)
    (2.75, frozenset({0}))
    """
    return message_scorer(units, average_length=average_length, k1=k1, b=b)(text)


def _unit_count(unit: Unit, toks: Sequence[str], token_set: frozenset[str]) -> int:
    if isinstance(unit, Phrase):
        return phrase_count(unit, toks) if unit_matches(unit, toks, token_set) else 0
    if not unit_matches(unit, toks, token_set):
        return 0
    if unit.prefix or (len(unit.text) == 1 and is_cjk(unit.text)):
        return sum(1 for t in toks if t.startswith(unit.text))
    return toks.count(unit.text)
