"""Korean nouns of one syllable with a particle: 큐에 ("at the queue") is the noun 큐.

Korean glues a particle to the word before it (큐에 "at the queue", 락을 "the lock", 키가
"the key"), and the index cuts Hangul into bigrams: 큐에, 큐가 and a bare 큐 are three
tokens. Framing takes a particle off a longer word (:mod:`~harkback.stages.text.framing`:
에러를 → 에러), never off one syllable, since 속도 ("speed"), 추가 ("add") and 사이
("between") end in a particle's syllable too. A word of two syllables (three with 에서
or 으로) is a one-syllable noun and a particle (:func:`noun_of`) only when:

- the particle is one that seldom ends a word of its own (:data:`SPLIT_PARTICLES`: 가, 를,
  이, 을, 에, 에서, 으로); never 도 (속도, 정도), 의 (회의), 로 (경로, 바로), 과 (결과) or
  은/는, which also end verbs (같은, 되는);
- it is the form the noun's last sound asks for: 가 and 를 follow a vowel, 이, 을 and 으로 a
  consonant, so 차이, 사이, 증가, 평가 and 마을 stay words;
- the syllable is no counter, place or time word (:data:`BOUND_NOUNS`: 번에, 개가, 위에,
  전에 say "times", "pieces", "above", "before"), nor the stem of a verb or adjective
  (:data:`VERB_STEMS`: 같이 "together", 찾을 "to find"), and the word is not one listed
  whole (:data:`WORDS`: 추가 "add", 휴가 "leave").

Such a noun, and a one-syllable noun the question writes bare, is searched by its forms
(:func:`noun_forms`): alone (the index's token for a run of Hangul ending in it: 큐,
작업큐) and with each particle (큐가, 큐를, 큐에 ...): 큐에 meets 큐가 and 큐, not 큐브 or
시큐리티 as a one-character prefix would.

>>> noun_of("큐에"), noun_of("락을"), noun_of("키가"), noun_of("추가"), noun_of("사이")
('큐', '락', '키', None, None)
>>> noun_forms("큐")[:5]
('큐', '큐가', '큐를', '큐는', '큐와')
"""

from __future__ import annotations

from functools import cache

SPLIT_PARTICLES = {"vowel": ("가", "를", "에", "에서"),
                   "consonant": ("이", "을", "에", "에서", "으로")}
"""The particles taken off a one-syllable noun, by the noun's last sound (a vowel, or a
consonant under it)."""

FORM_PARTICLES = {"vowel": "가를는와로에의도만랑까부처",
                  "consonant": "이을은과으에의도만까부처"}
"""The first syllable of each particle a one-syllable noun is found with, by its last sound:
가/이, 를/을, 는/은, 와/과, 로/으로, 에 (에서, 에게), 의, 도, 만, 랑/이랑, 까지, 부터, 처럼.
The bigram of the noun and that syllable is one of the noun's forms; particles whose
syllable opens common words (보다: 키보드, 마다: 스키마) are left out."""

BOUND_NOUNS = frozenset("""
개 번 명 수 것 거 건 게 데 때 곳 점 분 초 시 일 년 달 주 위 뒤 앞 중 전 후 안 밖 옆 밑 쪽
뭐 누 이 그 저 제 내 네 나 너 또 좀 다 잘 못 한 할 된 될 해
""".split())
"""One-syllable words that count, place or point (번 "times", 개 "pieces", 위 "above", 전
"before", 이/그/저 "this/that") or frame (:data:`~harkback.stages.text.framing.KOREAN_WORDS`):
never nouns of the topic."""


VERB_STEMS = frozenset("""
같 많 없 좋 작 높 낮 깊 넓 짧 늦 싫 찾 받 먹 읽 넣 닫 앉 놓 얻 잃 맞 붙 굳 놀 풀 벌 덮 잡
""".split())
"""Stems of verbs and adjectives that end in a consonant: with 이 or 을 they are an adverb
or a verb form (같이 "together", 많이 "much", 찾을 "to find"), not a noun and a particle."""

WORDS = frozenset("""
추가 휴가 대가 부가 고가 시가 누가 주가 화가 차가 자가
""".split())
"""Words of two syllables that end as a noun with 가 would: never cut (추가 "add" is not 추)."""


def _sound(syllable: str) -> str | None:
    # "vowel" or "consonant": the last sound of a Hangul syllable; None for anything else.
    if len(syllable) != 1 or not 0 <= (code := ord(syllable) - 0xAC00) < 11172:
        return None
    return "vowel" if code % 28 == 0 else "consonant"


def _rieul(syllable: str) -> bool:
    # A syllable under which ㄹ is written (룰, 줄, 툴) takes 로, as a vowel does.
    return (ord(syllable) - 0xAC00) % 28 == 8


def noun_of(word: str) -> str | None:
    """The one-syllable noun ``word`` is with a particle (see the module), or None.

    >>> [noun_of(w) for w in ("값이", "앱을", "큐에서", "락으로", "증가", "번에", "같은", "에러를")]
    ['값', '앱', '큐', '락', None, None, None, None]
    """
    noun, particle = word[:1], word[1:]
    sound = _sound(noun)
    if sound is None or noun in BOUND_NOUNS or noun in VERB_STEMS or word in WORDS:
        return None
    return noun if particle in SPLIT_PARTICLES[sound] else None


@cache
def noun_forms(noun: str) -> tuple[str, ...]:
    """The index tokens a one-syllable noun is found as: itself (a run of Hangul ending in
    it) and the bigram of it and each particle its last sound takes; () for anything that
    is not one Hangul syllable, or for a counter or place word (:data:`BOUND_NOUNS`).

    >>> noun_forms("락")[:6], noun_forms("번"), noun_forms("ok")
    (('락', '락이', '락을', '락은', '락과', '락으'), (), ())
    """
    sound = _sound(noun)
    if sound is None or noun in BOUND_NOUNS:
        return ()
    particles = FORM_PARTICLES[sound] + ("로" if _rieul(noun) else "")
    return (noun, *(noun + p for p in particles))
