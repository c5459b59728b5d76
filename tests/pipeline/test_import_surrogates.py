"""Half a character in a transcript's JSON (``\\ud83d``: an emoji a truncation cut in two,
as Claude Code writes it) is stored as U+FFFD, as the ingest format stores it; it never
fails the import (no store can encode a lone surrogate)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.test_import_cli import harkback
from tests.support.hermes_db import HermesFile, multimodal

NOW = "2026-03-03T14:15:00.000Z"
CUT = "ran \ud83d"
"""What the agent wrote: a lone high surrogate, written by json.dumps as ``\\ud83d``."""


def _lines(path: Path, lines: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    assert "\\ud83d" in text  # escaped, as Node's JSON.stringify escapes it
    path.write_text(text, encoding="utf-8")
    return path


def _claude_code(folder: Path) -> None:
    def line(kind: str, content: object, uuid: str) -> dict[str, object]:
        return {"type": kind, "sessionId": "c1", "uuid": uuid, "timestamp": NOW,
                "message": {"role": kind, "content": content}}
    _lines(folder / "-w-app" / "c1.jsonl", [
        line("user", "the heron logs", "u1"),
        line("assistant", [{"type": "text", "text": CUT},
                           {"type": "tool_use", "id": "t1", "name": "Bash",
                            "input": {"command": f"echo {CUT}"}}], "u2")])


def _codex(folder: Path) -> None:
    def said(role: str, text: str) -> dict[str, object]:
        return {"timestamp": NOW, "type": "response_item", "payload": {
            "type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}}
    _lines(folder / "2026" / "03" / "03" /
           "rollout-2026-03-03T14-15-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
           [{"timestamp": NOW, "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
            said("user", "the heron logs"), said("assistant", CUT)])


def test_a_transcript_holding_half_a_character_is_imported(tmp_path: Path) -> None:
    """Claude Code and Codex: the import ends (it failed as an internal error), and the
    message is stored with U+FFFD in place of the half character."""
    for kind, write in (("claude-code", _claude_code), ("codex", _codex)):
        folder = tmp_path / kind
        write(folder)
        db = str(tmp_path / f"{kind}.db")
        done = harkback("import", kind, str(folder), "--db", db)
        assert done.returncode == 0, (kind, done.stderr)
        shown = json.loads(harkback("show", "c1", "--json", "--db", db).stdout)
        assert shown["messages"][-1]["content"].startswith("ran \ufffd"), kind


def test_a_hermes_row_holding_half_a_character_is_imported(tmp_path: Path) -> None:
    """Hermes keeps multimodal content and tool calls as JSON text: half a character in
    either is stored as U+FFFD, the rest of the session with it."""
    home = tmp_path / "hermes"
    home.mkdir()
    file = HermesFile(home / "state.db", "v30")
    file.session("s1")
    file.message("s1", "user", "the heron logs")
    file.message("s1", "assistant", multimodal({"type": "text", "text": CUT}))
    file.message("s1", "assistant", "calling", tool_calls=json.dumps(
        [{"id": "c", "function": {"name": "bash", "arguments": {"cmd": CUT}}}]))
    file.close()
    db = str(tmp_path / "h.db")
    done = harkback("import", "hermes", str(home / "state.db"), "--db", db)
    assert done.returncode == 0, done.stderr
    shown = json.loads(harkback("show", "s1", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == [
        "the heron logs", "ran \ufffd", "calling"]
    assert "ran \ufffd" in shown["messages"][-1]["tool_calls"][0]["arguments"]
