"""The fast tokenizer gives exactly what the first, simple one gave (the index depends on it)."""

from __future__ import annotations

import re
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.stages.text.tokens import (
    _FULL_WIDTH_WORD,
    _FULL_WIDTH_WORD_UTF8,
    _PLAIN,
    MARKLESS,
    ascii_words,
    index_text,
    index_tokens,
    is_bigram,
    normalize,
    overlapping_count,
    plain_cjk,
    tokens,
    word_stream,
)
from harkback.stages.text.voicing import devoiced
from tests.support.old_tokens import (
    first_normalize,
    first_split,
    reference_normalize,
    reference_split,
)

_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)


# Text mixing ASCII, Latin with accents, CJK, Hangul, full-width forms, combining marks,
# punctuation, underscores and emoji, in runs, so that every branch of the tokenizer is hit.
_ALPHABET = st.sampled_from(
    list("abcXYZ019 _-.,!\n\t\"'*") + list("éÜñçßİıſﬁ") + list("上次怎么解决修改服务端的")
    + list("ひらカタ한국어") + list("ＡＢＣ１２３ｶﾅ")
    + ["\u0301", "\u0308", "\u200b", "🙂", "Ⅻ", "²"]
    + list("。、「」’“—…\u3029\u302a\u3030\u3099")
    + list("バパハがぱｶﾞﾟ゛゜\u309aゔヴ㌀🈓"))
texts = st.one_of(st.text(), st.lists(_ALPHABET, max_size=80).map("".join))


@settings(max_examples=600)
@given(texts)
def test_index_tokens_match_the_reference_implementation(text: str) -> None:
    """index_tokens and index_text are the simple implementation's on any text."""
    expected = reference_split(text, index=True)
    assert index_tokens(text) == expected
    assert index_text(text) == " ".join(expected)


@settings(max_examples=600)
@given(texts)
def test_query_tokens_match_the_reference_implementation(text: str) -> None:
    """tokens is the simple implementation's on any text."""
    assert tokens(text) == reference_split(text, index=False)


@settings(max_examples=300)
@given(texts)
def test_normalize_matches_the_reference_implementation(text: str) -> None:
    """normalize is the simple implementation's on any text."""
    assert normalize(text) == reference_normalize(text)


@settings(max_examples=600)
@given(texts)
def test_devoiced_tokens_are_those_of_schema_version_2(text: str) -> None:
    """Today's tokens, devoiced character by character, are the tokens stores indexed
    before schema version 3 (what a read-only search of such a store looks for, and what
    the migration deletes from its index)."""
    assert tuple(devoiced(t) for t in index_tokens(text)) == first_split(text, index=True)
    assert devoiced(normalize(text)) == first_normalize(text)


def test_only_voiced_kana_and_their_marks_changed_from_schema_version_2() -> None:
    """Latin diacritics, Chinese, Korean and kana without a voicing mark normalize as the
    first implementation did; voiced kana keep their mark, half-width ones fold to it."""
    same = "Café naïve Ünïcode 上次怎么解决 한국어 지난번 ハケット ひらかな ｶﾀｶﾅ ＣＯＲＳ"
    assert normalize(same) == first_normalize(same)
    assert normalize("バケット パケット ハケット") == "バケット パケット ハケット"
    assert tokens("ﾊﾞｹｯﾄ") == tokens("バケット") != tokens("パケット")
    assert first_normalize("バケット パケット") == "ハケット ハケット"


def test_every_combining_mark_lies_below_the_table_limit() -> None:
    """The deletion table of combining marks covers all of Unicode."""
    beyond = [c for c in range(0x20000, 0x110000) if unicodedata.combining(chr(c))]
    assert beyond == []


@settings(max_examples=600)
@given(texts)
def test_ascii_words_hold_exactly_the_index_tokens(text: str) -> None:
    """When ascii_words gives bytes, their alphanumeric runs are the index's tokens."""
    folded = ascii_words(text)
    if folded is not None:
        assert tuple(re.findall(rb"[a-z0-9]+", folded)) == tuple(
            t.encode("ascii") for t in index_tokens(text))
    else:
        assert any(not t.isascii() for t in index_tokens(text))


def test_an_unassigned_cjk_code_point_is_a_token_not_a_separator() -> None:
    """U+2FA1E lies in the CJK ranges but is unassigned (not a word character to ``re``)."""
    assert index_tokens("a\U0002fa1e") == ("a", "\U0002fa1e")
    assert ascii_words("a\U0002fa1e") is None


