"""Across languages: the English names of a question's words, as the ranker weighs them."""

from __future__ import annotations

import pytest

from harkback.stages.match.across import FOREIGN_FLOOR, FOREIGN_SHARE, for_foreign_sessions
from harkback.stages.match.plan import plan_units, weigh_units
from harkback.stages.match.score import RankUnit
from harkback.stages.ports import TermStats
from harkback.stages.query import Term, parse_query


def _weighed(question: str, counts: dict[str, int]) -> tuple[RankUnit, ...]:
    stats = TermStats(documents=10_000, counts=tuple(counts.items()))
    return weigh_units(plan_units(parse_query(question), script="zh"), stats)


def test_an_english_name_knows_the_words_it_names() -> None:
    """'cache' names 缓存: the planner records which of the question's units it stands for."""
    units = _weighed("缓存配置", {"缓存": 3, "配置": 3, "cache": 4000, "config": 4000})
    texts = [u.unit.text for u in units if isinstance(u.unit, Term)]
    cache = units[texts.index("cache")]
    assert [texts[j] for j in cache.names] == ["缓存"]


def test_an_english_session_weighs_a_common_name_as_its_rare_word() -> None:
    """In a store of English sessions "cache" is common and 缓存 rare: for an English
    session the name weighs FOREIGN_FLOOR of the word it names, more than its own IDF
    gives; a word with no English name keeps its weight."""
    units = _weighed("缓存配置", {"缓存": 3, "配置": 3, "cache": 4000, "config": 4000})
    foreign = for_foreign_sessions(units)
    assert foreign is not None
    by_text = {u.unit.text: (u, f) for u, f in zip(units, foreign, strict=True)
               if isinstance(u.unit, Term)}
    plain, raised = by_text["cache"]
    word = by_text["缓存"][0]
    assert plain.idf < FOREIGN_SHARE * word.idf
    assert raised.idf == FOREIGN_FLOOR * word.idf
    assert by_text["缓存"][1].idf == word.idf


def test_a_name_rarer_than_its_word_keeps_its_own_weight() -> None:
    """The floor only lifts: a name already weighing more stays as it is."""
    units = _weighed("缓存", {"缓存": 4000, "cache": 3})
    foreign = for_foreign_sessions(units)
    assert foreign is not None and [u.idf for u in foreign] == [u.idf for u in units]


def test_a_question_naming_nothing_across_languages_has_no_foreign_weights() -> None:
    """Nothing to lift: None, and the ranker scores every session alike."""
    assert for_foreign_sessions(_weighed("docker", {"docker": 10})) is None


def test_english_names_keep_their_weights_relative_to_each_other() -> None:
    """缓存配置 in a store where "config" is in most messages and "cache" in few, both
    Chinese words rare: lifted one by one to FOREIGN_FLOOR of their words, "config" would
    weigh as much as "cache" for an English session. Lifted together by one factor,
    "cache" keeps the lead its own IDF gives it, and the two weigh what the floor gives
    them in total."""
    units = _weighed("缓存配置", {"缓存": 3, "配置": 3, "cache": 40, "config": 6000})
    foreign = for_foreign_sessions(units)
    assert foreign is not None
    texts = [u.unit.text if isinstance(u.unit, Term) else "" for u in units]
    cache, config = texts.index("cache"), texts.index("config")
    assert foreign[cache].idf / foreign[config].idf == pytest.approx(
        units[cache].idf / units[config].idf)
    floors = sum(FOREIGN_FLOOR * units[texts.index(word)].idf for word in ("缓存", "配置"))
    assert foreign[cache].idf + foreign[config].idf == pytest.approx(floors)


def test_a_listed_word_is_also_looked_for_in_the_other_cjk_languages() -> None:
    """경고 (warning) in a Korean question: its English names' unit also holds 警告, the
    one-token word Chinese and Japanese write for it, so a Japanese session on the topic
    is found; a longer word (ワーニング, a phrase of bigrams) and words of the question's
    own language are not added."""
    units = plan_units(parse_query("경고 권한"), script="ko")
    forms = {f for u in units if u.names for f in u.forms}
    assert {"warning", "警告", "権限", "权限"} <= forms
    assert not forms & {"ワーニング", "워닝", "경고", "권한"}
