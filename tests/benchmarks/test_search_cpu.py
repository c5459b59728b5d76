"""The search CPU benchmark at a tiny size: a table of the mix, every stage timed."""

from __future__ import annotations

import gc
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from benchmarks.search_cpu import committer, main
from benchmarks.soak import QUERIES
from harkback.pipeline.facade import Harkback, Response


def test_a_tiny_store_gives_a_row_per_query_and_the_mean(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """A 2k-message store built on the way, one round: every query's CPU is above zero,
    and the stages add up to no more than the whole search."""
    assert main(["--db", str(tmp_path / "cpu.db"), "--size", "2k", "--rounds", "1"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    rows = {cells[0]: [float(c) for c in cells[1:]] for line in lines[1:]
            if (cells := [c.strip() for c in line.strip("|").split("|")])[0] != "---"}
    assert set(rows) == {*QUERIES, "mean"}
    for name, (total, *stages) in rows.items():
        assert total > 0, name
        assert 0 < sum(stages) <= total + 0.5, name


def test_a_copy_of_the_package_runs_alternating_with_this_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--against`` (here the package itself) gives both figures of every query and
    their ratio, each above zero."""
    assert main(["--db", str(tmp_path / "cpu.db"), "--size", "2k", "--rounds", "2",
                 "--against", "harkback"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    rows = {cells[0]: cells[1:] for line in lines[1:]
            if (cells := [c.strip() for c in line.strip("|").split("|")])[0] != "---"}
    assert set(rows) == {*QUERIES, "mean"}
    for name, (other, this, ratio) in rows.items():
        assert float(other) > 0 and float(this) > 0, name
        assert ratio.startswith("×") and float(ratio[1:]) > 0, name


def test_the_paired_searches_run_with_the_collector_paused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Left on, the collector's passes fell on whichever side crossed its allocation count
    and the same code on both sides came out x0.95-1.03: the timed searches of a paired
    run find it off, and it is on again after."""
    seen: list[bool] = []

    class Watched(Harkback):
        async def search(self, query: str, **options: Any) -> Response:
            seen.append(gc.isenabled())
            return await super().search(query, **options)

    monkeypatch.setattr("benchmarks.search_cpu.Harkback", Watched)
    assert gc.isenabled()
    assert main(["--db", str(tmp_path / "cpu.db"), "--size", "2k", "--rounds", "2",
                 "--against", "harkback"]) == 0
    timed = 2 * len(QUERIES)
    assert len(seen) == timed + len(QUERIES)
    assert not any(seen[-timed:])
    assert gc.isenabled()


def test_commits_are_seen_by_a_reader_and_change_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--commits``: each commit is one another connection sees (its ``data_version``
    moves: SQLite then drops its page cache), the store keeps its schema version and its
    messages, and the table comes out as without it."""
    db = tmp_path / "cpu.db"
    assert main(["--db", str(db), "--size", "2k", "--rounds", "1", "--commits"]) == 0
    assert "| mean |" in capsys.readouterr().out
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    try:
        state = ("SELECT (SELECT COUNT(*) FROM messages), "
                 "(SELECT user_version FROM pragma_user_version)")
        before = reader.execute(state).fetchone()
        seen = [reader.execute("PRAGMA data_version").fetchone()[0]]
        with committer(db, enabled=True) as commit:
            seen.append(reader.execute("PRAGMA data_version").fetchone()[0])
            commit()
            seen.append(reader.execute("PRAGMA data_version").fetchone()[0])
        with committer(db, enabled=False) as nothing:
            nothing()
            seen.append(reader.execute("PRAGMA data_version").fetchone()[0])
        assert reader.execute(state).fetchone() == before
    finally:
        reader.close()
    assert seen[0] != seen[1] != seen[2]  # entering commits once, then each call once
    assert seen[3] == seen[2]
