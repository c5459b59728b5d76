"""A Claude Code resume's copy of the earlier session is compared with what the store holds
of it: left out when the same, and never lost when not. Run as ``harkback sync`` commands
on a SQLite file in an empty home; the store, read back through ``show``, is the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.pipeline.test_copied_sessions_carry_on import shown
from tests.pipeline.test_shared_session_ids import sync
from tests.pipeline.test_transcript_replays import (
    EARLY,
    LATER,
    PARENT,
    PROJECT,
    RESUMED,
    _line,
    _parent_lines,
)


def write(home: Path, session: str, lines: list[dict[str, Any]]) -> Path:
    """A Claude Code transcript of ``session`` in ``home``'s projects folder."""
    path = home / ".claude" / "projects" / PROJECT / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def resumed(copied: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``claude --resume PARENT`` (a version that starts a new file) having copied
    ``copied``, then one request of its own."""
    return [{"type": "summary", "summary": "Checkout total rounding drift", "leafUuid": "a2"},
            *copied, _line("user", "u3", "a2", RESUMED, "2026-03-03T10:00:00.000Z", LATER)]


def test_a_resume_copying_other_messages_than_the_store_keeps_them(tmp_path: Path) -> None:
    """The earlier session stored; the resume's copy says another thing in its first reply
    (the earlier file changed since it was stored): those lines were left out unseen, the
    other reply lost and the sync said nothing (exit 0). Now the resumed session is stored
    whole, as read, and named (exit 3); the earlier session is as it was."""
    write(tmp_path, PARENT, _parent_lines())
    assert sync(tmp_path, kind="claude-code")[0] == 0
    before = shown(tmp_path, PARENT)
    copied = _parent_lines()
    copied[1] = _line("assistant", "a1", "u1", PARENT, "2026-03-02T09:00:09.000Z",
                      "Round the discount with banker's rounding instead.")
    write(tmp_path, RESUMED, resumed(copied))
    status, _, said = sync(tmp_path, kind="claude-code")
    assert status == 3
    assert "copied lines differ" in said
    assert shown(tmp_path, PARENT) == before
    parent, texts = shown(tmp_path, RESUMED)
    assert parent is None
    assert texts == [EARLY, "Round the discount with banker's rounding instead.",
                     *before[1][2:], LATER]
    assert sync(tmp_path, kind="claude-code")[0] == 0


def test_a_resume_copying_messages_the_store_lacks_keeps_them(tmp_path: Path) -> None:
    """The earlier session stored when it held 2 of its 4 messages, its file deleted since
    (Claude Code removes old ones): the resume's copy holds all 4, and its last 2 were left
    out unseen, lost. Now they open the resumed session, still its continuation; exit 0."""
    path = write(tmp_path, PARENT, _parent_lines()[:2])
    assert sync(tmp_path, kind="claude-code")[0] == 0
    path.unlink()
    write(tmp_path, RESUMED, resumed(_parent_lines()))
    status, _, said = sync(tmp_path, kind="claude-code")
    assert (status, said) == (0, "")
    earlier = [line["message"]["content"] for line in _parent_lines()[2:]]
    texts = [e if isinstance(e, str) else e[0]["text"] for e in earlier]
    assert shown(tmp_path, RESUMED) == (PARENT, [*texts, LATER])
    assert len(shown(tmp_path, PARENT)[1]) == 2
