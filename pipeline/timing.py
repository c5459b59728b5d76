"""Per-stage timing: wrap a stage so that, when it runs, an observer hears about it.

Observers cannot change results: one that raises is logged and ignored.

>>> rec = RecordingObserver()
>>> rec(StageEvent(stage="match", status="completed", duration_ms=1.5))
>>> rec.durations()
{'match': 1.5}
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable
from typing import TypeVar

import attrs
from returns.context import RequiresContextFutureResult
from returns.future import FutureResult
from returns.result import Failure, Result

from harkback.stages.errors import RecallError
from harkback.stages.observe import Observer, StageEvent
from harkback.stages.ports import Deps
from harkback.stages.stage import Stage, Step, as_result

In = TypeVar("In")
Out = TypeVar("Out")
T = TypeVar("T")

log = logging.getLogger("harkback")


def notify(observer: Observer, event: StageEvent) -> None:
    """Send ``event``; an observer's own failure is logged, never propagated."""
    try:
        observer(event)
    except Exception:  # an observer is outside code; it must not break a recall
        log.warning("observer failed on %s %s", event.stage, event.status, exc_info=True)


@attrs.define
class RecordingObserver:
    """Keeps every event, for tests, benchmarks and the ``timings`` of a payload."""

    events: list[StageEvent] = attrs.Factory(list)

    def __call__(self, event: StageEvent) -> None:
        """Record one event."""
        self.events.append(event)

    def durations(self) -> dict[str, float]:
        """Milliseconds per stage that finished (completed or failed), all its runs
        together: a search that found nothing runs again over tool output."""
        total: dict[str, float] = {}
        for e in self.events:
            if e.duration_ms is not None:
                total[e.stage] = total.get(e.stage, 0.0) + e.duration_ms
        return total


@attrs.frozen
class FanOut:
    """An observer that forwards every event to several observers."""

    observers: tuple[Observer, ...]

    def __call__(self, event: StageEvent) -> None:
        """Forward ``event`` to each observer, isolating failures."""
        for observer in self.observers:
            notify(observer, event)


async def _observed(name: str, run: Callable[[], FutureResult[Out, RecallError]],
                    observer: Observer) -> Result[Out, RecallError]:
    notify(observer, StageEvent(stage=name, status="started"))
    started = time.perf_counter()
    result = as_result(await run())
    elapsed = (time.perf_counter() - started) * 1000.0
    if isinstance(result, Failure):
        notify(observer, StageEvent(stage=name, status="failed", duration_ms=elapsed,
                                    error=result.failure().message()))
    else:
        notify(observer, StageEvent(stage=name, status="completed", duration_ms=elapsed))
    return result


def timed(name: str, stage: Stage[In, Out]) -> Callable[[In], Step[Out]]:
    """``stage`` reporting started/completed/failed with its duration to ``deps.observer``."""
    def run(value: In) -> Step[Out]:
        def with_deps(deps: Deps) -> FutureResult[Out, RecallError]:
            return FutureResult(_observed(
                name, lambda: stepped(name, stage, stage(value))(deps), deps.observer))
        return RequiresContextFutureResult(with_deps)
    return run


def stepped(name: str, stage: object, step: T) -> T:
    """``step``, what ``stage`` returned, when it is a step; else a TypeError naming the
    stage and the shape, where a stage of one's own (an ``async def``, or one returning
    its record) failed as "'coroutine' object is not callable"."""
    if callable(step):
        return step
    if inspect.iscoroutine(step):
        step.close()  # it will never run: no "never awaited" warning on top of the error
    called = getattr(stage, "__qualname__", type(stage).__name__)
    raise TypeError(f"the {name} stage {called} returned {type(step).__name__}, not a Step: "
                    "a stage is a plain function returning RequiresContextFutureResult("
                    "lambda deps: FutureResult(...)), harkback.pipeline.Step")
