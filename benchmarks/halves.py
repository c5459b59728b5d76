"""Two fixed halves of a benchmark's questions, so a ranking is tuned on one and checked on
the other.

A question's half is a stable function of its id (the parity of the first byte of its
SHA-1), the same on every machine and run: tune on half A only, and a change is kept
when half B (never looked at while tuning) moves the same way. :func:`halves_table`
prints recall_all@5 and recall_any@5 per half and over all questions, for every
protocol, clock and ranker of a run (:mod:`benchmarks.retrieval` prints it last).

>>> half("1e043500"), half("1faac195")
('B', 'A')
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from benchmarks.metrics import mean_scores
from benchmarks.retrieval_report import Answer, Report

HALVES = ("A", "B")


def half(question_id: str) -> str:
    """``"A"`` or ``"B"``: the parity of the first byte of the id's SHA-1."""
    return HALVES[hashlib.sha1(question_id.encode("utf-8")).digest()[0] % 2]


def _cell(answers: Sequence[Answer]) -> str:
    if not answers:
        return "-"
    means = mean_scores(a.scores for a in answers)
    return f"{means['recall_all@5']:.3f} / {means['recall_any@5']:.3f} ({len(answers)})"


def halves_table(reports: Sequence[Report]) -> str:
    """recall_all@5 / any@5 (questions) per half and over all, a row per protocol, clock
    and ranker (empty without reports).

    >>> from benchmarks.clocks import Clock
    >>> a = Answer(question="1e043500", type="t", ranked=("x",), latency_ms=1.0,
    ...            scores={"recall_all@5": 1.0, "recall_any@5": 1.0})
    >>> report = Report("pooled", Clock("asked", None), {"lexical": (a,)}, 1, 1)
    >>> print(halves_table([report]).splitlines()[-1])
    | pooled | asked | lexical | - | 1.000 / 1.000 (1) | 1.000 / 1.000 (1) |
    """
    if not reports:
        return ""
    lines = ["## halves (recall_all@5 / any@5, questions)", "",
             "| protocol | clock | ranker | half A | half B | all |", "|---|---|---|---|---|---|"]
    for report in reports:
        for name, answers in report.answers.items():
            cells = [_cell([a for a in answers if half(a.question) == h]) for h in HALVES]
            lines.append(f"| {report.protocol} | {report.clock.mode} | {name} | "
                         f"{' | '.join(cells)} | {_cell(answers)} |")
    return "\n".join([*lines, ""])
