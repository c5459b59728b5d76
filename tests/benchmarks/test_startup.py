"""The start-up benchmark runs every command against a store it builds, and prints the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.startup import main, table


def test_builds_a_store_and_times_every_command(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A small run builds the store, every command succeeds, each gets a row with figures."""
    db = tmp_path / "startup.db"
    assert main(["--db", str(db), "--size", "2k", "--runs", "2"]) == 0
    assert db.is_file()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| `")]
    labels = [row.split("`")[1] for row in rows]
    assert labels == ["python -c pass", "harkback --help", "harkback --version",
                      "harkback search --summarizer none"]
    for row in rows:
        median, p90 = (float(cell) for cell in row.split("|")[2:4])
        assert 0 < median <= p90


def test_table_puts_the_target_beside_harkback_commands_only() -> None:
    """Median and interpolated p90 per command; the target beside harkback commands only."""
    lines = table({"python -c pass": [0.01, 0.02], "harkback --help": [0.05, 0.07]}).splitlines()
    assert lines[2] == "| `python -c pass` | 0.015 | 0.019 | - |"
    assert lines[3] == "| `harkback --help` | 0.060 | 0.068 | ≤ 0.30 |"
