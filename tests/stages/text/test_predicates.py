"""Tests of Korean predicates: a question's verb stem meets the forms its answer writes."""

from __future__ import annotations

import pytest

from harkback.stages.match.plan import plan_units
from harkback.stages.query import parse_query
from harkback.stages.text.predicates import predicate_bigrams
from harkback.stages.text.tokens import index_tokens

MEETS = [
    ("엑셀 파일명 깨지는 거", "파일명이 또 깨진대요"),
    ("엑셀 파일명 깨지는 거", "파일명이 깨져요"),
    ("엑셀 파일명 깨지는 거", "ISO-8859-1 로 해석되며 깨집니다"),
    ("로그에 주민번호 찍히던 거", "주민번호가 그대로 찍혀요"),
    ("다크 모드에서 글자 안 보이던 거", "글자가 배경색이랑 같아서 안 보여요"),
    ("요일이 영어로 나오던 거", "Monday 로 나와요"),
    ("요일이 영어로 나오던 거", "영어로 나왔습니다"),
    ("화면이 느려지고 멈추는 거", "스크롤하면 화면이 느려져요"),
    ("큰 파일 올리면 실패하는 거", "파일을 올린 뒤에 실패"),
]
"""A question's predicate (깨지는, 찍히던, 나오던 …) and an answer writing it conjugated."""

NOUNS = ["모드는 바꿨던 거", "서버는 재시작되던 거", "배포하던 서버", "이미지는 올렸지",
         "코드는 고쳤던 거", "키는 어디"]
"""Questions whose words before 는, 던 or 고 are nouns, a light verb or one syllable."""

LOANWORDS = ["카테고리는 어디서 바꿨지", "디스플레이는 왜 꺼졌지", "팩토리는 어떻게 고쳤지",
             "브리지는 왜 끊겼지", "릴레이는 설정했던 거", "메세지는 왜 안 왔지", "넘파이는 왜"]
"""Loanwords before a topic 는, none a glossary word but the last two: 카테고리 was read as a
verb 카테고리(다), searched as 고려 ("consider") too; 메세지 (a spelling of 메시지) ends as
세지(다) ("to get stronger") does, so only its listing keeps it a noun."""

VERBS = ["떨어지는 거", "파일 버리고", "값이 내리면", "로그 쌓이던", "글자 안 보이던", "못 붙이고"]
"""Native stems ending as the loanwords' nearest shapes: ㅓ+지, ㅓ+리, ㅐ+리, closed+이, ㅗ+이."""


def _forms(question: str) -> set[str]:
    planned = plan_units(parse_query(question), predicates=predicate_bigrams(question))
    return {form for unit in planned for form in unit.forms}


@pytest.mark.parametrize(("question", "answer"), MEETS)
def test_a_predicate_is_searched_by_the_forms_its_answer_writes(question: str,
                                                                answer: str) -> None:
    """깨지는 is searched as 깨진, 깨져 and 깨집 too; the bigram 깨지 alone met none."""
    assert _forms(question) & set(index_tokens(answer)) - set(index_tokens(question))


@pytest.mark.parametrize("question", NOUNS)
def test_a_noun_before_an_ending_is_no_predicate(question: str) -> None:
    """A guard on the rule's reach: 모드는 ("the mode") would be searched as 모든 ("all")
    if every open syllable before 는 were a verb's; a noun keeps its own form."""
    assert not predicate_bigrams(question)


def test_the_mode_is_not_all() -> None:
    """모드 is searched as itself and its English name, never as 모든."""
    assert "모든" not in _forms("모드는 바꿨던 거")


@pytest.mark.parametrize("question", LOANWORDS)
def test_a_loanword_before_the_topic_marker_is_no_predicate(question: str) -> None:
    """카테고리는 is "the category", not a verb whose forms 고려, 고린 … would be searched."""
    assert not predicate_bigrams(question)


@pytest.mark.parametrize("question", VERBS)
def test_a_native_stem_shaped_like_a_loanword_stays_a_predicate(question: str) -> None:
    """A guard on the loanword shapes' reach: native verbs ending near them keep their forms."""
    assert predicate_bigrams(question)


def test_numpy_is_not_searched_as_a_file() -> None:
    """넘파이는 ("numpy") once asked for 파일 ("file"), a form of the verb it was read as."""
    assert "파일" not in _forms("넘파이는 설치가 왜 실패했었지")
