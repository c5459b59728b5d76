"""The characters that hold or make a voiced kana, and what an old index holds of them."""

from __future__ import annotations

import unicodedata

from harkback.stages.text.tokens import index_text, normalize
from harkback.stages.text.voicing import (
    VOICING_MARKS,
    devoiced,
    may_hold_voicing,
    voicing_chars,
)
from tests.support.old_tokens import first_index_text


def test_the_voicing_characters_are_found_in_all_of_unicode() -> None:
    """No code point outside the ranges searched holds a voiced kana once normalised, or
    is a voicing mark (a newer Unicode could add one: this test would say so)."""
    found = []
    for code in range(0x110000):
        folded = unicodedata.normalize("NFKC", chr(code))
        parts = unicodedata.normalize("NFD", folded)
        if any(mark in parts for mark in VOICING_MARKS):
            found.append(chr(code))
    assert "".join(found) == voicing_chars()


def test_a_text_without_voicing_characters_indexes_as_before() -> None:
    """The migration re-indexes only texts that may hold voicing: the others' index text
    is unchanged (spot checks here; the property test covers any text)."""
    for text in ("ハケット ひらかな", "上次 端口冲突", "한국어 배포", "café ｶﾀｶﾅ", "ok"):
        assert not may_hold_voicing(text)
        assert index_text(text) == first_index_text(text)
    for text in ("S3 バケット", "ｶﾞ", "か\u3099", "㌀", "🈓"):
        assert may_hold_voicing(text)
        assert devoiced(normalize(text)) != normalize(text)
