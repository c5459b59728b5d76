"""The time words benchmark: a row per question, its reads timed as search_cpu's pairs are."""

from __future__ import annotations

import gc
import sys
from typing import Any

import pytest

from benchmarks.time_words import QUESTIONS, main
from harkback.stages import named_times


def test_the_reads_run_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Its own loop left the collector on, so its passes fell on whichever read crossed the
    allocation count: the timed reads find it off, as search_cpu's paired searches do, and
    it is on again after; each question has its row."""
    seen: list[tuple[str, bool]] = []
    read = named_times.named_times

    def watched(text: str, now: float) -> Any:
        seen.append((text, gc.isenabled()))
        return read(text, now)

    monkeypatch.setattr(named_times, "named_times", watched)
    monkeypatch.setattr(sys, "argv", ["time_words", "--seconds", "0.001"])
    assert gc.isenabled()
    assert main() == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == [f"| {name}" for name in QUESTIONS]
    for text in QUESTIONS.values():
        # The first read checks the window, untimed; the rest are timed.
        checked, *timed = [on for said, on in seen if said == text]
        assert checked and timed and not any(timed)
    assert gc.isenabled()
