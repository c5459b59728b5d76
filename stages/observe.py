"""What a caller may hear of a run: each stage's start and end, as :class:`StageEvent`.

An :class:`Observer` is handed to the stages through
:class:`~harkback.stages.ports.Deps`; it can watch, never change, a result.

>>> StageEvent(stage="match", status="completed", duration_ms=1.5).status
'completed'
"""

from __future__ import annotations

from typing import Literal, Protocol

import attrs

Status = Literal["started", "completed", "failed"]


@attrs.frozen(kw_only=True)
class StageEvent:
    """A stage started, completed or failed; durations are in milliseconds."""

    stage: str
    status: Status
    duration_ms: float | None = None
    error: str = ""


class Observer(Protocol):
    """Receives stage events. It cannot change results; if it raises, it is ignored."""

    def __call__(self, event: StageEvent) -> None:
        """Take one event."""
        ...


def null_observer(event: StageEvent) -> None:
    """The default observer: ignores every event."""
