"""Tests of the text kernel: normalisation and tokens, CJK bigrams included."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.text.tokens import index_tokens, normalize, token_matches, tokens


def test_chinese_run_becomes_overlapping_bigrams() -> None:
    """A Chinese run is split into bigrams, so any two-character word inside it is a token."""
    assert "解决" in tokens("上次怎么解决的")


def test_latin_glued_to_cjk_is_separated() -> None:
    """Latin text glued to CJK becomes its own word."""
    assert tokens("Agent通信") == ("agent", "通信")


def test_japanese_and_korean_are_tokenized() -> None:
    """Kana, kanji and Hangul runs all become bigrams."""
    assert "設定" in tokens("サーバーの設定を変更")
    assert "서버" in tokens("서버를 재시작했다")


def test_full_width_letters_fold_to_ascii() -> None:
    """Full-width Latin letters and digits match their ASCII forms."""
    assert tokens("ＤＯＣＫＥＲ８０") == tokens("docker80")


def test_index_keeps_last_character_of_a_run() -> None:
    """The last character of a CJK run is indexed alone so prefix search finds it."""
    assert index_tokens("端口")[-1] == "口"


def test_one_character_query_matches_anywhere_in_a_run() -> None:
    """A one-character CJK query token, a prefix as the parser makes it, matches at any
    position of an indexed run."""
    indexed = frozenset(index_tokens("修复端口冲突"))
    assert all(token_matches(ch, indexed, prefix=True) for ch in "修复端口冲突")


@given(st.text())
def test_query_tokens_of_a_text_all_occur_in_its_index(text: str) -> None:
    """Whatever the text, every query-side token of it is found among its index tokens."""
    indexed = frozenset(index_tokens(text))
    assert all(token_matches(t, indexed, prefix=False) for t in tokens(text))


@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    """Normalising twice changes nothing more."""
    assert normalize(normalize(text)) == normalize(text)
