"""Tests of query planning: topic words, their forms and weights, what the store is asked."""

from __future__ import annotations

from harkback.stages.match.plan import (
    plan_units,
    search_expression,
    selective,
    topic_units,
    weigh_units,
)
from harkback.stages.match.score import idf
from harkback.stages.ports import TermStats
from harkback.stages.query import AnyOf, Term, parse_query, to_fts5
from harkback.stages.when import time_words


def test_question_framing_is_dropped_when_a_topic_remains() -> None:
    """'how many' framing goes, the topic stays; a query of framing alone keeps it."""
    assert topic_units(parse_query("how many bikes")) == (Term("bikes"),)
    assert topic_units(parse_query("how many")) == (Term("many"),)


def test_time_words_leave_only_the_topic_to_search() -> None:
    """The words of a question's time go from the plan; a time alone is kept."""
    def planned(query: str) -> list[str]:
        return [u.unit.text for u in plan_units(parse_query(query), time_words(query))
                if isinstance(u.unit, Term)]
    assert planned("what did I bake in the past two weeks?") == ["bake"]
    assert planned("how many days did the hike take") == ["hike", "take"]
    assert planned("two weeks ago") == ["two", "weeks"]  # "ago" is a stopword


def test_advanced_queries_are_not_expanded() -> None:
    """A query in FTS syntax is searched as written, each word only as typed."""
    parsed = parse_query('"bridge network" OR bikes')
    units = plan_units(parsed)
    assert [u.forms for u in units] == [("bridge", "network"), ("bikes",)]
    assert search_expression(parsed, weigh_units(units, TermStats(documents=5))) \
        == parsed.expression


def test_plain_query_searches_every_indexed_form() -> None:
    """The store is asked for an OR of the forms the index holds."""
    parsed = parse_query("bikes repair")
    stats = TermStats(documents=100, counts=(("bike", 4), ("bikes", 2), ("repair", 1)))
    units = weigh_units(plan_units(parsed), stats)
    assert to_fts5(search_expression(parsed, units)) == '("bikes" OR "bike" OR "repair")'


def test_a_word_counts_documents_over_its_forms() -> None:
    """A word's IDF is computed from the documents of all its forms together."""
    units = weigh_units(plan_units(parse_query("bikes")),
                        TermStats(documents=100, counts=(("bike", 4), ("bikes", 2))))
    assert units[0].idf == idf(100, 6)


def test_any_of_is_what_a_plain_query_searches() -> None:
    """A plain multi-word query never requires every word."""
    parsed = parse_query("docker bridge")
    units = weigh_units(plan_units(parsed), TermStats(documents=10))
    assert isinstance(search_expression(parsed, units), AnyOf)


def test_a_word_is_common_over_all_its_forms() -> None:
    """A word whose forms together pass the cap selects no rows, even by a rare form."""
    parsed = parse_query("bikes service")
    stats = TermStats(documents=10**6, counts=(("bike", 1_900), ("biking", 150),
                                               ("service", 40)))
    narrow = selective(parsed, weigh_units(plan_units(parsed), stats), stats, 2000)
    assert to_fts5(narrow) == '"service"'


def test_selective_leaves_advanced_queries_to_the_store() -> None:
    """A query with operators is not narrowed by the ranker."""
    parsed = parse_query("bikes AND service")
    stats = TermStats(documents=100, counts=(("bikes", 1), ("service", 1)))
    assert selective(parsed, weigh_units(plan_units(parsed), stats), stats, 2000) is None


def test_only_common_words_select_nothing() -> None:
    """When every word is common, there is no narrowed search."""
    parsed = parse_query("day")
    stats = TermStats(documents=10**6, counts=(("day", 90_000),))
    assert selective(parsed, weigh_units(plan_units(parsed), stats), stats, 2000) is None


def test_every_spelling_of_a_listed_word_s_names_is_searched() -> None:
    """"path 경로": the question holds "path" already, so the unit naming 경로 in the
    other languages is spelled 路径 first; the store is asked for each of its spellings
    (パス too), not only the first, or a Japanese session saying パス is never read."""
    parsed = parse_query("path 경로")
    units = plan_units(parsed, script="ko")
    expression = to_fts5(search_expression(parsed, units))
    assert '"路径"' in expression and '"パス"' in expression


def test_an_english_word_s_cjk_names_weigh_but_select_and_search_nothing() -> None:
    """"deploy timeout" also weighs 部署/배포 (deploy) at half the word's share, so a
    Chinese or Korean session found by the question's other words counts them; they are
    not searched (the CJK words of common English words are common in a store of Chinese
    sessions: reading their rows cost English questions 40 % more CPU), and they never
    decide which rows a selective search reads."""
    parsed = parse_query("deploy timeout")
    units = plan_units(parsed)
    names = [u for u in units if u.unit not in parsed.units]
    assert {"部署", "배포"} <= {f for u in names for f in u.forms}
    assert all(u.share == 0.5 for u in names)
    stats = TermStats(documents=10**5, counts=(("deploy", 50), ("timeout", 5_000),
                                              ("部署", 20), ("배포", 10)))
    weighed = weigh_units(units, stats)
    assert to_fts5(selective(parsed, weighed, stats, 2_000)) == '"deploy"'
    searched = to_fts5(search_expression(parsed, weighed))
    assert "部署" not in searched and "배포" not in searched


def test_an_english_word_s_rare_cjk_names_are_searched_beside_its_own_words() -> None:
    """Weighed with the ranker's cap, the CJK names the store holds in few messages are
    searched (部署, 배포 in 20 and 10), a common one is not (部署 in 9,000), and rare
    names alone never narrow a question whose English words are all common."""
    parsed = parse_query("deploy timeout")
    units = plan_units(parsed)
    rare = TermStats(documents=10**5, counts=(("deploy", 50), ("timeout", 5_000),
                                             ("部署", 20), ("배포", 10)))
    weighed = weigh_units(units, rare, 2_000)
    assert {"部署", "배포"} <= {f for u in weighed if u.searched for f in u.forms}
    narrow = to_fts5(selective(parsed, weighed, rare, 2_000))
    assert '"deploy"' in narrow and '"部署"' in narrow and '"배포"' in narrow
    common = TermStats(documents=10**5, counts=(("deploy", 50), ("timeout", 5_000),
                                               ("部署", 9_000)))
    assert "部署" not in to_fts5(search_expression(parsed, weigh_units(units, common, 2_000)))
    english_common = TermStats(documents=10**5, counts=(("deploy", 4_000), ("timeout", 5_000),
                                                       ("部署", 20)))
    assert selective(parsed, weigh_units(units, english_common, 2_000), english_common,
                     2_000) is None
