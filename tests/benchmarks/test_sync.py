"""The sync benchmark builds three small sources, syncs them, re-syncs, and prints its table."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.sync import main


def test_a_tiny_machine_is_synced_then_re_synced(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Every generated session is found once; each timed step gets a row with figures."""
    assert main(["--sessions", "4", "--runs", "2", "--watch-appends", "2",
                 "--folder", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("sync of 3 sources x 4 sessions (12 sessions found)")
    rows = [line for line in out.splitlines() if line.startswith("| ") and "step" not in line]
    assert [row.split("|")[1].strip().split(" (")[0] for row in rows] == [
        "first sync", "unchanged re-sync", "unchanged re-sync", "appended message indexed"]
    for row in rows:
        median, most = (float(cell) for cell in row.split("|")[2:4])
        assert 0 < median <= most
    assert (tmp_path / "sync.db").is_file()
