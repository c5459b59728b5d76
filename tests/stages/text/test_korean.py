"""Korean nouns of one syllable with a particle (큐에, 락을, 키가): the noun, and its forms."""

from __future__ import annotations

import pytest

from harkback.stages.query import parse_query
from harkback.stages.text.framing import without_framing
from harkback.stages.text.korean import SPLIT_PARTICLES, noun_forms, noun_of
from harkback.stages.text.tokens import tokens


@pytest.mark.parametrize(("word", "noun"), [
    ("큐에", "큐"), ("큐가", "큐"), ("큐를", "큐"), ("큐에서", "큐"), ("락을", "락"),
    ("락이", "락"), ("락으로", "락"), ("키가", "키"), ("키를", "키"), ("키에", "키"),
    ("값이", "값"), ("값을", "값"), ("값으로", "값"), ("앱을", "앱"), ("훅이", "훅"),
    ("힙이", "힙"), ("깃에서", "깃"),
])
def test_a_noun_of_one_syllable_with_a_particle_is_the_noun(word: str, noun: str) -> None:
    """큐에 ("at the queue"), 락을 ("the lock"), 키가 ("the key") are 큐, 락, 키."""
    assert noun_of(word) == noun


@pytest.mark.parametrize("word", [
    # A particle's syllable ending a word of its own.
    "속도", "정도", "시도", "회의", "정의", "결과", "효과", "경로", "도로", "바로", "새로",
    # The wrong form for the sound before it (가/를 after a vowel, 이/을 after a consonant).
    "사이", "차이", "아이", "나이", "증가", "평가", "국가", "마을", "가을",
    # Verb and adjective forms, counters and places, words listed whole.
    "같은", "되는", "하는", "같이", "많이", "없이", "찾을", "받을", "번에", "개가", "위에",
    "전에", "중에", "추가", "휴가",
    # Not one syllable and a particle.
    "에러를", "큐브", "ok",
])
def test_an_ordinary_word_is_not_cut(word: str) -> None:
    """속도 ("speed"), 사이 ("between"), 같은 ("same"), 번에 ("at a time") and 추가
    ("add") end in a particle's syllable, and are words: never a noun and a particle."""
    assert noun_of(word) is None


@pytest.mark.parametrize(("sound", "particle"),
                         [(s, p) for s, ps in SPLIT_PARTICLES.items() for p in ps])
def test_every_listed_particle_is_taken_off_after_its_sound_only(sound: str,
                                                                 particle: str) -> None:
    """큐 ends in a vowel, 락 in a consonant: each particle goes after the sound it follows
    (큐가, 락이), and stays after the other where it is another form (락가, 큐이)."""
    right, wrong = ("큐", "락") if sound == "vowel" else ("락", "큐")
    assert noun_of(right + particle) == right
    if particle not in SPLIT_PARTICLES["vowel" if sound == "consonant" else "consonant"]:
        assert noun_of(wrong + particle) is None


def test_a_noun_is_found_bare_and_with_each_particle() -> None:
    """큐 is the token of a run ending in it and the bigram with a particle; 큐브 ("cube")
    and 시큐리티 ("security") hold 큐 and are not forms of it."""
    forms = noun_forms("큐")
    assert {"큐", "큐가", "큐를", "큐에", "큐는", "큐로", "큐도"} <= set(forms)
    assert not {"큐브", "큐리"} & set(forms)
    assert {"락이", "락을", "락으", "락은"} <= set(noun_forms("락"))
    assert "룰로" in noun_forms("룰")  # ㄹ takes 로, as a vowel does


@pytest.mark.parametrize(("question", "words"), [
    ("큐에 작업이 쌓이기만 하고 처리가 안 되던 거, 원인이 뭐였지?", ["큐", "작업"]),
    ("API 키가 만료돼서 401 났던 거 어떻게 했지?", ["api", "키"]),
    ("배포 중에 락을 못 잡았던 거", ["배포", "중에", "락"]),
    ("값으로 뭘 넣었었지?", ["값"]),
    ("속도가 느린 쿼리에 인덱스 추가했던 거", ["속도", "느린", "쿼리", "인덱스", "추가"]),
])
def test_a_question_s_noun_loses_its_particle(question: str, words: list[str]) -> None:
    """Real questions: the noun of one syllable stands alone, other words keep theirs."""
    kept = without_framing(question).split()
    assert [w for w in kept if w in words] == words


def test_a_question_s_noun_is_one_unit() -> None:
    """큐에 is searched as 큐 (one unit), not as the bigram 큐에."""
    assert [getattr(u, "text", "") for u in parse_query("큐에 쌓였던 거").units] == ["큐"]
    assert tokens(without_framing("락이 안 잡혔던 문제")) == ("락",)
