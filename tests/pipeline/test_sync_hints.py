"""``harkback sync --claude-code DIR`` / ``--codex DIR`` on a folder holding nothing of that
kind: the note ``harkback import`` gives, not a bare "0 found"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.pipeline.sync_home import FIXTURES
from tests.pipeline.test_sync_process import run


@pytest.mark.parametrize(("flag", "other"), [("--codex", "claude-code"),
                                             ("--claude-code", "codex")])
def test_a_named_folder_of_another_kind_gets_the_import_note(tmp_path: Path, flag: str,
                                                             other: str) -> None:
    """A folder of the other agent's transcripts named by the flag: the sync reported 0
    sessions found and success, nothing else. It still succeeds (an empty folder may be
    right), with the note saying where that kind's transcripts live."""
    home = tmp_path / "home"
    home.mkdir()
    folder = tmp_path / "named"
    shutil.copytree(FIXTURES / other / ("projects" if other == "claude-code" else "sessions"),
                    folder)
    status, payload, _ = run(home, tmp_path / "h.db", flag, str(folder))
    kind = flag.removeprefix("--")
    (report,) = [s for s in payload["sources"] if s["kind"] == kind]
    assert status == 0 and report["sessions"]["found"] == 0, payload
    assert [n[:40] for n in report["notes"]] == [f"no {kind} transcripts found in {folder}"[:40]]
    assert "where `harkback sync` looks" in report["notes"][0]


def test_a_default_location_gets_no_note(tmp_path: Path) -> None:
    """Found where sync looks by default, an empty folder is the agent's own: no note."""
    home = tmp_path / "home"
    (home / ".codex" / "sessions").mkdir(parents=True)
    _, payload, _ = run(home, tmp_path / "h.db")
    (report,) = [s for s in payload["sources"] if s["kind"] == "codex"]
    assert report["status"] == "synced" and report["notes"] == [], payload
