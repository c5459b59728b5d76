"""What a retrieval benchmark run reports: each ranker's answers, as tables and JSON.

A :class:`Report` holds every ranker's answers under one protocol and one clock
(:mod:`benchmarks.clocks`); :func:`render` prints it as Markdown (the summary over every
metric with latency, then recall per question type), :func:`compare_clocks` sets the two
clocks side by side, :func:`to_json` keeps every answer for later analysis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from benchmarks.clocks import Clock, differences
from benchmarks.metrics import KS, mean_scores, percentile


@attrs.frozen
class Answer:
    """One ranker's answer to one question: ranked session ids, scores and latency."""

    question: str
    type: str
    ranked: tuple[str, ...]
    scores: Mapping[str, float]
    latency_ms: float


@attrs.frozen
class Report:
    """Every ranker's answers under one protocol and clock, and what was indexed."""

    protocol: str
    clock: Clock
    answers: Mapping[str, tuple[Answer, ...]]
    sessions: int
    messages: int


Answers = dict[Clock, dict[str, list[Answer]]]
"""Answers as they are collected: by clock, then by ranker."""


def reports_by_clock(protocol: str, clocks: Sequence[Clock], answers: Answers,
                     sessions: int, messages: int) -> tuple[Report, ...]:
    """A report per clock, in ``clocks``' order, from answers collected by clock."""
    return tuple(Report(protocol, clock,
                        {name: tuple(a) for name, a in answers.get(clock, {}).items()},
                        sessions, messages) for clock in clocks)


def _head(metric: str) -> str:
    return metric.replace("recall_any", "any").replace("recall_all", "all")


METRIC_ORDER = tuple(f"{m}@{k}" for m in ("recall_any", "recall_all", "ndcg") for k in KS)


def summary_table(report: Report) -> str:
    """Markdown table: one row per ranker, every metric, and latency p50/p95 in ms."""
    heads = ["ranker", *(_head(m) for m in METRIC_ORDER), "p50 ms", "p95 ms"]
    lines = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for name, answers in report.answers.items():
        means = mean_scores(a.scores for a in answers)
        times = [a.latency_ms for a in answers]
        cells = [name, *(f"{means[m]:.3f}" for m in METRIC_ORDER),
                 f"{percentile(times, 50):.1f}", f"{percentile(times, 95):.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def type_table(report: Report, metrics: Sequence[str] = ("recall_all@5", "recall_any@5")
               ) -> str:
    """Markdown table: one row per question type, each ranker's metrics as ``a / b``."""
    names = list(report.answers)
    types = sorted({a.type for answers in report.answers.values() for a in answers})
    label = " / ".join(_head(m) for m in metrics)
    lines = ["| type | n | " + " | ".join(f"{n} ({label})" for n in names) + " |",
             "|" + "---|" * (len(names) + 2)]
    for kind in types:
        row = [kind]
        for i, name in enumerate(names):
            subset = [a for a in report.answers[name] if a.type == kind]
            if i == 0:
                row.append(str(len(subset)))
            means = mean_scores(a.scores for a in subset)
            row.append(" / ".join(f"{means[m]:.3f}" for m in metrics))
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def render(report: Report) -> str:
    """The report as text: what was indexed, the summary table, the per-type table."""
    count = len(next(iter(report.answers.values()), ()))
    what = (f"{report.sessions} sessions, {report.messages} messages"
            if report.protocol.startswith("pooled") or report.protocol == "cli"  # one store
            else f"per question about {report.sessions} sessions, {report.messages} messages")
    title = f"## {report.protocol}, {report.clock.label()}: {count} questions; {what}"
    return "\n".join([title, "", summary_table(report), "", type_table(report), ""])


def to_json(report: Report) -> dict[str, Any]:
    """Every answer, for later analysis."""
    return {"protocol": report.protocol, "clock": report.clock.mode,
            "today": report.clock.today, "sessions": report.sessions,
            "messages": report.messages,
            "answers": {name: [attrs.asdict(a) for a in answers]
                        for name, answers in report.answers.items()}}


def compare_clocks(reports: Sequence[Report], metric: str = "recall_all@5") -> str:
    """Each ranker's ``metric`` as published beside asked today, per protocol run both ways
    (empty when only one clock ran)."""
    means = {(r.protocol, r.clock.mode): {name: mean_scores(a.scores for a in answers)[metric]
                                          for name, answers in r.answers.items()}
             for r in reports}
    lines = differences(means, metric)
    if not lines:
        return ""
    return "\n".join(["## as published vs asked today", "", *lines, ""])
