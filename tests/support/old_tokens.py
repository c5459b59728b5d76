"""The tokenizer as first written, slow and simple: what the fast one must give.

``first_*`` is the tokenizer of schema versions 1 and 2 (every combining mark stripped, the
kana's voicing marks too: バケット was ハケット); ``reference_*`` is today's (a voicing mark
stays on its kana). Old store files in the tests are indexed with ``first_index_text``.
"""

from __future__ import annotations

import re
import unicodedata

_CJK = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
_TOKEN = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")
_VOICING = "\u3099\u309a"


def _normalize(text: str, *, keep: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        return folded
    decomposed = unicodedata.normalize("NFD", folded)
    stripped = "".join(ch for ch in decomposed if ch in keep or not unicodedata.combining(ch))
    composed = unicodedata.normalize("NFC", stripped)
    return "".join(ch for ch in composed if ch not in keep)  # a mark no kana took


def first_normalize(text: str) -> str:
    """normalize of schema versions 1 and 2: every combining mark stripped."""
    return _normalize(text, keep="")


def reference_normalize(text: str) -> str:
    """normalize since schema version 3: the kana's voicing marks stay on their kana."""
    return _normalize(text, keep=_VOICING)


def _split(folded: str, *, index: bool) -> tuple[str, ...]:
    out: list[str] = []
    for cjk, word in _TOKEN.findall(folded):
        if cjk:
            out.extend([cjk] if len(cjk) == 1 else [cjk[i:i + 2] for i in range(len(cjk) - 1)])
            if index and len(cjk) > 1:
                out.append(cjk[-1])
        else:
            out.append(word)
    return tuple(out)


def first_split(text: str, *, index: bool) -> tuple[str, ...]:
    """tokens (index=False) and index_tokens (index=True) of schema versions 1 and 2."""
    return _split(first_normalize(text), index=index)


def reference_split(text: str, *, index: bool) -> tuple[str, ...]:
    """tokens and index_tokens since schema version 3."""
    return _split(reference_normalize(text), index=index)


def first_index_text(text: str) -> str:
    """What schema versions 1 and 2 gave the message index for ``text``: ASCII text as it
    is (since the ASCII shortcut; FTS5 splits it alike), else its tokens."""
    return text if text.isascii() else " ".join(first_split(text, index=True))
