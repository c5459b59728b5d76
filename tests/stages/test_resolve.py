"""Tests of lineage resolution and grouping (pure part)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.lineage import root_of
from harkback.stages.records import MessageHit, Session
from harkback.stages.resolve import group_by_root

SESSIONS = {s.id: s for s in (
    Session(id="root", source="cli"),
    Session(id="cont", parent_session_id="root", source="cli"),
    Session(id="sub", parent_session_id="cont", source="subagent"),
    Session(id="other", source="telegram"),
    Session(id="hidden", source="tool"),
    Session(id="orphan", parent_session_id="gone", source="cli"),
)}


def _hit(session: str, score: float = 1.0) -> MessageHit:
    return MessageHit(session_id=session, position=0, role="user", content="", score=score)


def test_deep_child_resolves_to_root() -> None:
    """A sub-agent of a continuation resolves to the first session of the lineage."""
    root = root_of("sub", SESSIONS)
    assert root is not None and root.id == "root"


def test_missing_parent_ends_the_walk() -> None:
    """A session whose parent is not stored is its own root."""
    root = root_of("orphan", SESSIONS)
    assert root is not None and root.id == "orphan"


LOOP = {s.id: s for s in (
    Session(id="late", parent_session_id="early", started_at=300.0),
    Session(id="early", parent_session_id="mid", started_at=100.0),
    Session(id="mid", parent_session_id="late", started_at=200.0),
    Session(id="hanger", parent_session_id="mid", started_at=400.0),
)}


def test_a_loop_of_parents_names_one_root_from_any_member() -> None:
    """A damaged store's parent loop (and a child hanging off it) resolves to the loop's
    earliest session whichever member a hit is in, so the lineage comes back once."""
    roots = {i: root_of(i, LOOP) for i in LOOP}
    assert {i: r.id if r else None for i, r in roots.items()} == dict.fromkeys(LOOP, "early")
    candidates = group_by_root([_hit("late"), _hit("hanger"), _hit("mid")], LOOP,
                               exclude_root=None, hidden_sources=())
    assert [(root.id, len(hits)) for root, hits in candidates] == [("early", 3)]


def test_unknown_session_has_no_root() -> None:
    """An id that is not stored resolves to nothing."""
    assert root_of("nope", SESSIONS) is None


def test_one_candidate_per_root_with_all_its_hits() -> None:
    """Hits from a lineage collapse into one candidate that keeps all of them."""
    candidates = group_by_root([_hit("sub"), _hit("other"), _hit("root")], SESSIONS,
                               exclude_root=None, hidden_sources=())
    assert [root.id for root, _ in candidates] == ["root", "other"]
    assert [h.session_id for h in candidates[0][1]] == ["sub", "root"]


def test_current_lineage_is_left_out() -> None:
    """Hits anywhere in the caller's lineage are dropped."""
    candidates = group_by_root([_hit("sub"), _hit("other")], SESSIONS, exclude_root="root",
                               hidden_sources=())
    assert [root.id for root, _ in candidates] == ["other"]


def test_hidden_source_roots_are_left_out() -> None:
    """A root from a hidden source never becomes a candidate."""
    candidates = group_by_root([_hit("hidden"), _hit("other")], SESSIONS, exclude_root=None,
                               hidden_sources=("tool",))
    assert [root.id for root, _ in candidates] == ["other"]


_ids = st.sampled_from(sorted(SESSIONS))


@given(st.lists(_ids, max_size=20))
def test_grouping_is_stable_and_idempotent(ids: list[str]) -> None:
    """Roots come in first-hit order, and grouping the grouped hits changes nothing."""
    hits = [_hit(i, score=float(n)) for n, i in enumerate(ids)]
    once = group_by_root(hits, SESSIONS, exclude_root=None, hidden_sources=())
    again = group_by_root([h for _, hits in once for h in hits], SESSIONS, exclude_root=None,
                          hidden_sources=())
    assert [root.id for root, _ in once] == [root.id for root, _ in again]
    first_seen = list(dict.fromkeys(r.id for i in ids if (r := root_of(i, SESSIONS))))
    assert [root.id for root, _ in once] == first_seen
