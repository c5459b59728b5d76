"""A Claude Code ``summary`` line in one file naming a message of another file titles that
file's session, through ``harkback import claude-code``, whichever file is read first and
across later imports (anthropics/claude-code#2597: a resumed session's file opens with
summaries of the conversations it continued).

File A holds a conversation (a1 ... a2); file B, a later session of the same project,
opens with ``{"type": "summary", "leafUuid": "a2", ...}`` and goes on with its own turns.
Each test runs on a SQLite file and on a PostgreSQL database (the marks live in the store).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harkback.pipeline.wiring import open_store
from harkback.stages.stage import as_result
from tests.support.new_stores import store_locations

PROJECT = "-home-mei-code-kiln"
FIRST, SECOND = "1a1a1a1a-0000-4000-8000-000000000001", "2b2b2b2b-0000-4000-8000-000000000002"
TITLE = "Kiln temperature log parser"
THIRD = "3c3c3c3c-0000-4000-8000-000000000003"


db = store_locations("sqlite", "postgres")
"""A new store: a SQLite file, or an empty database on the test server."""


def _line(kind: str, uuid: str, parent: str | None, session: str, text: str) -> dict[str, Any]:
    """One ``user`` or ``assistant`` line as Claude Code writes it."""
    message: dict[str, Any] = {"role": "user", "content": text} if kind == "user" else {
        "id": f"msg_{uuid}", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}]}
    return {"parentUuid": parent, "isSidechain": False, "cwd": "/home/mei/code/kiln",
            "sessionId": session, "type": kind, "message": message, "uuid": uuid,
            "timestamp": "2026-03-02T09:00:00.000Z"}


def _conversation(session: str, prefix: str, after: str | None = None) -> list[dict[str, Any]]:
    return [_line("user", f"{prefix}1", after, session, f"{prefix}: parse the kiln log"),
            _line("assistant", f"{prefix}2", f"{prefix}1", session, f"{prefix}: done")]


def _summary(leaf: str, text: str = TITLE) -> dict[str, Any]:
    return {"type": "summary", "summary": text, "leafUuid": leaf}


def _write(folder: Path, session: str, lines: list[dict[str, Any]], mtime: int) -> None:
    path = folder / PROJECT / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    os.utime(path, ns=(mtime, mtime))  # "latest" is the file written last


def _import(folder: Path, db: str) -> dict[str, Any]:
    """``harkback import claude-code FOLDER --json``'s one source report."""
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "import",
                           "claude-code", str(folder), "--db", db, "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)["sources"]
    assert report["success"], report
    found: dict[str, Any] = report
    return found


def _titles(db: str) -> dict[str, str]:
    """The title of each of the tests' sessions the store holds."""
    store = open_store(db, readonly=True).unwrap()
    try:
        found = as_result(asyncio.run(store.sessions([FIRST, SECOND, THIRD]).awaitable())
                          ).unwrap()
    finally:
        store.close()
    return {session.id: session.title for session in found}


@pytest.mark.parametrize("order", ["A first", "B first"])
def test_a_summary_in_another_file_titles_the_session_in_one_import(
        tmp_path: Path, db: str, order: str) -> None:
    """Both files in one import, A's name listed before B's or after it."""
    a, b = (FIRST, SECOND) if order == "A first" else (SECOND, FIRST)
    _write(tmp_path / "p", a, _conversation(a, "a"), 10**18)
    _write(tmp_path / "p", b, [_summary("a2"), *_conversation(b, "b")], 2 * 10**18)
    _import(tmp_path / "p", db)
    assert _titles(db) == {a: TITLE, b: ""}


def test_a_new_file_titles_an_unchanged_one_and_later_imports_keep_it(
        tmp_path: Path, db: str) -> None:
    """B arrives after A was imported (A unchanged: read again to take its title); then A
    grows while B stays as it was: A's title stays, and an import with nothing new
    changes nothing."""
    folder = tmp_path / "p"
    _write(folder, FIRST, _conversation(FIRST, "a"), 10**18)
    _import(folder, db)
    assert _titles(db) == {FIRST: ""}
    _write(folder, SECOND, [_summary("a2"), *_conversation(SECOND, "b")], 2 * 10**18)
    second = _import(folder, db)
    assert _titles(db) == {FIRST: TITLE, SECOND: ""}
    assert second["sessions"] == {"added": 1, "updated": 1, "unchanged": 0, "skipped": 0}
    _write(folder, FIRST, [*_conversation(FIRST, "a"), *_conversation(FIRST, "c", "a2")],
           3 * 10**18)
    _import(folder, db)
    assert _titles(db) == {FIRST: TITLE, SECOND: ""}
    again = _import(folder, db)
    assert again["sessions"] == {"added": 0, "updated": 0, "unchanged": 2, "skipped": 2}


