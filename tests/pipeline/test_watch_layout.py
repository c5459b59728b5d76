"""``harkback sync --watch`` when what it watches changes under it: a source that appears
while it runs, a folder deleted and made again, a source whose re-sync failed."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from tests.pipeline.sync_home import (
    CLAUDE_FILE,
    CLAUDE_SESSION,
    claude_line,
    found_ids,
    make_home,
)
from tests.pipeline.test_sync_process import (
    home,  # noqa: F401  (the fixture)
    stop_once_found,
    watching,
    watching_started,
)

AGENT_BUS_SESSION = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
CODEX_SESSION = "0199a1b4-1111-7ddd-8eee-ffffffffffff"
CODEX_FILE = f"2026/03/04/rollout-2026-03-04T10-00-00-{CODEX_SESSION}.jsonl"


def codex_line(text: str) -> str:
    """One Codex user message, as the agent appends it (with its newline)."""
    return json.dumps({"timestamp": "2026-03-04T10:00:09.000Z", "type": "response_item",
                       "payload": {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]}}) + "\n"


def _append(path: Path, line: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line)


def test_a_source_that_appears_while_watching_is_watched(tmp_path: Path) -> None:
    """Codex run for the first time while the watch runs: its sessions are imported, and
    what it appends later too; the watch only watched the sources found when it began."""
    machine = make_home(tmp_path / "home")
    codex = machine / ".codex"
    shutil.move(codex, tmp_path / "codex-later")
    db = tmp_path / "h.db"
    with watching(machine, db) as watcher:
        watching_started(watcher)
        shutil.copytree(tmp_path / "codex-later", codex)
        time.sleep(3)  # found within 2 s; the append goes to a watched folder
        _append(codex / "sessions" / CODEX_FILE, codex_line("the okapi queue stalls"))
        out, _ = stop_once_found(watcher, db, "okapi", CODEX_SESSION)
    assert "codex: 4 new, 0 updated, 0 removed" in out


def test_a_folder_deleted_and_made_again_is_watched_again(home: Path,  # noqa: F811
                                                          tmp_path: Path) -> None:
    """A projects folder deleted (its sync fails, said once) and made again (a restore):
    what is appended to it after is imported; the watcher had stayed on the folder that
    was deleted, and saw nothing more."""
    projects = home / ".claude" / "projects"
    db = tmp_path / "h.db"
    with watching(home, db) as watcher:
        watching_started(watcher)
        shutil.move(projects, tmp_path / "saved")
        time.sleep(3)  # its absence is seen within 2 s
        shutil.copytree(tmp_path / "saved", projects)
        time.sleep(3)
        _append(projects / CLAUDE_FILE, claude_line(CLAUDE_SESSION, "the narwhal cache", "u-n"))
        out, err = stop_once_found(watcher, db, "narwhal")
    assert out.count(f"claude-code: failed: no Claude Code projects folder at {projects}"
                     ) == 1, out
    assert f"{projects} is not there now" in err, err


def test_a_failed_re_sync_is_tried_again_without_a_change(home: Path,  # noqa: F811
                                                          tmp_path: Path) -> None:
    """A folder made unreadable fails its re-sync; made readable again (no transcript
    changes then) what was appended meanwhile is imported: a failed re-sync waited for
    the next change to its source, which may never come."""
    projects = home / ".claude" / "projects"
    db = tmp_path / "h.db"
    with watching(home, db) as watcher:
        watching_started(watcher)
        projects.chmod(0)
        _append(projects / CLAUDE_FILE, claude_line(CLAUDE_SESSION, "the ocelot lock", "u-o"))
        time.sleep(3)
        projects.chmod(0o755)
        out, _ = stop_once_found(watcher, db, "ocelot")
    assert out.count(f"claude-code: failed: cannot list {projects}: Permission denied") == 1


def test_a_project_folder_moved_out_and_back_is_followed(home: Path,  # noqa: F811
                                                         tmp_path: Path) -> None:
    """With --prune, a project's folder moved out of the projects folder takes its sessions
    out of the store, and moved back brings them back: the move is one change of the
    folder's path, none of a transcript, and the watch let it pass (a plain sync removed
    them)."""
    project = home / ".claude" / "projects" / "-home-mei-code-agent-bus"
    db = tmp_path / "h.db"
    with watching(home, db, "--prune") as watcher:
        watching_started(watcher)
        assert found_ids(db, "NATS latency") == [AGENT_BUS_SESSION]
        shutil.move(project, tmp_path / "agent-bus")
        deadline = time.monotonic() + 30
        while found_ids(db, "NATS latency") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert found_ids(db, "NATS latency") == []
        shutil.move(tmp_path / "agent-bus", project)
        out, _ = stop_once_found(watcher, db, "NATS latency", AGENT_BUS_SESSION)
    assert "claude-code: 0 new, 0 updated, 3 removed" in out  # the folder held 3
    assert "claude-code: 3 new, 0 updated, 0 removed" in out
