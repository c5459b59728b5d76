"""A Claude Code session sent from an editor extension, imported and listed as a user meets
it: the extension puts ``<ide_opened_file>The user opened the file ... in the IDE. This may
or may not be related to the current task.</ide_opened_file>`` before the request, and
``recent`` previewed the session by that notice."""

from __future__ import annotations

import json
from pathlib import Path

from harkback.adapters.sources.claude_code import parse_lines
from tests.pipeline.test_slash_commands import imported_preview

SESSION = "1bcc230c-2d2b-4e94-ba1f-6dfcc51537ef"
NOTICE = ("<ide_opened_file>The user opened the file /home/me/code/web/app/cache.py in the "
          "IDE. This may or may not be related to the current task.</ide_opened_file>")
REQUEST = "the redis cache keys never expire, memory keeps growing"


def _lines(*blocks: str) -> list[dict[str, object]]:
    return [{"type": "user", "uuid": "u1", "sessionId": SESSION, "cwd": "/home/me/code/web",
             "timestamp": "2026-12-05T10:00:00.000Z", "message": {
                 "role": "user", "content": [{"type": "text", "text": b} for b in blocks]}}]


def test_the_request_comes_before_the_editor_s_notice_which_stays() -> None:
    """As two text blocks or as one, the request leads and the file's name stays."""
    for lines in (_lines(NOTICE, REQUEST), _lines(f"{NOTICE}\n{REQUEST}")):
        first = parse_lines(SESSION, lines, parent=None, project=True).conversations[0]
        assert first.messages[0].content == (
            f"{REQUEST}\n\n{NOTICE}\n\n[project: /home/me/code/web]")


def test_recent_previews_the_request_not_the_notice(tmp_path: Path) -> None:
    """Imported through the CLI, ``recent --json`` previews what the user asked."""
    folder = tmp_path / "projects" / "-home-me-code-web"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in _lines(NOTICE, REQUEST)), encoding="utf-8")
    preview = imported_preview("claude-code", tmp_path / "projects", tmp_path / "h.db")
    assert preview.startswith(REQUEST), preview
