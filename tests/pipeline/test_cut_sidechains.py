"""A Claude Code transcript whose sidechain lines were cut keeps its sub-session in the store,
tied to the file (deleting the file lets go of it with the rest); the file's mark must count
it too, or ``harkback sources`` shows one session fewer than the source keeps."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.pipeline.test_sync_process import environment

FIXTURES = Path(__file__).parent.parent / "fixtures"
S2 = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"


def _harkback(home: Path, *args: str) -> dict[str, Any]:
    """``harkback ARGS --json`` run with ``home`` as HOME (no agent's history there)."""
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args, "--json"],
                          env=environment(home), capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


def test_a_file_whose_sidechain_was_cut_counts_its_kept_sub_session(tmp_path: Path) -> None:
    """Three sessions stored from the project (the session, its inline sidechain, an agent
    file's); the sidechain lines cut, then the file deleted: the source still holds three,
    two of them kept gone. Its gone mark counted one session while naming two, so the
    source said 2 sessions, 2 of them kept gone, beside an agent file's live one."""
    home, projects = tmp_path / "home", tmp_path / "projects"
    home.mkdir()
    shutil.copytree(FIXTURES / "claude-code" / "projects" / "-home-mei-code-agent-bus",
                    projects / "-home-mei-code-agent-bus")
    db = str(tmp_path / "h.db")
    sync = ("sync", "--claude-code", str(projects), "--db", db)
    _harkback(home, *sync)
    transcript = projects / "-home-mei-code-agent-bus" / f"{S2}.jsonl"
    lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not json.loads(line).get("isSidechain")]
    assert len(kept) < len(lines)
    transcript.write_text("".join(kept), encoding="utf-8")
    _harkback(home, *sync)
    transcript.unlink()
    _harkback(home, *sync)
    stored = _harkback(home, "stats", "--db", db)["sessions"]
    (source,) = _harkback(home, "sources", "--db", db)["sources"]
    assert (source["sessions"], source["kept_gone"]) == (stored, 2)
    assert stored == 3
