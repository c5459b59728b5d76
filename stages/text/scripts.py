"""Which CJK writing a text is in: Japanese, Korean or Chinese, or none of them.

A question asked in Japanese most likely means a session held in Japanese; the ranker
lets that break near-ties (:func:`~harkback.stages.match.sessions.weigh_by_script`). Kana
make a text Japanese (Japanese mixes kanji with kana, Chinese never writes kana),
Hangul makes it Korean, Han characters alone make it Chinese.

>>> [cjk_script(t) for t in ("前回のデッドロック", "지난번 CORS", "上次 nginx 超时", "docker")]
['ja', 'ko', 'zh', None]
"""

from __future__ import annotations

import re
from typing import Literal

Script = Literal["ja", "ko", "zh"]

_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def cjk_script(text: str) -> Script | None:
    """The CJK writing ``text`` is in, or None for text with no CJK characters."""
    if _KANA.search(text):
        return "ja"
    if _HANGUL.search(text):
        return "ko"
    if _HAN.search(text):
        return "zh"
    return None


def written_in(text: str, script: Script) -> bool:
    """Whether ``text`` holds characters of ``script`` (kana for Japanese, Hangul for
    Korean, Han for Chinese; a Japanese text's kanji count for Chinese too).

    >>> written_in("設定を変えた", "ja"), written_in("设置", "ja"), written_in("设置", "zh")
    (True, False, True)
    """
    if text.isascii():
        # Most of what an English session says: one pass in C, not a search of a class.
        return False
    pattern = {"ja": _KANA, "ko": _HANGUL, "zh": _HAN}[script]
    return pattern.search(text) is not None
