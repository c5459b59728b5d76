"""The MCP round-trip benchmark runs end to end on a small generated store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import mcp_roundtrip


def test_reports_start_and_percentiles_per_summarizer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "small.db"
    assert mcp_roundtrip.main(["--messages", "400", "--calls", "3", "--db", str(db)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["messages"] == 400
    assert db.is_file()
    for summarizer in mcp_roundtrip.SUMMARIZERS:
        figures = report[summarizer]
        assert figures["calls"] == 3
        assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["max_ms"]
    assert report["start_s"] > 0


def test_times_cold_starts_to_each_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    """``--handshakes N`` starts the server N more times and reports, per step, wall and
    CPU seconds, the wall seconds growing from one step to the next."""
    db = tmp_path / "small.db"
    assert mcp_roundtrip.main(["--messages", "200", "--calls", "1", "--db", str(db),
                               "--handshakes", "2", "--model", "m"]) == 0
    cold = json.loads(capsys.readouterr().out)["cold_start"]
    assert cold["runs"] == 2
    steps = [cold[step] for step in mcp_roundtrip.STEPS]
    assert all(0 < step["cpu_median_s"] <= step["cpu_max_s"] for step in steps)
    walls = [step["wall_median_s"] for step in steps]
    assert walls == sorted(walls)
