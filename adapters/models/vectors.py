"""What every embedder does with its model's answer: one unit-length vector per text.

:func:`unit_vectors` checks the rows a model gave and scales them; :func:`embedded` is the
part of :meth:`~harkback.stages.ports.Embedder.embed` both embedders share (no texts, no
work). Nothing here imports a model's library.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence

from returns.future import FutureResult
from returns.result import Result, Success

from harkback.stages.errors import ModelFailed
from harkback.stages.ports import EmbedKind, Vector


def unit_vectors(rows: Sequence[object], expected: int) -> tuple[Vector, ...] | str:
    """``rows`` scaled to unit length, or why they cannot be: not one per text, not lists
    of numbers, mixed dimensions, a number that is not finite, a vector of zeros.

    >>> unit_vectors([[3, 4], [0, 2]], 2)
    ((0.6, 0.8), (0.0, 1.0))
    >>> unit_vectors([[1.0, 2.0], [1.0]], 2)
    'vectors of mixed dimensions (1, 2)'
    >>> unit_vectors([[0.0, 0.0]], 1)
    'vector 0 is all zeros (it has no direction)'
    """
    if len(rows) != expected:
        return f"{len(rows)} vector(s) for {expected} text(s)"
    numbers: list[list[float]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, list | tuple) or not row or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in row):
            return f"vector {i} is not a non-empty list of numbers"
        numbers.append([float(x) for x in row])
    dimensions = sorted({len(row) for row in numbers})
    if len(dimensions) > 1:
        return f"vectors of mixed dimensions ({', '.join(map(str, dimensions))})"
    vectors: list[Vector] = []
    for i, row in enumerate(numbers):
        if not all(math.isfinite(x) for x in row):
            return f"vector {i} holds a number that is not finite"
        norm = math.hypot(*row)
        if norm == 0:
            return f"vector {i} is all zeros (it has no direction)"
        if not math.isfinite(norm):
            return f"vector {i} is too long to scale to unit length"
        vectors.append(tuple(x / norm for x in row))
    return tuple(vectors)


Vectors = Result[tuple[Vector, ...], ModelFailed]
"""An embedder's answer: one vector per text, or why there is none."""


def embedded(texts: Sequence[str], kind: EmbedKind,
             embed: Callable[[tuple[str, ...], EmbedKind], Awaitable[Vectors]]
             ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
    """``embed``'s vectors of ``texts`` (copied now, so a later change to the caller's list
    does not reach them); no texts give no vectors without calling it (no request is
    sent, no model loaded).

    >>> async def refuse(texts: tuple[str, ...], kind: EmbedKind) -> Vectors:
    ...     raise AssertionError("not called")
    >>> import asyncio
    >>> asyncio.run(embedded([], "query", refuse).awaitable())
    <IOResult: <Success: ()>>
    """
    batch = tuple(texts)

    async def run() -> Vectors:
        if not batch:
            return Success(())
        return await embed(batch, kind)
    return FutureResult(run())