def test_a_conversation_ending_in_a_system_line_is_titled_by_a_later_file(
        tmp_path: Path, db: str) -> None:
    """Claude Code ends a turn with lines that are no message (``system``: the turn's
    duration; ``progress`` of a hook) following its last message: that message is still
    the end of the conversation a new file's summary names, with A unchanged."""
    folder = tmp_path / "p"
    ending = [{"type": "progress", "uuid": "p1", "parentUuid": "a2", "sessionId": FIRST},
              {"type": "system", "subtype": "turn_duration", "uuid": "s1",
               "parentUuid": "p1", "sessionId": FIRST}]
    _write(folder, FIRST, [*_conversation(FIRST, "a"), *ending], 10**18)
    _import(folder, db)
    _write(folder, SECOND, [_summary("a2"), *_conversation(SECOND, "b")], 2 * 10**18)
    _import(folder, db)
    assert _titles(db) == {FIRST: TITLE, SECOND: ""}


def test_the_latest_summary_wins_across_files(tmp_path: Path, db: str) -> None:
    """A THIRD file written later with another summary of a2 retitles A, though A went on
    after a2 since (a2 is no longer the end of A's conversation)."""
    folder = tmp_path / "p"
    _write(folder, FIRST, _conversation(FIRST, "a"), 10**18)
    _write(folder, SECOND, [_summary("a2"), *_conversation(SECOND, "b")], 2 * 10**18)
    _import(folder, db)
    _write(folder, FIRST, [*_conversation(FIRST, "a"), *_conversation(FIRST, "c", "a2")],
           2 * 10**18 + 1)
    _import(folder, db)
    _write(folder, THIRD, [_summary("a2", "Kiln log parser, Fahrenheit too"),
                           *_conversation(THIRD, "t")], 3 * 10**18)
    _import(folder, db)
    assert _titles(db)[FIRST] == "Kiln log parser, Fahrenheit too"


@pytest.mark.parametrize("own", [
    {"type": "custom-title", "customTitle": "kiln (renamed)", "sessionId": FIRST},
    {"type": "ai-title", "aiTitle": "kiln (Claude's title)", "sessionId": FIRST},
    _summary("a2", "kiln (its own summary)")])
def test_a_title_of_its_own_wins_over_another_files_summary(
        tmp_path: Path, db: str, own: dict[str, Any]) -> None:
    """B sums up A's conversation and C's: A keeps the title its own lines give it, C
    (naming itself nothing) takes B's, in one import and when B comes later."""
    mine = own.get("customTitle") or own.get("aiTitle") or own.get("summary")
    folder = tmp_path / "p"
    _write(folder, FIRST, [*_conversation(FIRST, "a"), own], 10**18)
    _write(folder, THIRD, _conversation(THIRD, "c"), 10**18)
    _import(folder, db)
    _write(folder, SECOND, [_summary("a2"), _summary("c2"), *_conversation(SECOND, "b")],
           2 * 10**18)
    _import(folder, db)
    _import(folder, str(tmp_path / "once.db"))
    for store in (db, str(tmp_path / "once.db")):
        assert _titles(store) == {FIRST: mine, SECOND: "", THIRD: TITLE}


def test_a_sync_titles_the_session_a_new_file_sums_up(tmp_path: Path, db: str) -> None:
    """``harkback sync`` reads the folder as ``import`` does: B arriving later titles A."""
    folder = tmp_path / "p"
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    for name in ("HERMES_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        env.pop(name, None)

    def sync() -> None:
        done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "sync",
                               "--claude-code", str(folder), "--db", db],
                              capture_output=True, text=True, timeout=120, check=False,
                              env=env)
        assert done.returncode == 0, done.stdout + done.stderr

    _write(folder, FIRST, _conversation(FIRST, "a"), 10**18)
    sync()
    _write(folder, SECOND, [_summary("a2"), *_conversation(SECOND, "b")], 2 * 10**18)
    sync()
    assert _titles(db) == {FIRST: TITLE, SECOND: ""}
