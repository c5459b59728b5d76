"""The append benchmark runs at a tiny size: three rows, and the three stores equal."""

from __future__ import annotations

import pytest

from benchmarks.append import main


def test_prints_a_row_per_sync_and_the_stores_agree(capsys: pytest.CaptureFixture[str]) -> None:
    """Each way of syncing is timed, and the stores they wrote hold the same rows."""
    assert main(["--megabytes", "1", "--appends", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("stores equal at the end: yes")
    rows = [line.split("|") for line in out[4:]]
    assert [row[1].strip() for row in rows] == ["whole", "tail", "tail + memo"]
    assert all(float(row[2]) > 0 for row in rows)
