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

_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
_OLD_TOKEN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")


def old_normalize(text: str) -> str:
    """The first implementation of normalize (schema version 1 indexed with it)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        return folded
    decomposed = unicodedata.normalize("NFD", folded)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", stripped)


def _old_bigrams(run: str) -> list[str]:
    return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]


def old_split(text: str, *, index: bool) -> tuple[str, ...]:
    """The first implementation of tokens (index=False) and index_tokens (index=True)."""
    out: list[str] = []
    for cjk, word in _OLD_TOKEN.findall(old_normalize(text)):
        if cjk:
            out.extend(_old_bigrams(cjk))
            if index and len(cjk) > 1:
                out.append(cjk[-1])
        else:
            out.append(word)
    return tuple(out)


# Text mixing ASCII, Latin with accents, CJK, Hangul, full-width forms, combining marks,
# punctuation, underscores and emoji, in runs, so that every branch of the tokenizer is hit.
_ALPHABET = st.sampled_from(
    list("abcXYZ019 _-.,!\n\t\"'*") + list("éÜñçßİıſﬁ") + list("上次怎么解决修改服务端的")
    + list("ひらカタ한국어") + list("ＡＢＣ１２３ｶﾅ")
    + ["\u0301", "\u0308", "\u200b", "🙂", "Ⅻ", "²"]
    + list("。、「」’“—…\u3029\u302a\u3030\u3099"))
texts = st.one_of(st.text(), st.lists(_ALPHABET, max_size=80).map("".join))


@settings(max_examples=600)
@given(texts)
def test_index_tokens_match_the_first_implementation(text: str) -> None:
    """index_tokens and index_text are unchanged on any text."""
    expected = old_split(text, index=True)
    assert index_tokens(text) == expected
    assert index_text(text) == " ".join(expected)


@settings(max_examples=600)
@given(texts)
def test_query_tokens_match_the_first_implementation(text: str) -> None:
    """tokens is unchanged on any text."""
    assert tokens(text) == old_split(text, index=False)


@settings(max_examples=300)
@given(texts)
def test_normalize_matches_the_first_implementation(text: str) -> None:
    """normalize is unchanged on any text."""
    assert normalize(text) == old_normalize(text)


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
    assert [c for c in plain if normalize(c) != old_normalize(c)] == []
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
    assert normalize(text) == old_normalize(text)
    assert index_tokens(text) == old_split(text, index=True)


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
