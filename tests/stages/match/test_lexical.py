"""Tests of the lexical ranker's pure kernels: stemming, inflections, scoring, ordering."""

from __future__ import annotations

from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.match.lexical import (
    RankUnit,
    Scored,
    SessionScoring,
    idf,
    inflections,
    message_scorer,
    message_tokens,
    order_hits,
    plan_units,
    rank_sessions,
    regular_inflections,
    score_message,
    search_expression,
    selective,
    stem,
    topic_units,
    weigh_by_recency,
    weigh_units,
)
from harkback.stages.ports import TermStats
from harkback.stages.query import AnyOf, Phrase, Term, parse_query, to_fts5
from harkback.stages.records import MessageHit
from harkback.stages.text.irregular import irregular_forms
from harkback.stages.text.tokens import index_tokens
from harkback.stages.when import time_words

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)


def _scored(session: str, score: float, covered: Iterable[int] = (0,),
            *, source: str = "cli", position: int = 0, at: float | None = None) -> Scored:
    hit = MessageHit(session_id=session, position=position, role="user", content="",
                     score=0.0, source=source, timestamp=at)
    return Scored(hit, score, frozenset(covered))


def test_stem_merges_plural_and_tenses() -> None:
    """Plural, past and progressive forms share one stem."""
    assert {stem(w) for w in ("bike", "bikes", "biked", "biking")} == {"bike"}


def test_stem_keeps_derivations_apart() -> None:
    """Derivational suffixes are not removed (conference is not confer)."""
    assert stem("conference") != stem("confer")


def test_stem_leaves_non_latin_words_alone() -> None:
    """CJK tokens and words with digits are returned unchanged."""
    assert (stem("端口"), stem("ipv6s")) == ("端口", "ipv6s")


@given(words)
def test_inflections_share_the_stem_and_include_the_word(word: str) -> None:
    """Every regular form stems like the word, and the word itself is first."""
    forms = regular_inflections(word)
    assert forms[0] == word
    assert all(stem(f) == stem(word) for f in forms)


@given(words)
def test_inflections_are_the_regular_ones_for_a_regular_word(word: str) -> None:
    """Only a form of an irregular verb is widened past its own stem."""
    if not irregular_forms(word):
        assert inflections(word) == regular_inflections(word)


def test_an_irregular_past_reaches_its_base_and_back() -> None:
    """'bought' reaches 'buy' and 'buying'; 'buy' reaches 'bought'."""
    assert {"buy", "buys", "buying"} <= set(inflections("bought"))
    assert "bought" in inflections("buy")
    assert inflections("went")[0] == "went"


def test_inflections_find_the_singular_of_a_plural() -> None:
    """A plural query word reaches its singular and -ies/-y forms."""
    assert "baby" in inflections("babies")
    assert "tank" in inflections("tanks")


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


@given(st.integers(1, 10_000), st.integers(0, 10_000), st.integers(0, 10_000))
def test_idf_is_positive_and_falls_with_frequency(total: int, a: int, b: int) -> None:
    """IDF stays positive and a rarer term never weighs less."""
    low, high = sorted((a, b))
    assert idf(total, high) <= idf(total, low)
    assert idf(total, high) > 0


def test_score_merges_forms_of_one_word() -> None:
    """'bike' and 'bikes' in one message count as two occurrences of one unit."""
    unit = (RankUnit(Term("bike"), ("bike", "bikes"), 1.0),)
    both, covered = score_message("bike bikes", unit, average_length=2.0)
    one, _ = score_message("bike other", unit, average_length=2.0)
    assert both > one and covered == frozenset({0})


def test_longer_message_scores_lower_for_the_same_matches() -> None:
    """Length normalisation: the same match in a longer message weighs less."""
    unit = (RankUnit(Term("nginx"), ("nginx",), 1.0),)
    short, _ = score_message("nginx cors", unit, average_length=5.0)
    long, _ = score_message("nginx " + "filler " * 40, unit, average_length=5.0)
    assert short > long


def test_phrase_units_count_adjacent_words_only() -> None:
    """A phrase unit covers a message only where its words stand together."""
    unit = (RankUnit(Phrase(("bridge", "network")), ("bridge", "network"), 1.0),)
    assert score_message("the bridge network", unit, average_length=3.0)[1] == {0}
    assert score_message("network of the bridge", unit, average_length=3.0)[1] == frozenset()


@given(st.lists(st.floats(0.01, 100.0), min_size=4, max_size=30))
def test_volume_beyond_the_top_messages_adds_nothing(scores: list[float]) -> None:
    """A session's score depends only on its best few messages, not on how many it has."""
    scoring = SessionScoring(top_messages=3)
    best = sorted(scores, reverse=True)[:3]
    full = rank_sessions([_scored("s", v) for v in scores] + [_scored("ref", 200.0)],
                         [1.0], scoring)
    trimmed = rank_sessions([_scored("s", v) for v in best] + [_scored("ref", 200.0)],
                            [1.0], scoring)
    assert dict(full)["s"] == dict(trimmed)["s"]


