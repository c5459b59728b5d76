"""The fuzzing benchmark, at a tiny size: every generated query gives a JSON payload."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.fuzz import main


def test_a_small_run_finds_nothing_wrong(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """300 queries in process (the issue's among them) and 4 through the CLI: no
    exceptions, no replies that are not JSON, no failed payloads; the table says so."""
    assert main(["--queries", "300", "--cli", "4", "--size", "1k",
                 "--db", str(tmp_path / "fuzz.db")]) == 0
    out = capsys.readouterr().out
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| ")][1:]
    parts = [row[0].lstrip("| ") for row in rows]
    assert parts[0] == "in process" and parts[1].startswith("CLI --json")
    assert [row[1] for row in rows] == ["300", "4"]
    assert all(row[2:5] == ["0", "0", "0"] for row in rows)
