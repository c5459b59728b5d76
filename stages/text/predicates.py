"""Korean predicates: 깨지는 ("that breaks") asks for 깨져요, 깨진, 깨집니다 and 깨졌어요 too.

The index cuts Hangul into bigrams, and a verb or adjective changes its last syllable as it
is conjugated: the stem 깨지 ("to break") is written 깨지 before 는, 고 or 던, but 깨져 (지
and 어 contracted), 깨졌 (the past), 깨진 (ㄴ), 깨질 (ㄹ), 깨집 (ㅂ니다) and 깨짐 (ㅁ) elsewhere.
A question's predicate is searched by these forms of its last bigram (:func:`stem_forms`).

Which words are predicates (:func:`predicate_bigrams`): a word that ends in an ending only a
predicate takes (:data:`ENDINGS`: 던, 는데, 고, 면, 지만) or in 는, left with a stem of two
syllables or more whose last vowel contracts with 어 (ㅣ→ㅕ, ㅗ→ㅘ, ㅜ→ㅝ: 깨지, 나오, 보이).
Not a light verb (하, 되: 배포하던 is the noun 배포) nor a listed word (이미지는 is "the
image"). The vowel keeps nouns out that a topic 는 follows: 모드는 would search 모든 ("all").
Nor a loanword ending as English words are spelled in Hangul and no native stem ends
(:func:`loanword`): 넘파이는 ("numpy") would search 파일 ("file"), 카테고리는 고려 ("consider").

>>> sorted(predicate_bigrams("엑셀 파일명 깨지는 거"))
['깨지']
>>> stem_forms("깨지")
('깨지', '깨져', '깨졌', '깨진', '깨질', '깨집', '깨짐')
"""

from __future__ import annotations

import re

from harkback.stages.text.glossary import listed_words

ENDINGS = ("는데", "지만", "던", "고", "면", "는")
"""Endings after which a word's rest is a predicate's stem (는 as well: see the module)."""

_CONTRACTED = {20: 6, 8: 9, 13: 14}
"""Medial vowels (by index) that contract with 어: ㅣ→ㅕ, ㅗ→ㅘ, ㅜ→ㅝ."""

_FINALS = (4, 8, 17, 16)
"""Final consonants (by index) of a stem's conjugated forms: ㄴ, ㄹ, ㅂ, ㅁ."""

_PAST = 20
"""The final ㅆ of the past tense (깨졌)."""

_I, _O = 20, 8
"""The medial vowels ㅣ and ㅗ (by index)."""

_DIPHTHONG = (0, 1, 5)
"""ㅏ, ㅐ, ㅔ: the vowels before 이 in an English diphthong spelled in Hangul (파이, 레이)."""

_J, _IEUNG, _RIEUL = 12, 11, 5
"""The initials ㅈ, ㅇ and ㄹ (by index)."""

_HANGUL_WORD = re.compile(r"[\uac00-\ud7a3]+")


def _parts(syllable: str) -> tuple[int, int, int] | None:
    # (initial, medial, final) of a Hangul syllable; None for anything else.
    code = ord(syllable) - 0xAC00
    if not 0 <= code < 11172:
        return None
    return code // 588, code % 588 // 28, code % 28


def _syllable(initial: int, medial: int, final: int) -> str:
    return chr(0xAC00 + initial * 588 + medial * 28 + final)


def stem_forms(bigram: str) -> tuple[str, ...]:
    """The index tokens a predicate's last bigram is found as: itself, its last syllable
    contracted with 어 (and in the past), and with each final of :data:`_FINALS`; () when
    its last syllable is no open syllable with a contracting vowel.

    >>> stem_forms("나오")[:3], stem_forms("보이")[1], stem_forms("모드")
    (('나오', '나와', '나왔'), '보여', ())
    """
    parts = _parts(bigram[-1]) if len(bigram) == 2 else None
    if parts is None or parts[2] != 0 or parts[1] not in _CONTRACTED:
        return ()
    initial, medial, _ = parts
    contracted = _CONTRACTED[medial]
    head = bigram[0]
    return (bigram, head + _syllable(initial, contracted, 0),
            head + _syllable(initial, contracted, _PAST),
            *(head + _syllable(initial, medial, final) for final in _FINALS))


def loanword(stem: str) -> bool:
    """Whether ``stem`` ends as a loanword does and a native verb stem does not: ㅣ-vowel
    syllable + 지 (message 메시지, bridge 브리지: a native 지 follows ㅏ, ㅐ, ㅓ or ㅕ, as in
    깨지, 빠지, 떨어지, 느려지), an open syllable in ㅏ, ㅐ or ㅔ + 이 (numpy 넘파이, array
    어레이, display 디스플레이: native stems 보이, 쌓이, 붙이) or an open syllable in ㅗ + 리
    (category 카테고리, factory 팩토리: native 올리, 버리, 내리).

    >>> [loanword(w) for w in ("메시지", "넘파이", "어레이", "카테고리")]
    [True, True, True, True]
    >>> [loanword(w) for w in ("깨지", "떨어지", "보이", "쌓이", "올리", "버리")]
    [False, False, False, False, False, False]
    """
    if len(stem) < 2:
        return False
    before, last = _parts(stem[-2]), _parts(stem[-1])
    if before is None or last is None or last[1:] != (_I, 0):
        return False
    _, vowel, final = before
    return (last[0] == _J and vowel == _I) or (final == 0 and (
        (last[0] == _IEUNG and vowel in _DIPHTHONG) or (last[0] == _RIEUL and vowel == _O)))


def predicate_bigrams(text: str) -> frozenset[str]:
    """The last bigrams of the predicates ``text`` writes (see the module); a glossary
    word (:func:`~harkback.stages.text.glossary.listed_words`) is a noun whatever follows.

    >>> sorted(predicate_bigrams("보이던 화면이 느려지고 모드는 배포하던 이미지는"))
    ['려지', '보이']
    """
    if text.isascii():
        return frozenset()
    listed = listed_words()
    out = set()
    for word in _HANGUL_WORD.findall(text):
        for ending in ENDINGS:
            stem = word[:-len(ending)]
            if word.endswith(ending) and len(stem) >= 2:
                if (stem not in listed and not stem.endswith(("하", "되"))
                        and not loanword(stem) and stem_forms(stem[-2:])):
                    out.add(stem[-2:])
                break
    return frozenset(out)
