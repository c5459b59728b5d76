"""Calling an embedder in a test: one call in its own client, the outcome as a Result."""

from __future__ import annotations

from collections.abc import Sequence

from returns.io import IOFailure
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

from harkback.stages.errors import ModelFailed
from harkback.stages.ports import Embedder, EmbedKind, Vector

DNS = ("the dns resolver on the home router keeps failing",
       "home router dns resolver failing again today",
       "bake sourdough bread with rye flour overnight")
"""Two texts about one thing and a third about another."""


async def embed(embedder: Embedder, texts: Sequence[str], kind: EmbedKind = "passage"
                ) -> Result[tuple[Vector, ...], ModelFailed]:
    """``embedder``'s vectors of ``texts``, its client closed after."""
    try:
        outcome = await embedder.embed(texts, kind).awaitable()
    finally:
        await embedder.aclose()
    if isinstance(outcome, IOFailure):
        return Failure(unsafe_perform_io(outcome.failure()))
    return Success(unsafe_perform_io(outcome.unwrap()))


def dot(a: Vector, b: Vector) -> float:
    """The dot product (the cosine, for unit vectors)."""
    return sum(x * y for x, y in zip(a, b, strict=True))


def failure_reason(result: Result[tuple[Vector, ...], ModelFailed]) -> str:
    """Why a call that must have failed failed."""
    assert isinstance(result, Failure), result
    error: ModelFailed = result.failure()
    return error.reason