def test_covering_more_of_the_query_together_wins() -> None:
    """Two messages covering both query words beat one louder message covering one."""
    ranked = rank_sessions([_scored("loud", 5.0, {0}), _scored("both", 3.0, {0}),
                            _scored("both", 3.0, {1})], [1.0, 1.0])
    assert ranked[0][0] == "both"


def test_rare_words_weigh_more_in_coverage() -> None:
    """Covering the rare word counts for more than covering the common one."""
    ranked = rank_sessions([_scored("common", 1.0, {0}), _scored("rare", 1.0, {1})],
                           [0.1, 5.0])
    assert [sid for sid, _ in ranked] == ["rare", "common"]


def test_demoted_source_sinks_below_an_equal_peer() -> None:
    """A cron session with the same evidence ranks below a normal one."""
    ranked = rank_sessions([_scored("cron", 2.0, source="cron"), _scored("cli", 2.0)], [1.0])
    assert [sid for sid, _ in ranked] == ["cli", "cron"]


_DAY = 86400.0


def test_recency_lifts_the_newer_of_two_equal_sessions() -> None:
    """With a recency weight, the newer of two equal sessions ranks first."""
    scoring = SessionScoring(recency_weight=1.0, half_life_days=7.0)
    ranked = weigh_by_recency((("old", 2.0), ("new", 2.0)), {"old": 0.0, "new": 30 * _DAY},
                              31 * _DAY, scoring)
    assert [sid for sid, _ in ranked] == ["new", "old"]


def test_sessions_after_now_get_no_recency_lift() -> None:
    """A session dated days after now is not lifted; one a few hours after (skew) is."""
    scoring = SessionScoring(recency_weight=1.0, half_life_days=7.0)
    times = {"before": 9 * _DAY, "later": 20 * _DAY, "skewed": 10.2 * _DAY}
    ranked = dict(weigh_by_recency((("before", 1.0), ("later", 1.0), ("skewed", 1.0)), times,
                                   10 * _DAY, scoring))
    assert ranked["later"] == 1.0
    assert ranked["skewed"] == 2.0
    assert 1.0 < ranked["before"] < 2.0


@given(st.lists(st.tuples(st.sampled_from("abcde"), st.floats(0.0, 10.0)), max_size=40))
def test_hits_come_grouped_in_session_order(pairs: list[tuple[str, float]]) -> None:
    """The first hit of each session appears in the ranked session order, capped per session."""
    scored = [_scored(sid, value, position=i) for i, (sid, value) in enumerate(pairs)]
    sessions = rank_sessions(scored, [1.0])
    hits = order_hits(scored, sessions, per_session=2, limit=100)
    first_seen = list(dict.fromkeys(h.session_id for h in hits))
    assert first_seen == [sid for sid, _ in sessions]
    assert all(sum(1 for h in hits if h.session_id == sid) <= 2 for sid in first_seen)


def test_any_of_is_what_a_plain_query_searches() -> None:
    """A plain multi-word query never requires every word."""
    parsed = parse_query("docker bridge")
    units = weigh_units(plan_units(parsed), TermStats(documents=10))
    assert isinstance(search_expression(parsed, units), AnyOf)


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_message_tokens_agree_with_the_index_on_ascii(text: str) -> None:
    """The fast ASCII tokenizer finds exactly the index's tokens."""
    assert tuple(message_tokens(text)) == index_tokens(text)


@given(st.text())
def test_message_tokens_agree_with_the_index_on_any_text(text: str) -> None:
    """Non-ASCII text (CJK included) is tokenized as the index does."""
    assert tuple(message_tokens(text)) == index_tokens(text)


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



_UNITS = (RankUnit(Term("bike"), ("bike", "bikes", "biked"), 1.3),
          RankUnit(Term("docker"), ("docker",), 0.7),
          RankUnit(Term("cafe"), ("cafe",), 2.0))
_pieces = st.one_of(st.sampled_from(["bike", "Bikes", "BIKED", "docker!", "café", "cafe", "x1"]),
                    st.text(alphabet=st.characters(max_codepoint=0x24F), max_size=6))


@given(st.lists(_pieces, max_size=40).map(" ".join), st.floats(1.0, 50.0))
def test_scorer_is_bm25_over_the_index_tokens(text: str, average: float) -> None:
    """Both counting paths (bytes for ASCII, tokens otherwise) give BM25 over index tokens."""
    toks = index_tokens(text)
    norm = 1.2 * (1 - 0.75 + 0.75 * len(toks) / average)
    counts = {j: sum(toks.count(f) for f in ru.forms) for j, ru in enumerate(_UNITS)}
    expected = sum(_UNITS[j].idf * tf * 2.2 / (tf + norm) for j, tf in counts.items() if tf)
    score, covered = message_scorer(_UNITS, average_length=average, k1=1.2, b=0.75)(text)
    assert covered == {j for j, tf in counts.items() if tf}
    assert score == pytest.approx(expected)
