"""A NUL character in what a store keys or filters by (a session id, its source or project,
a tool call's id), read from another agent's transcript or database, is stored as U+FFFD
and named; it never stops the import (every store refuses a NUL there: SQLite could not
read such a session back by its id)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.test_import_cli import harkback
from tests.support.hermes_db import HermesFile
from tests.support.new_stores import store_locations

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
    """Hermes: a row id holding a NUL is stored with it written ``\\x00`` (as a byte that
    is not UTF-8 is), and its child's link to it too, so the lineage holds; the rename is
    named as a NUL, not as a byte that is not UTF-8."""
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
    # A NUL is no byte of another encoding: named as what it is, not as "not UTF-8".
    assert ("NUL character: session s\\x001: id held 1 NUL character(s), written as \\x00 "
            "(renamed)") in done.stderr
    shown = json.loads(harkback("show", "s\\x001", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == ["the heron logs"]
    child = json.loads(harkback("show", "k", "--json", "--db", db).stdout)
    assert child["lineage"]["parent"] == {"session_id": "s\\x001", "stored": True, "title": ""}


db = store_locations("sqlite", "postgres")
"""A new store: a SQLite file, or an empty database on the test server."""


def test_a_hermes_id_holding_a_nul_is_neither_lost_nor_stopping_imports(
        tmp_path: Path, db: str) -> None:
    """Made U+FFFD, ``s\\x001`` became the id of the row ``s\ufffd1``: one of the two
    sessions was dropped without a word. And the row's id, a NUL in it, was the item of its
    mark: PostgreSQL's ledger refused it, and every import of the file stopped."""
    home = tmp_path / "hermes"
    home.mkdir()
    file = HermesFile(home / "state.db", "v30")
    for session_id, text in (("s\x001", "the heron logs"), ("s\ufffd1", "the egret logs")):
        file.session(session_id)
        file.message(session_id, "user", text)
    file.close()
    first = harkback("import", "hermes", str(home / "state.db"), "--db", db, "--json")
    assert first.returncode == 3, first.stderr  # the rename is named
    assert json.loads(first.stdout)["sources"][0]["sessions"]["added"] == 2
    again = harkback("import", "hermes", str(home / "state.db"), "--db", db, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["sources"][0]["sessions"] == {
        "added": 0, "updated": 0, "unchanged": 2, "skipped": 2}
    for word in ("heron", "egret"):
        assert "1 of 1 matching" in harkback("search", word, "--db", db).stdout, word
