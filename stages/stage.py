"""The shape every stage shares, and small helpers for building stage results.

A stage is a frozen callable holding only configuration. Called with its input
record it returns a ``RequiresContextFutureResult`` that, given :class:`Deps`,
runs the step and yields the next record or a :data:`RecallError`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from returns.context import RequiresContextFutureResult
from returns.future import FutureResult

from harkback.stages.errors import RecallError, StoreUnavailable
from harkback.stages.ports import Deps

In = TypeVar("In", contravariant=True)
Out = TypeVar("Out", covariant=True)
T = TypeVar("T")

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
