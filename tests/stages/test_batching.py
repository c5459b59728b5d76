"""Write batches cut by count, bytes and the time the last write took."""

from __future__ import annotations

from harkback.stages.batching import SMALLEST_BYTES, Budget, batched


def test_batches_are_cut_by_count_or_bytes_whichever_comes_first() -> None:
    """Three small items fill a count of three; two large ones fill the byte budget."""
    items = [(1, "a"), (1, "b"), (1, "c"), (60, "d"), (60, "e"), (1, "f")]
    assert list(batched(items, Budget(count=3, size=100))) == [
        ["a", "b", "c"], ["d", "e"], ["f"]]


def test_an_item_larger_than_the_budget_is_a_batch_of_its_own() -> None:
    """Nothing is split or dropped: an oversized session still gets stored."""
    assert list(batched([(500, "big"), (1, "x")], Budget(count=10, size=100))) == [
        ["big"], ["x"]]


def test_slow_writes_shrink_the_next_batches_and_quick_ones_grow_them_back() -> None:
    """The byte budget read as each batch fills follows the time of the write before it."""
    budget = Budget(count=1000, size=40, target_s=1.0, floor=10)
    sizes: list[int] = []
    for batch, seconds in zip(batched([(10, i) for i in range(20)], budget),
                              [3.0, 3.0, 0.1, 0.1, 0.1, 0.1], strict=False):
        sizes.append(len(batch))
        budget.took(seconds)
    assert sizes[:4] == [4, 2, 1, 2]
    assert budget.size <= 40


def test_the_byte_budget_has_a_floor() -> None:
    """However slow the writes, a batch may still hold some data."""
    budget = Budget(size=SMALLEST_BYTES * 4)
    for _ in range(10):
        budget.took(100.0)
    assert budget.size == SMALLEST_BYTES
