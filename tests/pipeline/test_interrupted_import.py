"""Ctrl-C during ``harkback import``: the line says what was kept and that running the
command again goes on from there, and both are true. Real processes, a real SQLite file
read while the import writes it."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

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
    return subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "import", "claude-code", str(folder),
         "--db", str(db), "--json", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_an_interrupted_import_run_again_stores_every_session_once(tmp_path: Path) -> None:
    """Ctrl-C once the first sessions are stored: exit 130 and a line saying they are kept
    and the same command goes on; they are, and it does (the rerun adds only the rest,
    passes over what was kept, and every session is stored exactly once)."""
    ids = _transcripts(tmp_path / "projects")
    db = tmp_path / "h.db"
    first = _import(tmp_path / "projects", db)
    try:
        deadline = time.monotonic() + 120
        while not _stored(db) and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        first.send_signal(signal.SIGINT)
        _, err = first.communicate(timeout=120)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 130, err
    assert err == ("harkback: interrupted; the sessions stored before it are kept, each whole: "
                   "the same command run again goes on from there, storing none twice\n")
    kept = _stored(db)
    assert 0 < len(kept) < FILES and len(set(kept)) == len(kept)
    again = _import(tmp_path / "projects", db)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    (report,) = json.loads(out)["sources"]
    assert report["sessions"] == {"added": FILES - len(kept), "updated": 0,
                                  "skipped": len(kept)}
    assert sorted(_stored(db)) == sorted(ids)
