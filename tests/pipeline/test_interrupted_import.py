"""Ctrl-C during ``harkback import``: the line says what was kept and that running the
command again goes on from there, and both are true. Real processes, a real SQLite file
read while the import writes it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harkback.stages.batching import BATCH
from tests.pipeline.sync_home import claude_line

FILES = 1_000
"""Ten units of the import (100 files each, one commit each): Ctrl-C comes after the first."""


def _transcripts(folder: Path) -> list[str]:
    """``FILES`` one-session Claude Code transcripts under ``folder``; their session ids."""
    project = folder / "-home-mei-code-app"
    project.mkdir(parents=True)
    ids = [f"{n:08x}-5b1e-4c0a-9d8e-1a2b3c4d5e6f" for n in range(FILES)]
    for n, session in enumerate(ids):
        (project / f"{session}.jsonl").write_text(
            claude_line(session, f"the heron gateway note {n}", f"u{n}"), encoding="utf-8")
    return ids


def _stored(db: Path) -> list[str]:
    """The session ids the store holds, one row each (read only, beside the writer)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as raw:
            found = [row[0] for row in raw.execute("SELECT id FROM sessions")]
        raw.close()
    except sqlite3.OperationalError:  # not made yet: no file, or no table
        return []
    return found


def _import(folder: Path, db: Path) -> subprocess.Popen[str]:
    return _started(["import", "claude-code", str(folder)], db)


def _started(argv: list[str], db: Path, env: dict[str, str] | None = None
             ) -> subprocess.Popen[str]:
    """``harkback ARGV --db DB --json --no-progress``, started."""
    return subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", *argv, "--db", str(db), "--json",
         "--no-progress"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stopped_once_stored(running: subprocess.Popen[str], db: Path, more_than: int = 0
                         ) -> tuple[int, str, str]:
    """Ctrl-C to ``running`` once ``db`` holds more than ``more_than`` sessions: its status,
    stdout and stderr."""
    try:
        deadline = time.monotonic() + 120
        while (len(_stored(db)) <= more_than and running.poll() is None
               and time.monotonic() < deadline):
            time.sleep(0.02)
        running.send_signal(signal.SIGINT)
        out, err = running.communicate(timeout=120)
    finally:
        running.kill()
        running.wait()
    return running.returncode, out, err


def test_an_interrupted_import_run_again_stores_every_session_once(tmp_path: Path) -> None:
    """Ctrl-C once the first sessions are stored: exit 130 and a line saying they are kept
    and the same command goes on; they are, and it does (the rerun adds only the rest,
    passes over what was kept, and every session is stored exactly once)."""
    ids = _transcripts(tmp_path / "projects")
    db = tmp_path / "h.db"
    status, _, err = _stopped_once_stored(_import(tmp_path / "projects", db), db)
    assert status == 130, err
    assert err == ("harkback: interrupted; the sessions stored before it are kept, each whole: "
                   "the same command run again goes on from there, storing none twice\n")
    kept = _stored(db)
    assert 0 < len(kept) < FILES and len(set(kept)) == len(kept)
    again = _import(tmp_path / "projects", db)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    (report,) = json.loads(out)["sources"]
    assert report["sessions"] == {"added": FILES - len(kept), "updated": 0,
                                  "unchanged": len(kept), "skipped": len(kept)}
    assert sorted(_stored(db)) == sorted(ids)


KEPT = ("the sessions stored before it are kept, each whole: the same command run again goes "
        "on from there, storing none twice")
UNIT = 100
"""Files in one unit of the import: the unit being written when Ctrl-C comes commits whole,
after the counts were last told."""


def _sessions_told(command: str, payload: dict[str, Any]) -> int:
    """The sessions a stopped command's payload counts as added, checking it marks where it
    stopped: the source (``import``, ``sync``) or the whole payload (``ingest``)."""
    if command == "ingest":
        return int(payload["sessions"]["added"])
    (source,) = [s for s in payload["sources"] if s["kind"] == "claude-code"]
    if command == "import":
        assert (source["success"], source["interrupted"]) == (False, True)
        return int(source["sessions"]["added"])
    assert source["status"] == "interrupted"
    return int(source["sessions"]["new"])


@pytest.mark.parametrize("command", ["import", "sync", "ingest"])
def test_an_interrupted_json_payload_says_what_was_kept_with_its_counts(
        tmp_path: Path, command: str) -> None:
    """--json of a command stopped on the way printed only {"success": false, "error":
    "interrupted"}; it is now the command's usual payload with the sessions counted so far
    (each of them stored: at most the unit being written is stored and not yet counted),
    ``interrupted`` and what the line says was kept. Stopped once more than a unit is
    stored, so some are counted."""
    _transcripts(tmp_path / "projects")
    source = tmp_path / "in.jsonl"
    with source.open("w", encoding="utf-8") as lines:
        for n in range(FILES * 10):
            lines.write(json.dumps({"id": f"s{n}", "messages": [
                {"role": "user", "content": f"the heron gateway note {n}"}]}) + "\n")
    db = tmp_path / "h.db"
    argv = {"import": ["import", "claude-code", str(tmp_path / "projects")],
            "sync": ["sync", "--claude-code", str(tmp_path / "projects")],
            "ingest": ["ingest", str(source)]}[command]
    unit = BATCH if command == "ingest" else UNIT
    (tmp_path / "home").mkdir()
    status, out, err = _stopped_once_stored(
        _started(argv, db, {**os.environ, "HOME": str(tmp_path / "home")}), db, unit)
    assert status == 130, err
    payload = json.loads(out)
    assert (payload["success"], payload["error"], payload["interrupted"], payload["kept"]) == (
        False, "interrupted", True, KEPT)
    stored, told = len(_stored(db)), _sessions_told(command, payload)
    assert 0 < told <= stored <= told + unit
