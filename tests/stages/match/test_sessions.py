"""Tests of session ranking: best messages and coverage, recency, hits in session order."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.match.score import Scored
from harkback.stages.match.sessions import (
    SessionScoring,
    order_hits,
    rank_sessions,
    weigh_by_recency,
    weigh_by_script,
)
from harkback.stages.records import MessageHit


def _scored(session: str, score: float, covered: Iterable[int] = (0,),
            *, source: str = "cli", position: int = 0, at: float | None = None) -> Scored:
    hit = MessageHit(session_id=session, position=position, role="user", content="",
                     score=0.0, source=source, timestamp=at)
    return Scored(hit, score, frozenset(covered))


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


@given(st.lists(st.tuples(st.sampled_from("abcd"), st.floats(0.01, 10.0),
                          st.sets(st.integers(0, 2), min_size=1)), min_size=1, max_size=12),
       st.floats(0.1, 20.0))
def test_a_word_no_candidate_holds_changes_no_score(
        hits: list[tuple[str, float, set[int]]], absent_weight: float) -> None:
    """A query word in none of the candidates (a typo, another language's word) leaves every
    session's score as it is without the word: it cannot tell one session from another."""
    scored = [_scored(session, score, covered) for session, score, covered in hits]
    weights = [1.0, 2.5, 0.7]
    assert (rank_sessions(scored, [*weights, absent_weight])
            == rank_sessions(scored, weights))


def test_a_session_in_the_question_s_writing_wins_a_near_tie_only() -> None:
    """The lift for a session held in the question's language breaks near-ties; a session
    ahead by more than it stays ahead."""
    assert weigh_by_script((("en", 1.0), ("ja", 0.99)), {"ja"}, 0.05)[0][0] == "ja"
    assert weigh_by_script((("en", 1.0), ("ja", 0.9)), {"ja"}, 0.05)[0][0] == "en"


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


def test_a_session_outside_the_question_s_writing_covers_it_at_its_own_weights() -> None:
    """A CJK question: an English session covering two names (weights 1, lifted to 2 as its
    messages were scored) passes a session in the question's writing covering one word of
    3, whose score stays what it was."""
    scored = [_scored("ko", 4.0, {0}), _scored("en", 4.0, {1, 2})]
    weights = [3.0, 1.0, 1.0]
    ranked = rank_sessions(scored, weights, foreign=([3.0, 2.0, 2.0], {"ko"}))
    assert ranked[0][0] == "en"
    assert dict(ranked)["ko"] == dict(rank_sessions(scored, weights))["ko"]
