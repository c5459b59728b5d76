"""The cold-process search benchmark at a tiny size: real processes on a real store."""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks.cold_search import cold_samples, cold_stats, user_environment
from benchmarks.scale import QUERY_MIX, build_store


def test_each_question_runs_in_its_own_process_and_reports_its_stages(tmp_path: Path) -> None:
    """Two questions, one round: two samples with the five stages' timings from the
    command's own payload, a wall time that includes starting the process, and the
    process's CPU time, which no more than every core can spend in that wall time."""
    db = tmp_path / "s.db"
    build = build_store(db, 300, incremental=20)
    assert build.messages == 300 and build.bulk_cpu_seconds > 0
    samples = cold_samples(db, [QUERY_MIX[0], ("recent", ""), QUERY_MIX[2]], rounds=1)
    assert [s["query"] for s in samples] == [QUERY_MIX[0][0], QUERY_MIX[2][0]]
    for sample in samples:
        assert set(sample["timings"]) == {"match", "resolve", "load", "summarize", "assemble"}
        assert sample["wall_ms"] > sum(sample["timings"].values())
        assert 0 < sample["cpu_ms"] <= sample["wall_ms"] * (os.cpu_count() or 1)
    stats = cold_stats(samples)
    assert stats["match"]["p50"] <= stats["all stages"]["p50"] <= stats["wall"]["p50"]
    assert stats["process CPU"]["p50"] > 0


def test_new_processes_get_a_users_environment() -> None:
    """The child processes keep the caller's environment but not its model or store
    settings, and cache bytecode as an installed package does."""
    given = {"PATH": "/usr/bin", "HOME": "/home/x", "PYTHONDONTWRITEBYTECODE": "1",
             "HARKBACK_MODEL": "m", "HARKBACK_EMBEDDER": "e", "HARKBACK_DB": "d.db"}
    assert user_environment(given) == {"PATH": "/usr/bin", "HOME": "/home/x"}
