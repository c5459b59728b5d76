"""A machine's home folder with every supported agent history, for the sync tests.

Claude Code and Codex transcripts are copies of the fixtures; the Hermes ``state.db``
(schema v30) holds a visible session, a hidden one, an archived one and the
continuation of the archived one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from tests.support.hermes_db import HermesFile

FIXTURES = Path(__file__).parent.parent / "fixtures"
VISIBLE, HIDDEN, ARCHIVED, CONTINUED = "h_visible", "h_hidden", "h_archived", "h_continued"
CLAUDE_SESSION = "7f3c2a10-5b1e-4c0a-9d8e-1a2b3c4d5e6f"
CLAUDE_FILE = f"-home-mei-code-youer-server/{CLAUDE_SESSION}.jsonl"
ENV_HOMES = ("HERMES_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME")
DONE_WITH_SKIPS = 3
"""The status of a sync that reads the fixtures' transcripts: a Claude Code and a Codex line
in them are damaged (cut short), so each is named and skipped."""
DAMAGED = {"claude-code": (f".claude/projects/{CLAUDE_FILE}", 16),
           "codex": (".codex/sessions/2026/03/03/rollout-2026-03-03T09-30-00-"
                     "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl", 15)}
"""Where those damaged lines are: the file under the home folder, and the line."""


def make_home(home: Path) -> Path:
    """Fill ``home`` with ``.hermes/state.db``, ``.claude/projects`` and ``.codex/sessions``."""
    shutil.copytree(FIXTURES / "claude-code" / "projects", home / ".claude" / "projects")
    shutil.copytree(FIXTURES / "codex" / "sessions", home / ".codex" / "sessions")
    (home / ".hermes").mkdir(parents=True)
    db = HermesFile(home / ".hermes" / "state.db", "v30")
    db.session(VISIBLE, title="Pelican migration")
    db.message(VISIBLE, "user", "the pelican migration broke the crontab")
    db.message(VISIBLE, "assistant", "restore the pelican crontab from the backup")
    db.session(HIDDEN, hidden=1)
    db.message(HIDDEN, "user", "bot mode: quokka status report")
    db.session(ARCHIVED, archived=1, end_reason="compression")
    db.message(ARCHIVED, "user", "wombat burrow survey notes")
    db.session(CONTINUED, parent=ARCHIVED)
    db.message(CONTINUED, "user", "wombat survey, continued")
    db.close()
    return home


def repair(home: Path) -> None:
    """Take the damaged lines (:data:`DAMAGED`) out of the fixtures' transcripts."""
    for file, line in DAMAGED.values():
        kept = (home / file).read_text(encoding="utf-8").splitlines(keepends=True)
        (home / file).write_text("".join(kept[:line - 1] + kept[line:]), encoding="utf-8")


def source_files(home: Path) -> dict[str, tuple[str, int]]:
    """Every file under the agents' folders: its digest and mtime, by path."""
    found = {}
    for folder in (".hermes", ".claude", ".codex"):
        for path in sorted((home / folder).rglob("*")):
            if path.is_file():
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[str(path.relative_to(home))] = (digest, path.stat().st_mtime_ns)
    return found


def found_ids(db: Path, query: str, **options: Any) -> list[str]:
    """The session ids a search of the store at ``db`` recalls."""
    async def ask() -> dict[str, Any]:
        with SqliteStore.open(db, readonly=True).unwrap() as store:
            return (await Harkback(store=store).search(query, **options)).to_payload()
    payload = asyncio.run(ask())
    assert payload["success"], payload
    return [r["session_id"] for r in payload["results"]]


def claude_line(session: str, text: str, uuid: str) -> str:
    """One Claude Code user line, as the agent appends it (with its newline)."""
    return json.dumps({"type": "user", "sessionId": session, "uuid": uuid,
                       "timestamp": "2026-03-05T10:00:00Z", "cwd": "/home/mei/code/youer-server",
                       "message": {"role": "user", "content": text}}) + "\n"
