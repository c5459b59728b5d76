"""A CJK word's weight bounded by how common it is among the messages of its script."""

from __future__ import annotations

import math

from harkback.stages.match.plan import plan_units, weigh_units
from harkback.stages.match.score import idf
from harkback.stages.match.within_script import SCRIPT_BONUS
from harkback.stages.ports import TermStats
from harkback.stages.query import Term, parse_query

STORE = 100_000


def _weights(question: str, counts: dict[str, int]) -> dict[str, float]:
    stats = TermStats(documents=STORE, counts=tuple(counts.items()))
    units = weigh_units(plan_units(parse_query(question), script="ko"), stats)
    return {u.unit.text: u.idf for u in units if isinstance(u.unit, Term)}


def test_a_korean_word_in_an_english_store_weighs_as_among_korean_messages() -> None:
    """장고 in 3 of 100k messages and "django" in 40: the store holds about 7,500 Korean
    messages, and 에러, in 15 of them, is common there; it weighs its IDF among them plus
    the bonus, far less than the 8.8 the whole store gives it."""
    weights = _weights("장고 에러", {"장고": 3, "django": 40, "에러": 15, "error": 40_000})
    korean = STORE * 3 // 40
    assert math.isclose(weights["에러"], idf(korean, 15) + SCRIPT_BONUS)
    assert weights["에러"] < idf(STORE, 15) - 1


def test_a_generic_name_tells_nothing_of_the_script() -> None:
    """"error", in 40 % of the messages (more than GENERIC_NAME), is far more common in
    English than 에러 is in Korean: it estimates nothing, and 에러 keeps the store's IDF."""
    weights = _weights("에러", {"에러": 15, "error": 40_000})
    assert math.isclose(weights["에러"], idf(STORE, 15))


def test_an_english_question_weighs_as_before() -> None:
    """No name, no estimate: every word weighs the store's IDF, and its CJK words (장고,
    报错, and the longer ジャンゴ, エラー), never counted, half the word they name."""
    stats = TermStats(documents=STORE, counts=(("django", 40), ("error", 40_000)))
    units = weigh_units(plan_units(parse_query("django error")), stats)
    assert [u.idf for u in units] == [idf(STORE, 40), idf(STORE, 40_000),
                                      idf(STORE, 40) / 2, idf(STORE, 40_000) / 2,
                                      idf(STORE, 40) / 2, idf(STORE, 40_000) / 2]
