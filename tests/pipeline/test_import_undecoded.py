"""Bytes that are not UTF-8 in a Claude Code or Codex transcript, or in a Hermes state.db,
are never replaced silently: each place is named, the rest is read, and the status is 3."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.test_import_cli import harkback

NOW = "2026-03-03T14:15:00.000Z"
REPLACED = "not UTF-8: 2 byte(s) replaced by U+FFFD"


def _latin1_lines(path: Path, lines: list[dict[str, object]]) -> Path:
    """``lines`` as a JSON-lines file written in Latin-1 (``é`` is one byte, not UTF-8)."""
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(json.dumps(line, ensure_ascii=False).encode("latin-1") + b"\n"
                              for line in lines))
    return path


def _claude_code(folder: Path) -> Path:
    def line(kind: str, text: str, uuid: str) -> dict[str, object]:
        return {"type": kind, "sessionId": "c1", "uuid": uuid, "timestamp": NOW,
                "message": {"role": kind, "content": text}}
    return _latin1_lines(folder / "-w-app" / "c1.jsonl", [
        line("user", "the heron logs", "u1"), line("assistant", "café crème rotated", "u2")])


def _codex(folder: Path) -> Path:
    def said(role: str, text: str) -> dict[str, object]:
        return {"timestamp": NOW, "type": "response_item", "payload": {
            "type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}}
    return _latin1_lines(
        folder / "2026" / "03" / "03" /
        "rollout-2026-03-03T14-15-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
        [{"timestamp": NOW, "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
         said("user", "the heron logs"), said("assistant", "café crème rotated")])


def test_a_claude_code_or_codex_line_that_is_not_utf8_is_named_and_read(tmp_path: Path) -> None:
    """A Latin-1 line in either transcript: named ``file:line`` on stderr and in --json,
    status 3, and its message stored with U+FFFD where the bytes were."""
    for kind, write in (("claude-code", _claude_code), ("codex", _codex)):
        folder = tmp_path / kind
        path = write(folder)
        db = str(tmp_path / f"{kind}.db")
        done = harkback("import", kind, str(folder), "--db", db, "--json")
        assert done.returncode == 3, (kind, done.stderr)
        assert f"harkback: {path}:{3 if kind == 'codex' else 2}: {REPLACED}" in done.stderr
        source = json.loads(done.stdout)["sources"][0]
        assert [(s["file"], s["reason"]) for s in source["skipped_lines"]] == [
            (str(path), REPLACED)], kind
        shown = json.loads(harkback("show", "c1", "--json", "--db", db).stdout)
        assert shown["messages"][-1]["content"] == "caf\ufffd cr\ufffdme rotated", kind
