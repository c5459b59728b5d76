"""Session-retrieval metrics with LongMemEval's official definitions.

For a ranked list of session ids and the set of gold (answer) session ids:

- ``recall_any@k``: 1 when at least one gold session is in the top ``k``;
- ``recall_all@k``: 1 when every gold session is in the top ``k``;
- ``ndcg@k``: DCG of the top ``k`` over the ideal DCG, with binary relevance and the
  official DCG, which does not discount the first *two* ranks:
  ``rel_1 + sum_{i=2..k} rel_i / log2(i)``.

Abstention questions (ids ending in ``_abs``) have no gold sessions and are left out
of the scores by the harness, not here.

>>> recall_all(["a", "x", "b"], {"a", "b"}, 3), recall_all(["a", "x", "b"], {"a", "b"}, 2)
(1.0, 0.0)
>>> round(ndcg(["x", "a"], {"a"}, 10), 4)
1.0
>>> round(ndcg(["x", "y", "a"], {"a"}, 10), 4)
0.6309
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

KS: tuple[int, ...] = (1, 3, 5, 10)
"""The cut-offs reported."""

METRICS: tuple[str, ...] = ("recall_any", "recall_all", "ndcg")


def _top(ranked: Sequence[str], k: int) -> list[str]:
    # A ranking names each session once; a repeated id would otherwise take two slots.
    return list(dict.fromkeys(ranked))[:k]


def recall_any(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 when any gold session is among the top ``k`` ranked ids, else 0.0.

    >>> recall_any(["x", "a"], {"a", "b"}, 1), recall_any(["x", "a"], {"a", "b"}, 2)
    (0.0, 1.0)
    """
    top = set(_top(ranked, k))
    return float(any(g in top for g in gold))


def recall_all(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """1.0 when every gold session is among the top ``k`` ranked ids, else 0.0.

    >>> recall_all(["a", "b"], {"a", "b"}, 2)
    1.0
    """
    top = set(_top(ranked, k))
    return float(bool(gold) and all(g in top for g in gold))


def dcg(relevances: Sequence[float]) -> float:
    """LongMemEval's DCG: the first two ranks count in full, rank ``i >= 2`` by ``1/log2(i)``.

    >>> dcg([1, 1, 1]) == 1 + 1 + 1 / math.log2(3)
    True
    """
    if not relevances:
        return 0.0
    return relevances[0] + sum(rel / math.log2(i) for i, rel in enumerate(relevances[1:], 2))


def ndcg(ranked: Sequence[str], gold: Collection[str], k: int) -> float:
    """nDCG@k with binary relevance; 0.0 when there is no gold session.

    >>> ndcg(["a", "b"], {"a", "b"}, 2)
    1.0
    """
    if not gold:
        return 0.0
    actual = dcg([1.0 if sid in gold else 0.0 for sid in _top(ranked, k)])
    ideal = dcg([1.0] * min(len(gold), k))
    return actual / ideal


def score(ranked: Sequence[str], gold: Collection[str],
          ks: Iterable[int] = KS) -> dict[str, float]:
    """Every metric at every cut-off, keyed ``"recall_all@5"`` and so on.

    >>> score(["a"], {"a"}, ks=(1,))
    {'recall_any@1': 1.0, 'recall_all@1': 1.0, 'ndcg@1': 1.0}
    """
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall_any@{k}"] = recall_any(ranked, gold, k)
        out[f"recall_all@{k}"] = recall_all(ranked, gold, k)
        out[f"ndcg@{k}"] = ndcg(ranked, gold, k)
    return out


def mean_scores(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over questions (an empty input gives an empty dict).

    >>> mean_scores([{"ndcg@1": 1.0}, {"ndcg@1": 0.0}])
    {'ndcg@1': 0.5}
    """
    sums: dict[str, float] = {}
    count = 0
    for row in rows:
        count += 1
        for key, value in row.items():
            sums[key] = sums.get(key, 0.0) + value
    return {key: total / count for key, total in sums.items()}


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation; 0.0 for no values.

    >>> percentile([1.0, 2.0, 3.0, 4.0], 50)
    2.5
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
