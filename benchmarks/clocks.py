"""When the retrieval benchmark asks its questions: two clock modes.

The stages read "now" from their clock (recency, "two weeks ago"), so the same question
ranks differently depending on when it is taken to be asked:

- ``published``: the dataset's dates as published, every question asked by a user today:
  one fixed "today" for the whole run (the wall clock at the start, or ``--today``).
  LongMemEval's sessions are then years old, so recency is flat and time words point
  at windows nothing falls into.
- ``asked``: each question asked at its own date, which is the same as shifting its
  sessions so the question date is now ("asked today"); sessions are days or weeks old,
  as real users' are, so recency and time words are live.

>>> clock = Clock("published", today=86400.0)
>>> clock.label(), Clock("asked").label()
('as published (today 1970-01-02T00:00:00Z)', 'asked today (clock at each question date)')
>>> [c.mode for c in clocks_for("both", today=0.0)]
['published', 'asked']
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

import attrs
from returns.result import Failure

from benchmarks.longmemeval import Question
from harkback.stages.time_bounds import parse_as_of

CLOCK_MODES = ("published", "asked")
CLOCK_CHOICES = (*CLOCK_MODES, "both")


def _stamp(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace(
        "+00:00", "Z")


@attrs.frozen
class Clock:
    """One clock mode: ``published`` (one fixed ``today``) or ``asked`` (each question's
    own date; ``today`` stands in for questions that have none)."""

    mode: str = attrs.field(validator=attrs.validators.in_(CLOCK_MODES))
    today: float | None = None

    def now(self, question: Question) -> float:
        """The moment ``question`` is asked at under this clock."""
        if self.mode == "asked" and question.asked_at is not None:
            return question.asked_at
        return self._today()

    def label(self) -> str:
        """How a table names this clock."""
        if self.mode == "asked":
            return "asked today (clock at each question date)"
        return f"as published (today {_stamp(self._today())})"

    def _today(self) -> float:
        return time.time() if self.today is None else self.today


ASKED = Clock("asked")
"""Each question at its own date: what the benchmark did before it had two clocks."""


def clocks_for(choice: str, today: float) -> tuple[Clock, ...]:
    """The clocks ``--clock CHOICE`` runs, in print order: published, then asked."""
    modes = CLOCK_MODES if choice == "both" else (choice,)
    return tuple(Clock(mode, today=today) for mode in modes)


def read_today(text: str | None) -> float:
    """``--today``: an ISO time or epoch seconds; by default the wall clock now.

    >>> read_today("2026-03-01")
    1772323200.0
    """
    if text is None:
        return time.time()
    parsed = parse_as_of(text, what="--today")
    if isinstance(parsed, Failure):
        raise SystemExit(parsed.failure().reason)
    return parsed.unwrap()


def differences(recall: Mapping[tuple[str, str], Mapping[str, float]],
                metric: str = "recall_all@5") -> Sequence[str]:
    """One line per protocol and ranker run under both clocks: published, asked, and
    asked minus published. ``recall`` maps (protocol, mode) to each ranker's mean.

    >>> print(*differences({("pooled", "published"): {"bm25": 0.5},
    ...                     ("pooled", "asked"): {"bm25": 0.52}}), sep="\\n")
    - pooled, bm25: recall_all@5 as published 0.500, asked today 0.520, difference +0.020
    """
    lines = []
    protocols = dict.fromkeys(protocol for protocol, _ in recall)
    for protocol in protocols:
        published, asked = recall.get((protocol, "published")), recall.get((protocol, "asked"))
        if published is None or asked is None:
            continue
        for ranker in published:
            if ranker in asked:
                change = round(asked[ranker] - published[ranker], 3) or 0.0  # never -0.000
                lines.append(f"- {protocol}, {ranker}: {metric} as published "
                             f"{published[ranker]:.3f}, asked today {asked[ranker]:.3f}, "
                             f"difference {change:+.3f}")
    return lines
