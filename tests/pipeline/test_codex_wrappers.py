"""A Codex session sent from the editor extension, imported and listed as a user meets it.

The extension sends a request under the context it adds (``# Context from my IDE setup:``,
the active file, the open tabs, then ``## My request for Codex:``), and a stopped turn leaves
a ``<turn_aborted>`` notice as a user message: ``recent`` previewed such a session by its
tabs, and the notice was stored as if the user had typed it.
"""

from __future__ import annotations

import json
from pathlib import Path

from harkback.adapters.sources.codex import parse_rollout_lines
from tests.pipeline.test_slash_commands import imported_preview

SESSION = "019aee00-bbbb-7ccc-8ddd-9eeeeffff111"
REQUEST = "the image hover animation in the gallery flickers on Safari, fix it"
WRAPPED = ("# Context from my IDE setup:\n\n## Active file: src/components/Gallery.tsx\n\n"
           "## Open tabs:\n- Gallery.tsx: src/components/Gallery.tsx\n\n"
           f"## My request for Codex:\n{REQUEST}")


def _item(when: str, role: str, text: str) -> dict[str, object]:
    part = "input_text" if role == "user" else "output_text"
    return {"timestamp": when, "type": "response_item", "payload": {
        "type": "message", "role": role, "content": [{"type": part, "text": text}]}}


LINES: list[dict[str, object]] = [
    {"timestamp": "2026-12-05T11:00:00.000Z", "type": "session_meta", "payload": {
        "id": SESSION, "cwd": "/home/me/code/site", "originator": "codex_vscode"}},
    _item("2026-12-05T11:00:00.000Z", "user", WRAPPED),
    _item("2026-12-05T11:00:30.000Z", "assistant", "Added backface-visibility: hidden."),
    _item("2026-12-05T11:01:00.000Z", "user",
          "<turn_aborted>\n  <turn_id>2</turn_id>\n  <reason>interrupted</reason>\n"
          "</turn_aborted>"),
]


def test_the_request_comes_first_and_the_aborted_notice_is_left_out() -> None:
    """The context stays searchable after the request; the notice is only counted."""
    parsed = parse_rollout_lines("x", LINES)
    contents = [m.content for m in parsed.conversations[0].messages]
    assert contents[0].startswith(f"{REQUEST}\n\n# Context from my IDE setup:")
    assert "## Active file: src/components/Gallery.tsx" in contents[0]
    assert "## My request for Codex:" not in contents[0]
    assert len(contents) == 2 and "<turn_aborted>" not in contents[1]
    assert dict(parsed.left_out)["turn aborted notice"] == 1


def test_recent_previews_the_request_not_the_editor_context(tmp_path: Path) -> None:
    """Imported through the CLI, ``recent --json`` previews what the user asked."""
    folder = tmp_path / "sessions" / "2026" / "12" / "05"
    folder.mkdir(parents=True)
    (folder / f"rollout-2026-12-05T11-00-00-{SESSION}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in LINES), encoding="utf-8")
    preview = imported_preview("codex", tmp_path / "sessions", tmp_path / "h.db")
    assert preview.startswith(REQUEST), preview