@settings(max_examples=600)
@given(texts)
def test_word_stream_holds_exactly_the_index_tokens(text: str) -> None:
    """word_stream's bytes or folded text give the index's tokens, and a folded text's
    counts (its other words, its CJK characters, its bigrams) are those of the tokens."""
    expected = index_tokens(text)
    stream = word_stream(text)
    if isinstance(stream, bytes):
        assert tuple(re.findall(rb"[a-z0-9]+", stream.lower())) == tuple(
            t.encode("ascii") for t in expected)
        return
    assert tuple(stream.tokens()) == expected
    assert len(stream.words()) + stream.cjk_chars() == len(expected)
    assert stream.words() == [t for t in expected if not re.search(rf"[{_CJK}]", t)]
    for bigram in {t for t in expected if is_bigram(t)} | {"上次", "哈哈"}:
        assert stream.bigram_count(bigram) == expected.count(bigram)


def test_a_repeated_character_bigram_counts_overlapping_occurrences() -> None:
    """哈哈哈 is tokenized 哈哈, 哈哈, 哈: the bigram twice."""
    stream = word_stream("哈哈哈 ok")
    assert not isinstance(stream, bytes)
    assert stream.bigram_count("哈哈") == 2 == index_tokens("哈哈哈 ok").count("哈哈")


def test_no_combining_mark_is_markless() -> None:
    """normalize skips punctuation, Han and Hangul runs when it deletes combining marks:
    none is one."""
    ranges = re.findall(r"(.)-(.)", MARKLESS)
    assert len(ranges) == 6
    assert not [c for low, high in ranges for c in range(ord(low), ord(high) + 1)
                if unicodedata.combining(chr(c))]


def _plain_characters() -> list[str]:
    spans = re.findall(r"(.)-(.)", _PLAIN)
    assert len(spans) == 7
    return [chr(c) for low, high in spans for c in range(ord(low), ord(high) + 1)]


def test_each_plain_character_normalizes_alone_as_before() -> None:
    """On a plain character the shortcut gives what the three Unicode passes give, and none
    is a combining mark."""
    plain = _plain_characters()
    assert [c for c in plain if normalize(c) != first_normalize(c)] == []
    assert [c for c in plain if unicodedata.combining(c)] == []


def test_no_two_plain_characters_compose() -> None:
    """No canonical composition takes two plain characters (so a plain text normalizes
    character by character)."""
    plain = frozenset(_plain_characters())
    pairs = [(chr(c), parts) for c in range(0x30000)
             if (parts := unicodedata.decomposition(chr(c)).split())
             and not parts[0].startswith("<") and len(parts) == 2]
    assert [c for c, (a, b) in pairs if chr(int(a, 16)) in plain and chr(int(b, 16)) in plain] == []


_PLAIN_ALPHABET = st.sampled_from(
    list("abcXYZ019 _-.,!?\n") + list("，？！：；（）ＡＢＣａｂｃ１２３、。《》「」【】")
    + list("上次怎么解决数据库连接超时的问题") + list("한국어가각")
    + ["\u0301", "\u11a8", "\u3000", "é"])


@settings(max_examples=600)
@given(st.lists(_PLAIN_ALPHABET, max_size=60).map("".join))
def test_mostly_plain_text_normalizes_and_tokenizes_as_before(text: str) -> None:
    """Chinese and Korean text with full-width punctuation, with now and then a character
    that is not plain (a mark, a trailing jamo, an ideographic space), as the first
    implementation."""
    assert normalize(text) == first_normalize(text)
    assert index_tokens(text) == first_split(text, index=True)


_plain = st.lists(st.sampled_from([
    "数据库", "哈哈", "上次", "。", "、", "【", "Ab_1", "한국", "！", "ＤＯＣＫ", "，", "＿",
    "ｚ９", "é", " ", "\u3000", "\u3400", "\u9fff", "\uac00", "\ud7a3"]), max_size=20).map("".join)


@settings(max_examples=600)
@given(_plain | texts)
def test_plain_cjk_counts_what_the_folded_text_holds(text: str) -> None:
    """A plain CJK text's bytes give the folded text's other words, its CJK characters
    and each bigram's count, and only CJK text is plain."""
    plain = plain_cjk(text)
    stream = word_stream(text)
    if plain is None:
        return
    raw, cjk = plain
    assert not isinstance(stream, bytes)
    assert raw.decode().lower() == stream
    assert cjk == stream.cjk_chars() > 0
    assert re.findall(rb"[a-z0-9]+", raw.lower()) == [w.encode() for w in stream.words()]
    for bigram in {t for t in index_tokens(text) if is_bigram(t)} | {"数据", "哈哈"}:
        assert overlapping_count(raw, bigram.encode()) == stream.bigram_count(bigram)


def test_full_width_words_are_found_in_utf8_as_in_text() -> None:
    """The UTF-8 pattern finds exactly the full-width letters and digits."""
    for code in range(0xFF00, 0xFFFF):
        char = chr(code)
        assert (_FULL_WIDTH_WORD_UTF8.search(char.encode()) is not None) == (
            _FULL_WIDTH_WORD.search(char) is not None)
