"""Tests of message scoring: IDF, BM25 over query units, and the fast tokenizer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.match.counting import message_tokens
from harkback.stages.match.score import RankUnit, idf, message_scorer, part_scorer, score_message
from harkback.stages.query import Phrase, Term
from harkback.stages.text.tokens import index_tokens, is_cjk


@given(st.integers(1, 10_000), st.integers(0, 10_000), st.integers(0, 10_000))
def test_idf_is_positive_and_falls_with_frequency(total: int, a: int, b: int) -> None:
    """IDF stays positive and a rarer term never weighs less."""
    low, high = sorted((a, b))
    assert idf(total, high) <= idf(total, low)
    assert idf(total, high) > 0


def test_score_merges_forms_of_one_word() -> None:
    """'bike' and 'bikes' in one message count as two occurrences of one unit."""
    unit = (RankUnit(Term("bike"), ("bike", "bikes"), 1.0),)
    both, covered = score_message("bike bikes", unit, average_length=2.0)
    one, _ = score_message("bike other", unit, average_length=2.0)
    assert both > one and covered == frozenset({0})


def test_longer_message_scores_lower_for_the_same_matches() -> None:
    """Length normalisation: the same match in a longer message weighs less."""
    unit = (RankUnit(Term("nginx"), ("nginx",), 1.0),)
    short, _ = score_message("nginx cors", unit, average_length=5.0)
    long, _ = score_message("nginx " + "filler " * 40, unit, average_length=5.0)
    assert short > long


def test_phrase_units_count_adjacent_words_only() -> None:
    """A phrase unit covers a message only where its words stand together."""
    unit = (RankUnit(Phrase(("bridge", "network")), ("bridge", "network"), 1.0),)
    assert score_message("the bridge network", unit, average_length=3.0)[1] == {0}
    assert score_message("network of the bridge", unit, average_length=3.0)[1] == frozenset()


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_message_tokens_agree_with_the_index_on_ascii(text: str) -> None:
    """The fast ASCII tokenizer finds exactly the index's tokens."""
    assert tuple(message_tokens(text)) == index_tokens(text)


@given(st.text())
def test_message_tokens_agree_with_the_index_on_any_text(text: str) -> None:
    """Non-ASCII text (CJK included) is tokenized as the index does."""
    assert tuple(message_tokens(text)) == index_tokens(text)


_UNITS = (RankUnit(Term("bike"), ("bike", "bikes", "biked"), 1.3),
          RankUnit(Term("docker"), ("docker",), 0.7),
          RankUnit(Term("cafe"), ("cafe",), 2.0))
_pieces = st.one_of(st.sampled_from(["bike", "Bikes", "BIKED", "docker!", "café", "cafe", "x1"]),
                    st.text(alphabet=st.characters(max_codepoint=0x24F), max_size=6))


@given(st.lists(_pieces, max_size=40).map(" ".join), st.floats(1.0, 50.0))
def test_scorer_is_bm25_over_the_index_tokens(text: str, average: float) -> None:
    """Both counting paths (bytes for ASCII, tokens otherwise) give BM25 over index tokens."""
    toks = index_tokens(text)
    norm = 1.2 * (1 - 0.75 + 0.75 * len(toks) / average)
    counts = {j: sum(toks.count(f) for f in ru.forms) for j, ru in enumerate(_UNITS)}
    expected = sum(_UNITS[j].idf * tf * 2.2 / (tf + norm) for j, tf in counts.items() if tf)
    score, covered = message_scorer(_UNITS, average_length=average, k1=1.2, b=0.75)(text)
    assert covered == {j for j, tf in counts.items() if tf}
    assert score == pytest.approx(expected)


def _reference(units: tuple[RankUnit, ...], text: str, average: float) -> tuple[float, set[int]]:
    """BM25 counted token by token, as the ranker first did: a whole word's forms, a
    prefix's tokens, a phrase's runs of tokens (its last word a prefix when asked)."""
    toks = index_tokens(text)
    counts: dict[int, int] = {}
    for j, ru in enumerate(units):
        unit = ru.unit
        if isinstance(unit, Term) and (unit.prefix or (len(unit.text) == 1 and is_cjk(unit.text))):
            tf = sum(1 for t in toks if t.startswith(unit.text))
        elif isinstance(unit, Term):
            tf = sum(toks.count(f) for f in (ru.forms if not is_cjk(unit.text) else (unit.text,)))
        else:
            n, words = len(unit.terms), unit.terms
            tf = sum(1 for i in range(len(toks) - n + 1)
                     if toks[i:i + n - 1] == words[:-1] and (
                         toks[i + n - 1] == words[-1]
                         or (unit.prefix and toks[i + n - 1].startswith(words[-1]))))
        if tf:
            counts[j] = tf
    norm = 1.2 * (1 - 0.75 + 0.75 * len(toks) / average)
    return (sum(units[j].idf * tf * 2.2 / (tf + norm) for j, tf in sorted(counts.items())),
            set(counts))


