"""A NUL character in what a store keys or filters by (a session id, its source or project,
a tool call's id), read from another agent's transcript or database, is stored as U+FFFD
and named; it never stops the import (every store refuses a NUL there: SQLite could not
read such a session back by its id)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.test_import_cli import harkback
from tests.support.hermes_db import HermesFile

NOW = "2026-03-03T14:15:00.000Z"


def _claude_code(folder: Path) -> None:
    def line(kind: str, content: object, uuid: str) -> dict[str, object]:
        return {"type": kind, "sessionId": "c1", "uuid": uuid, "timestamp": NOW,
                "cwd": "/w\x00app", "message": {"role": kind, "content": content}}
    (folder / "-w-app").mkdir(parents=True)
    (folder / "-w-app" / "c1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in (
        line("user", "the heron logs", "u1"),
        line("assistant", [{"type": "tool_use", "id": "t\x001", "name": "Bash",
                            "input": {"command": "ls"}}], "u2"))), encoding="utf-8")


def test_a_transcript_holding_a_nul_in_its_project_is_imported_and_named(
        tmp_path: Path) -> None:
    """Claude Code: the import failed as an internal error (ValueError) and stored nothing;
    now the session is stored with U+FFFD in its project (and tool call id), and named."""
    folder, db = tmp_path / "projects", str(tmp_path / "h.db")
    _claude_code(folder)
    done = harkback("import", "claude-code", str(folder), "--db", db)
    assert done.returncode == 3, done.stderr  # something was repaired
    assert "NUL character: in project of session 'c1', made U+FFFD (repaired)" in done.stderr
    shown = json.loads(harkback("show", "c1", "--json", "--db", db).stdout)
    assert shown["session"]["project"] == "/w\ufffdapp"


def test_a_hermes_session_id_holding_a_nul_is_stored_renamed_with_its_child(
        tmp_path: Path) -> None:
    """Hermes: a row id holding a NUL is stored as U+FFFD, and its child's link to it too,
    so the lineage holds; the rename is named."""
    home = tmp_path / "hermes"
    home.mkdir()
    file = HermesFile(home / "state.db", "v30")
    file.session("s\x001")
    file.message("s\x001", "user", "the heron logs")
    file.session("k", parent="s\x001")
    file.message("k", "user", "the egret logs")
    file.close()
    db = str(tmp_path / "h.db")
    done = harkback("import", "hermes", str(home / "state.db"), "--db", db)
    assert done.returncode == 3, done.stderr
    assert "NUL character: in id of session 's\\x001', made U+FFFD (renamed)" in done.stderr
    shown = json.loads(harkback("show", "s\ufffd1", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == ["the heron logs"]
    child = json.loads(harkback("show", "k", "--json", "--db", db).stdout)
    assert child["lineage"]["parent"] == {"session_id": "s\ufffd1", "stored": True, "title": ""}
