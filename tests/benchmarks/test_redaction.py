"""The redaction benchmark runs at a tiny size and prints both rows."""

from __future__ import annotations

import pytest

from benchmarks.redaction import main


def test_prints_plain_and_redacted_rows(capsys: pytest.CaptureFixture[str]) -> None:
    """Both modes ingest the corpus; only the redacting one finds the planted keys."""
    assert main(["--size", "500", "--runs", "1"]) == 0
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines()[2:5]]
    assert [row[1].strip() for row in rows] == ["plain", "redacted", "redaction alone"]
    assert int(rows[0][5]) == 0 and int(rows[1][5]) == int(rows[2][5]) >= 1
    # Ingest takes measurable time; the redaction alone of 500 messages may print 0.00.
    assert float(rows[0][2]) > 0 and float(rows[1][2]) > 0
    assert all(float(row[2]) >= 0 and float(row[3]) >= 0 for row in rows)