_MIXED = (RankUnit(Term("bike"), ("bike", "bikes"), 1.3),
          RankUnit(Term("dock", prefix=True), ("dock",), 0.9),
          RankUnit(Phrase(("bridge", "network")), ("bridge", "network"), 1.1),
          RankUnit(Phrase(("a", "a")), ("a",), 0.2),
          RankUnit(Phrase(("cors", "决"), prefix=True), ("cors", "决"), 0.8),
          RankUnit(Term("数据"), ("数据",), 1.7),
          RankUnit(Term("哈哈"), ("哈哈",), 0.6),
          RankUnit(Term("库"), ("库",), 0.4))
_WORDS_AND_BIGRAMS = (_MIXED[0], _MIXED[5], _MIXED[6])
_mixed_pieces = st.one_of(
    st.sampled_from(["bike", "Bikes", "docker", "Dock", "bridge network", "a a a", "cors 决定",
                     "数据库", "哈哈哈", "库", "ＤＯＣＫ", "café", "x_1", "上次怎么", "!", "🙂"]),
    st.text(alphabet=st.characters(max_codepoint=0x24F), max_size=6))


@pytest.mark.parametrize("units", [_MIXED, _WORDS_AND_BIGRAMS, _UNITS, (_MIXED[1],),
                                   (_MIXED[0], _MIXED[1]), (_MIXED[2], _MIXED[3])],
                         ids=["mixed", "bigrams", "words", "prefix", "word-and-prefix",
                              "phrases"])
@given(text=st.lists(_mixed_pieces, max_size=40).map(" ".join), average=st.floats(1.0, 50.0))
def test_scorer_counts_as_the_token_loop_did(units: tuple[RankUnit, ...], text: str,
                                             average: float) -> None:
    """Prefixes and phrases counted on joined tokens, CJK bigrams on the folded text,
    give the very score of counting token by token (the same float)."""
    score, covered = message_scorer(units, average_length=average, k1=1.2, b=0.75)(text)
    expected, expected_covered = _reference(units, text, average)
    assert covered == expected_covered
    assert score == expected


_plain_pieces = st.sampled_from(["bike", "Bikes", "数据库", "哈哈哈", "库", "上次怎么", "。", "、",
                                 "【", "x_1", "BIKE", "数", "据", "哈", "！", "ＤＯＣＫ", "한국어",
                                 "1", " ", "é", "🙂", "，", "？", "Ｂｉｋｅ"])


@pytest.mark.parametrize("units", [_WORDS_AND_BIGRAMS, _UNITS, (_MIXED[5], _MIXED[6])],
                         ids=["words-and-bigrams", "words", "bigrams"])
@given(text=st.lists(_plain_pieces, max_size=30).map("".join), average=st.floats(1.0, 50.0))
def test_plain_cjk_text_scores_as_the_token_loop_did(units: tuple[RankUnit, ...], text: str,
                                                     average: float) -> None:
    """Chinese and Korean text counted on its UTF-8 (most of a Chinese question's
    candidates) gives the very score of counting token by token."""
    score, covered = message_scorer(units, average_length=average, k1=1.2, b=0.75)(text)
    expected, expected_covered = _reference(units, text, average)
    assert covered == expected_covered
    assert score == expected


_PARTS = (frozenset({0, 1}), frozenset({2, 3, 4}), frozenset({5, 6, 7}), frozenset({0, 5}))


@given(text=st.lists(_mixed_pieces, max_size=40).map(" ".join), average=st.floats(1.0, 50.0),
       whole=st.one_of(st.none(), st.integers(1, 400)))
def test_each_part_scores_as_its_units_alone(text: str, average: float, whole: int | None
                                             ) -> None:
    """A message read once for every clause of a question gives each clause the very
    score of scoring it on the clause's units alone (the same float), the start of a
    long message too."""
    parts = part_scorer(_MIXED, _PARTS, average_length=average)(text, whole)
    alone = tuple(message_scorer([_MIXED[j] for j in sorted(part)], average_length=average)(
        text, whole)[0] for part in _PARTS)
    assert parts == alone
