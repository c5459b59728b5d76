"""Session ranking's quicker sums and sorts give exactly what the plain ones gave."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.stages.match.score import Scored
from harkback.stages.match.sessions import (
    SessionScoring,
    order_hits,
    rank_sessions,
    recency_factor,
    rescored,
    weigh_by_recency,
    weigh_by_time,
)
from harkback.stages.records import ROLES, MessageHit
from harkback.stages.when import closeness

# --- the plain implementations, as they were ------------------------------------------------


def plain_rank_sessions(scored: Sequence[Scored], weights: Sequence[float],
                        scoring: SessionScoring) -> tuple[tuple[str, float], ...]:
    """rank_sessions written plainly: each session's hits gathered by a scan, every
    coverage summed (a share of the units some candidate holds), ties ordered by where the
    session was first seen."""
    if not scored:
        return ()
    top = max(s.score for s in scored) or 1.0
    found = {j for s in scored for j in s.covered}  # only what some candidate holds
    total_weight = sum(weights[j] for j in found) or 1.0
    first_seen = list(dict.fromkeys(s.hit.session_id for s in scored))

    def value(session_id: str) -> float:
        mine = [s for s in scored if s.hit.session_id == session_id]
        ranked = sorted((s.score for s in mine), reverse=True)[:scoring.top_messages]
        volume = sum(v * scoring.decay ** i for i, v in enumerate(ranked)) / top
        units = frozenset().union(*(s.covered for s in mine))
        share = sum(weights[j] for j in units) / total_weight
        total = volume + scoring.coverage_weight * share
        demoted = mine[0].hit.source in scoring.demoted_sources
        return round(total * scoring.demotion if demoted else total, 12)

    values = {sid: value(sid) for sid in first_seen}
    return tuple((sid, values[sid]) for sid in sorted(
        first_seen, key=lambda sid: (-values[sid], first_seen.index(sid))))


def plain_rescaled(sessions: Sequence[tuple[str, float]], factor: Callable[[str], float]
                   ) -> tuple[tuple[str, float], ...]:
    """_rescaled before."""
    rescored_ = [(sid, round(score * factor(sid), 12)) for sid, score in sessions]
    order = {sid: i for i, (sid, _) in enumerate(sessions)}
    return tuple(sorted(rescored_, key=lambda pair: (-pair[1], order[pair[0]])))


def plain_order_hits(scored: Sequence[Scored], sessions: Sequence[tuple[str, float]], *,
                     per_session: int, limit: int) -> tuple[MessageHit, ...]:
    """order_hits written plainly: a scan per session, each hit re-scored with
    ``attrs.evolve``."""
    out: list[MessageHit] = []
    for session_id, _ in sessions:
        mine = sorted((s for s in scored if s.hit.session_id == session_id),
                      key=lambda s: -s.score)
        out += [attrs.evolve(s.hit, score=s.score) for s in mine[:per_session]]
        if len(out) >= limit:
            break
    return tuple(out[:limit])


# --- inputs full of ties -------------------------------------------------------------------

hits = st.builds(
    MessageHit, session_id=st.sampled_from("abcdefgh"), position=st.integers(0, 5),
    role=st.sampled_from(ROLES), content=st.text(max_size=5),
    score=st.sampled_from([0.0, 1.0, 2.5]),
    timestamp=st.one_of(st.none(), st.sampled_from([0.0, 5e6, 9e6])),
    source=st.sampled_from(["", "cli", "cron"]), length=st.one_of(st.none(), st.integers(0, 9)))
scored_hits = st.lists(st.builds(
    Scored, hits, st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]),
    st.frozensets(st.integers(0, 3), max_size=3)), max_size=40)
weights = st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=4, max_size=4)
scorings = st.builds(SessionScoring, top_messages=st.integers(1, 4),
                     decay=st.sampled_from([0.0, 0.5, 1.0]),
                     coverage_weight=st.sampled_from([0.0, 0.5]),
                     recency_weight=st.sampled_from([0.0, 0.02, 1.0]))


@settings(max_examples=400)
@given(scored_hits, weights, scorings)
def test_session_ranking_is_as_before(scored: list[Scored], weights: list[float],
                                      scoring: SessionScoring) -> None:
    """The same sessions, scores and order (ties included) from rank_sessions, the
    recency and time lifts, and order_hits."""
    ranked = rank_sessions(scored, weights, scoring)
    assert ranked == plain_rank_sessions(scored, weights, scoring)
    times = {s.hit.session_id: s.hit.timestamp for s in scored if s.hit.timestamp is not None}
    now = 1e7
    assert weigh_by_recency(ranked, times, now, scoring) == plain_rescaled(
        ranked, lambda sid: recency_factor(times.get(sid), now, scoring))
    window = (4e6, 6e6)
    assert weigh_by_time(ranked, times, [window], 0.5) == plain_rescaled(
        ranked, lambda sid: 1.0 if sid not in times else 1.0 + 0.5 * closeness(
            times[sid], window))
    for per_session, limit in ((1, 3), (3, 60)):
        assert order_hits(scored, ranked, per_session=per_session, limit=limit) == (
            plain_order_hits(scored, ranked, per_session=per_session, limit=limit))


@given(hits, st.floats(allow_nan=False))
def test_a_rescored_hit_is_the_evolved_one(hit: MessageHit, score: float) -> None:
    """rescored copies every field of a hit but its score (a field added to MessageHit
    and not copied fails here)."""
    assert rescored(hit, score) == attrs.evolve(hit, score=score)
    assert [f.name for f in attrs.fields(MessageHit)] == [
        "session_id", "position", "role", "content", "score", "timestamp", "source", "length"]
