"""What the PostgreSQL store's count memo keeps when another machine writes."""

from __future__ import annotations

from harkback.adapters.stores.postgres_memo import (
    CATCH_UP_ROWS,
    GROWTH_TOLERANCE,
    CountMemo,
    Snapshot,
)
from harkback.stages.query import Term

CAP = 100
COMMON, RARE = Term("error"), Term("kiwi")
FIRST = Snapshot(1, 10_000, rewrites=5, top=10_000)


def _memo(first: Snapshot = FIRST) -> CountMemo:
    """A memo at ``first`` that knows a word past the cap, a rare word's exact count
    and an estimate."""
    memo = CountMemo()
    memo.keep(first, "messages", {COMMON: CAP + 1, RARE: 7}, CAP)
    memo.keep_estimates(first.generation, {"error": 4_321})
    return memo


def _later(generation: int, messages: int, rewrites: int = 5) -> Snapshot:
    return Snapshot(generation, messages, rewrites, top=messages)


def test_the_same_generation_keeps_everything() -> None:
    memo = _memo()
    assert memo.keep(FIRST, "messages", {}, CAP)
    assert (memo.known("messages", COMMON, CAP), memo.known("messages", RARE, CAP)) == (CAP + 1, 7)
    assert memo.estimated(["error", "kiwi"]) == {"error": 4_321}
    assert memo.behind("messages", [COMMON, RARE]) == {}


def test_ingests_alone_keep_what_is_approximate_and_leave_exact_counts_behind() -> None:
    """An exact count is not taken as it is after a write, but offered to catch up from
    the snapshot it was made at."""
    memo = _memo()
    assert not memo.keep(_later(2, int(10_000 * (1 + GROWTH_TOLERANCE))), "messages", {}, CAP)
    assert memo.known("messages", COMMON, CAP) == CAP + 1
    assert memo.known("messages", RARE, CAP) is None
    assert memo.behind("messages", [COMMON, RARE]) == {RARE: (7, FIRST)}
    assert memo.estimated(["error"]) == {"error": 4_321}


def test_a_count_brought_forward_is_known_again_and_exact_past_the_cap() -> None:
    memo = _memo()
    now = _later(2, 10_050)
    memo.keep(now, "messages", {}, CAP)
    memo.keep(now, "messages", {RARE: 250}, None)
    assert (memo.known("messages", RARE, CAP), memo.known("messages", RARE, None)) == (CAP + 1,
                                                                                      250)
    assert memo.behind("messages", [RARE]) == {}


def test_a_deletion_or_rewrite_forgets_everything() -> None:
    """Even with the total as before (a message changed: deleted, written again), a
    common word may have become rare."""
    memo = _memo()
    memo.keep(_later(2, 10_000, rewrites=6), "messages", {}, CAP)
    assert memo.behind("messages", [RARE]) == {}
    assert memo.known("messages", RARE, CAP) is None
    assert memo.known("messages", COMMON, CAP) is None
    assert memo.estimated(["error"]) == {}


def test_too_many_rows_added_forget_exact_counts() -> None:
    memo = _memo()
    memo.keep(_later(2, 10_000 + CATCH_UP_ROWS), "messages", {}, CAP)
    assert memo.behind("messages", [RARE]) == {RARE: (7, FIRST)}
    memo.keep(_later(3, 10_001 + CATCH_UP_ROWS), "messages", {}, CAP)
    assert memo.behind("messages", [RARE]) == {}


def test_title_counts_never_catch_up() -> None:
    """Sessions are keyed by name, not by write order: no id range holds the new ones."""
    memo = CountMemo()
    memo.keep(FIRST, "sessions", {RARE: 3}, None)
    memo.keep(_later(2, 10_001), "sessions", {}, None)
    assert memo.behind("sessions", [RARE]) == {}
    assert memo.known("sessions", RARE, None) is None
    memo.keep(FIRST, "sessions", {COMMON: 3}, None)  # a statement begun before
    assert memo.behind("sessions", [COMMON]) == {}


def test_growth_past_the_tolerance_since_the_first_entry_forgets_approximations() -> None:
    """Tolerance counts from when the oldest kept entry was made, not from the last step."""
    memo = _memo()
    memo.keep(_later(2, 10_060), "messages", {}, CAP)
    memo.keep(_later(3, 10_101), "messages", {}, CAP)
    assert memo.known("messages", COMMON, CAP) is None
    assert memo.estimated(["error"]) == {}


def test_a_shrinking_store_forgets_everything() -> None:
    memo = _memo()
    memo.keep(Snapshot(2, 9_999, rewrites=6, top=10_000), "messages", {}, CAP)
    assert memo.known("messages", COMMON, CAP) is None
    assert memo.behind("messages", [RARE]) == {}
    assert memo.estimated(["error"]) == {}


def test_an_older_snapshot_than_the_last_forgets_nothing() -> None:
    """A statement that saw less than the memo's latest (another thread's, begun before)
    leaves the later counts as they are; what it counted is behind at once."""
    memo = _memo(_later(5, 10_100))
    assert not memo.keep(_later(4, 10_050), "messages", {COMMON: 3}, CAP)
    assert memo.known("messages", RARE, CAP) == 7
    assert memo.behind("messages", [COMMON]) == {COMMON: (3, _later(4, 10_050))}


def test_estimates_of_an_older_generation_are_not_taken() -> None:
    memo = _memo()
    memo.keep(_later(2, 10_001), "messages", {}, CAP)
    memo.keep_estimates(1, {"bridge": 999})
    assert memo.estimated(["bridge"]) == {}
