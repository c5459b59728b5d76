"""The shape every stage shares, and small helpers for building stage results.

A stage is a frozen callable holding only configuration. Called with its input
record it returns a ``RequiresContextFutureResult`` that, given :class:`Deps`,
runs the step and yields the next record or a :data:`RecallError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, TypeVar

import attrs
from returns.context import RequiresContextFutureResult
from returns.future import Future, FutureResult
from returns.io import IOFailure, IOResult, IOSuccess
from returns.iterables import Fold
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

from harkback.stages.errors import RecallError, StoreUnavailable
from harkback.stages.ports import ChatModel, Deps, SummaryCache, SummaryKey
from harkback.stages.records import Summary

In = TypeVar("In", contravariant=True)
Out = TypeVar("Out", covariant=True)
T = TypeVar("T")
E = TypeVar("E")

Step = RequiresContextFutureResult[T, RecallError, Deps]
"""What calling a stage returns."""


class Stage(Protocol[In, Out]):
    """A pipeline stage: ``stage(value)(deps)`` is a ``FutureResult``."""

    def __call__(self, value: In, /) -> RequiresContextFutureResult[Out, RecallError, Deps]:
        """Run the stage on ``value`` once given its dependencies."""
        ...


def _widen(error: StoreUnavailable) -> RecallError:
    return error


def with_store(call: Callable[[Deps], FutureResult[T, StoreUnavailable]]) -> Step[T]:
    """Lift a store call into a stage step, widening its error to :data:`RecallError`."""
    return RequiresContextFutureResult(lambda deps: call(deps).alt(_widen))


def pure(value: T) -> Step[T]:
    """A step that needs nothing and yields ``value``."""
    return RequiresContextFutureResult.from_value(value)


def gather(futures: Sequence[FutureResult[T, E]]) -> FutureResult[tuple[T, ...], E]:
    """Run ``futures`` concurrently (``asyncio.gather``); all of them, or the first failure.

    Every one runs to its end even when another fails: each already carries its own
    error as a value, so none can cancel its siblings. Nothing starts until awaited.

    >>> both = gather([FutureResult.from_value(1), FutureResult.from_value(2)])
    >>> asyncio.run(both.awaitable())
    <IOResult: <Success: (1, 2)>>
    """
    async def settle() -> list[IOResult[T, E]]:
        return list(await asyncio.gather(*(f.awaitable() for f in futures)))

    def collect(outcomes: list[IOResult[T, E]]) -> IOResult[tuple[T, ...], E]:
        start: IOResult[tuple[T, ...], E] = IOSuccess(())
        return Fold.collect(outcomes, start)

    return FutureResult.from_future(Future(settle())).bind_ioresult(collect)


def as_result(outcome: IOResult[T, E]) -> Result[T, E]:
    """The plain ``Result`` inside an awaited ``FutureResult``, for the edges that decide.

    >>> as_result(IOSuccess(1))
    <Success: 1>
    """
    if isinstance(outcome, IOFailure):
        return Failure(unsafe_perform_io(outcome.failure()))
    return Success(unsafe_perform_io(outcome.unwrap()))


async def before(deadline: float, work: Awaitable[T]) -> T | None:
    """``work``'s value, or None when the running loop's clock passes ``deadline`` first
    (``work`` is then cancelled). For what a deadline must bound besides model calls: a
    summary cache waiting for a lock must not hold a recall past its deadline.

    >>> async def late() -> int:
    ...     await asyncio.sleep(5)
    ...     return 1
    >>> async def main() -> int | None:
    ...     return await before(asyncio.get_running_loop().time() + 0.01, late())
    >>> asyncio.run(main()) is None
    True
    """
    remaining = deadline - asyncio.get_running_loop().time()
    try:
        return await asyncio.wait_for(work, timeout=max(remaining, 0.0))
    except TimeoutError:
        return None


def model_in_key(model: ChatModel) -> str:
    """What the summary cache key holds of ``model``: its name and its ``endpoint`` (where
    it answers, without credentials: OpenAIChatModel's normalised base URL), so two
    servers serving the same model name never answer from each other's entries, and
    entries kept under the bare name, before the endpoint was in the key, are never
    served. A library caller's own model naming no endpoint is keyed by its name.

    >>> class Model:
    ...     name, endpoint = "qwen3", "http://127.0.0.1:8080/v1"
    >>> model_in_key(Model()), model_in_key(type("Own", (), {"name": "m"})())
    ('qwen3 @ http://127.0.0.1:8080/v1', 'm @ ')
    """
    return f"{model.name} @ {getattr(model, 'endpoint', '')}"


async def cached_before(cache: SummaryCache, key: SummaryKey, deadline: float) -> Summary | None:
    """The summary ``cache`` keeps under ``key``; None for a miss, a failing cache, or one
    that does not answer before ``deadline`` (see :func:`before`): a cache is only ever
    a shortcut."""
    kept = await before(deadline, cache.cached_summary(key).awaitable())
    return None if kept is None else unsafe_perform_io(kept.value_or(None))


async def not_kept_because(cache: SummaryCache, key: SummaryKey, summary: Summary,
                           deadline: float) -> str:
    """Keep ``summary`` in ``cache`` under ``key`` (waiting no later than ``deadline``,
    see :func:`before`); why it failed (a full disk), else "": a read-only store, which
    keeps nothing by design, and a cache too slow to answer are not failures."""
    kept = await before(deadline, cache.keep_summary(key, summary).awaitable())
    return unsafe_perform_io(kept.failure()).reason if isinstance(kept, IOFailure) else ""


async def kept_before(cache: SummaryCache, key: SummaryKey, summary: Summary,
                      deadline: float) -> Summary:
    """``summary`` after keeping it in ``cache`` (see :func:`not_kept_because`): a cache
    that failed to keep it is said in its note, since the next search pays for the model
    again."""
    reason = await not_kept_because(cache, key, summary, deadline)
    if not reason:
        return summary
    why = f"summary not cached: {reason}"
    return attrs.evolve(summary, note="; ".join(filter(None, (summary.note, why))))
