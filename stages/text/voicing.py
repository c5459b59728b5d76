"""Japanese voiced sound marks: what normalisation keeps of them, and what it folded before.

パケット (packet), バケット (bucket) and ハケット differ only by the marks U+3099 (dakuten)
and U+309A (handakuten) that NFD splits off their kana. Until schema version 3 of SQLite
stores (5 of PostgreSQL ones), :func:`~harkback.stages.text.tokens.normalize` stripped
them with the Latin diacritics, so all three were searched as ハケット. Now a mark stays
on its kana (ガ is not カ); a mark standing alone (゛, or after a letter that takes none)
still goes. A store indexed before keeps the folded words until it is migrated:
:func:`devoiced` gives, from today's tokens, the tokens such an index holds, and
:func:`voicing_chars` names the characters a text must hold for its tokens to have changed.

>>> devoiced("ぱけっと バケット ｶﾞ"), devoiced("café 上次")
('はけっと ハケット ｶﾞ', 'café 上次')
>>> may_hold_voicing("S3 バケット"), may_hold_voicing("packet パケット"), may_hold_voicing("ハケ")
(True, True, False)
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

VOICING_MARKS = "\u3099\u309a"
"""The combining voiced (dakuten) and semi-voiced (handakuten) sound marks."""

_SEARCHED = ((0x3000, 0x3400), (0xFF00, 0xFFF0), (0x1F200, 0x1F300))
"""Where the characters that hold or make a voiced kana lie: kana and their marks, the
squared katakana words (㌀ is アパート), half-width marks (ﾞ ﾟ) and squared katakana (🈓).
A test checks that no other code point holds one."""


@cache
def _voiced_bases() -> dict[int, str]:
    """Each precomposed voiced kana (が, パ, ヴ, ゞ ...) with its kana without the mark."""
    table: dict[int, str] = {}
    for low, high in _SEARCHED:
        for code in range(low, high):
            parts = unicodedata.normalize("NFD", chr(code))
            if len(parts) > 1 and parts[-1] in VOICING_MARKS:
                table[code] = unicodedata.normalize("NFC", parts[:-1])
    return table


def devoiced(text: str) -> str:
    """``text`` with every precomposed voiced kana replaced by its kana without the mark.

    Of normalised text (or of its tokens, character for character) this is what
    normalisation gave before schema version 3 (a test checks it on any text).
    """
    if text.isascii():
        return text
    return text.translate(_voiced_bases())


@cache
def voicing_chars() -> str:
    """Every character whose normalised form holds a voiced kana, and the marks that voice
    the kana before them (U+3099, U+309A and the half-width ﾞ ﾟ): a text without one has
    the same tokens before and after schema version 3."""
    voiced = _voiced_bases()
    found = []
    for low, high in _SEARCHED:
        for code in range(low, high):
            folded = unicodedata.normalize("NFKC", chr(code))
            if any(ord(c) in voiced for c in unicodedata.normalize("NFC", folded)) or any(
                    c in VOICING_MARKS for c in unicodedata.normalize("NFD", folded)):
                found.append(chr(code))
    return "".join(found)


@cache
def _voicing_pattern() -> re.Pattern[str]:
    return re.compile(f"[{re.escape(voicing_chars())}]")


def may_hold_voicing(text: str) -> bool:
    """Whether ``text`` holds a character of :func:`voicing_chars`."""
    return not text.isascii() and _voicing_pattern().search(text) is not None


def voicing_class() -> str:
    """:func:`voicing_chars` as a bracket expression for PostgreSQL's ``~`` (runs of
    consecutive code points as ranges).

    >>> voicing_class()[:20]
    '[がぎぐげござじずぜぞだぢづでどば-ぱび'
    """
    chars = [ord(c) for c in voicing_chars()]
    parts: list[str] = []
    start = previous = chars[0]
    for code in (*chars[1:], None):
        if code is not None and code == previous + 1:
            previous = code
            continue
        parts.append(chr(start) if start == previous else f"{chr(start)}-{chr(previous)}")
        if code is not None:
            start = previous = code
    return "[" + "".join(parts) + "]"
