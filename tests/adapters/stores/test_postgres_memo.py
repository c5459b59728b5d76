"""What the PostgreSQL store's count memo keeps when another machine writes."""

from __future__ import annotations

from harkback.adapters.stores.postgres_memo import GROWTH_TOLERANCE, CountMemo
from harkback.stages.query import Term

CAP = 100
COMMON, RARE = Term("error"), Term("kiwi")


def _memo(messages: int = 10_000) -> CountMemo:
    """A memo at generation 1 that knows a word past the cap, a rare word's exact count
    and an estimate."""
    memo = CountMemo()
    memo.keep(1, messages, "messages", {COMMON: CAP + 1, RARE: 7}, CAP)
    memo.keep_estimates(1, {"error": 4_321})
    return memo


def test_the_same_generation_keeps_everything() -> None:
    memo = _memo()
    assert memo.keep(1, 10_000, "messages", {}, CAP)
    assert (memo.known("messages", COMMON, CAP), memo.known("messages", RARE, CAP)) == (CAP + 1, 7)
    assert memo.estimated(["error", "kiwi"]) == {"error": 4_321}


def test_a_small_growth_keeps_what_is_approximate_and_forgets_exact_counts() -> None:
    memo = _memo()
    assert not memo.keep(2, int(10_000 * (1 + GROWTH_TOLERANCE)), "messages", {}, CAP)
    assert memo.known("messages", COMMON, CAP) == CAP + 1
    assert memo.known("messages", RARE, CAP) is None
    assert memo.estimated(["error"]) == {"error": 4_321}


def test_growth_past_the_tolerance_since_the_first_entry_forgets_everything() -> None:
    """Tolerance counts from when the oldest kept entry was made, not from the last step."""
    memo = _memo()
    memo.keep(2, 10_060, "messages", {}, CAP)
    memo.keep(3, 10_101, "messages", {}, CAP)
    assert memo.known("messages", COMMON, CAP) is None
    assert memo.estimated(["error"]) == {}


def test_a_shrinking_store_forgets_everything() -> None:
    memo = _memo()
    memo.keep(2, 9_999, "messages", {}, CAP)
    assert memo.known("messages", COMMON, CAP) is None
    assert memo.estimated(["error"]) == {}


def test_estimates_of_an_older_generation_are_not_taken() -> None:
    memo = _memo()
    memo.keep(2, 10_001, "messages", {}, CAP)
    memo.keep_estimates(1, {"bridge": 999})
    assert memo.estimated(["bridge"]) == {}
