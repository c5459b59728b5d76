"""Tests of the retrieval metrics against hand-computed values (LongMemEval's definitions)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.metrics import dcg, mean_scores, ndcg, percentile, recall_all, recall_any, score

ids = st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=8)


def test_recall_any_needs_one_gold_session_in_the_top_k() -> None:
    """One of two gold sessions at rank 3 counts at k=3, not at k=2."""
    ranked = ["x", "y", "b", "z"]
    assert (recall_any(ranked, {"a", "b"}, 2), recall_any(ranked, {"a", "b"}, 3)) == (0.0, 1.0)


def test_recall_all_needs_every_gold_session_in_the_top_k() -> None:
    """Both gold sessions must be in the top k."""
    ranked = ["a", "x", "y", "b"]
    assert (recall_all(ranked, {"a", "b"}, 3), recall_all(ranked, {"a", "b"}, 4)) == (0.0, 1.0)


def test_ndcg_of_a_perfect_ranking_is_one() -> None:
    """Gold sessions in the first ranks give nDCG 1."""
    assert ndcg(["a", "b", "x"], {"a", "b"}, 10) == 1.0


def test_ndcg_hand_computed() -> None:
    """Gold at ranks 1 and 4 of two: (1 + 1/log2 4) / (1 + 1) with the official DCG."""
    assert ndcg(["a", "x", "y", "b"], {"a", "b"}, 10) == pytest.approx((1 + 0.5) / 2)


def test_official_dcg_does_not_discount_rank_two() -> None:
    """LongMemEval's DCG weighs ranks 1 and 2 fully, rank 3 by 1/log2(3)."""
    assert dcg([0, 1, 0]) == 1.0
    assert dcg([0, 0, 1]) == pytest.approx(1 / math.log2(3))


def test_ndcg_only_counts_the_top_k() -> None:
    """A gold session below k adds nothing."""
    assert ndcg(["x", "y", "a"], {"a"}, 2) == 0.0


def test_repeated_ids_take_one_slot() -> None:
    """A session named twice in a ranking is counted once."""
    assert recall_all(["a", "a", "b"], {"a", "b"}, 2) == 1.0


@given(ids, ids, st.sampled_from((1, 3, 5, 10)))
def test_metrics_are_bounded_and_ordered(ranked: list[str], gold: list[str], k: int) -> None:
    """Every metric lies in [0, 1] and recall_all never exceeds recall_any."""
    if not gold:
        return
    values = score(ranked, set(gold), ks=(k,))
    assert all(0.0 <= v <= 1.0 + 1e-12 for v in values.values())
    assert values[f"recall_all@{k}"] <= values[f"recall_any@{k}"]


@given(ids, ids)
def test_recall_grows_with_k(ranked: list[str], gold: list[str]) -> None:
    """A larger cut-off never lowers recall."""
    assert recall_any(ranked, set(gold), 3) <= recall_any(ranked, set(gold), 5)
    assert recall_all(ranked, set(gold), 3) <= recall_all(ranked, set(gold), 5)


def test_mean_scores_average_each_metric() -> None:
    """Means are per metric over questions."""
    assert mean_scores([{"m": 1.0}, {"m": 0.0}, {"m": 0.5}]) == {"m": 0.5}


def test_percentile_interpolates() -> None:
    """The 95th percentile of 0..100 is 95."""
    assert percentile([float(i) for i in range(101)], 95) == 95.0
