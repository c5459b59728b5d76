"""A one-line field (title, source, session id, tool name) holding a newline or a tab
stays on its line in human output, the characters shown as signs; a message's body keeps
its lines. Through the real command line on a real SQLite file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from harkback.stages.records import Conversation, Message, ToolCall
from tests.conftest import conversation

FORGING_ID = "root\n    matched: forged:0"
"""A session id that, printed raw, adds a "matched:" line of its own under a result."""
ROOT = conversation(FORGING_ID, ("user", "docker bridge down"),
                    ("assistant", "restart the daemon\nthen docker works"),
                    started_at=1_770_000_000.0, source="cli\nx", title="first\nsecond\tthird")
CHILD = conversation("kid\n1", ("user", "a docker question"), started_at=1_770_000_100.0,
                     parent=FORGING_ID, title="child\ntitle")
CALL = Message(session_id=FORGING_ID, position=2, role="assistant", tool_calls=(
    ToolCall(id="c1", name="bash\n[x:0] user", arguments="printf 'a\n[forged:1] user'"),))


def harkback(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding a root session and its child, their one-line fields full of
    newlines and tabs."""
    folder = tmp_path_factory.mktemp("one-line")
    root = Conversation(ROOT.session, (*ROOT.messages, CALL))
    source = folder / "sessions.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(c)) + "\n"
                              for c in (root, CHILD)), encoding="utf-8")
    path = folder / "h.db"
    done = harkback("ingest", str(source), "--db", str(path))
    assert done.returncode == 0, done.stderr
    return path


def lines_of(db: Path, *command: str) -> list[str]:
    """The human output of ``command`` on ``db``, as lines."""
    done = harkback(*command, "--db", str(db))
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_recent_keeps_each_session_on_its_two_lines(db: Path) -> None:
    """``recent``: the row and the id line of the root, the fields' breaks shown."""
    lines = lines_of(db, "recent")
    assert len(lines) == 4, lines  # header, rule, the root's row, its id and first request
    assert lines[2].endswith("first␊second␉third") and "cli␊x" in lines[2]
    assert lines[3].strip().startswith("root␊    matched: forged:0: docker bridge down")


def test_search_shows_one_matched_line_per_result(db: Path) -> None:
    """``search``: a session id with a newline forges no "matched:" line, and the table
    row stays one line."""
    lines = lines_of(db, "search", "docker")
    matched = [line for line in lines if line.lstrip().startswith("matched:")]
    assert len(matched) == 1, lines
    assert matched[0].startswith("    matched: root␊    matched: forged:0:0, ")
    row = next(line for line in lines if line.startswith(" 1  "))
    assert row.endswith("root␊    matched: forged:0  first␊second␉third"), row
    assert not any(line.startswith(("second", "x ")) for line in lines), lines


def test_show_keeps_its_header_and_each_message_s_lines(db: Path) -> None:
    """``show``: the session, child and message headers are one line each; a body and
    a tool call's arguments keep their lines, indented, so none passes for a header."""
    lines = lines_of(db, "show", FORGING_ID)
    assert lines[0].startswith("session root␊    matched: forged:0  first␊second␉third  cli␊x")
    assert lines[1].startswith("child: kid␊1  child␊title")
    assert lines[2].startswith("messages 0-2 of 3")
    headers = [line for line in lines if line.startswith("[")]
    assert [h.split("]")[0] for h in headers] == ["[root␊    matched: forged:0:0",
                                                  "[root␊    matched: forged:0:1",
                                                  "[root␊    matched: forged:0:2"]
    assert "    then docker works" in lines
    assert "    -> bash␊[x:0] user(printf 'a" in lines and "    [forged:1] user')" in lines


def test_stats_keeps_each_source_on_its_row(db: Path) -> None:
    """``stats``: a source with a newline is one row of the sources table."""
    lines = lines_of(db, "stats")
    assert lines[-2:] == ["cli                 1         1", "cli␊x               1         3"]


def test_import_and_sync_reports_keep_a_path_on_its_line(tmp_path: Path) -> None:
    """A file or folder named with a newline: the import report's first line and the sync
    table's row stay whole."""
    source = tmp_path / "we\nird.jsonl"
    source.write_text(json.dumps(conversation_to_json(CHILD)) + "\n", encoding="utf-8")
    imported = harkback("import", "jsonl", str(source), "--db", str(tmp_path / "h.db"))
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.splitlines()[0] == f"jsonl {tmp_path}/we␊ird.jsonl"
    projects = tmp_path / "cc\nx" / "projects"
    projects.mkdir(parents=True)
    away = ("HERMES_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "HARKBACK_DB")
    synced = subprocess.run(  # the other sources looked for in an empty home
        [sys.executable, "-m", "harkback.pipeline.cli", "sync", "--claude-code", str(projects),
         "--db", str(tmp_path / "h.db")], capture_output=True, text=True, timeout=120,
        check=False, env={**{k: v for k, v in os.environ.items() if k not in away},
                          "HOME": str(tmp_path)})
    assert synced.returncode == 0, synced.stderr
    row = next(line for line in synced.stdout.splitlines() if line.startswith("claude-code"))
    assert row.endswith(f"{tmp_path}/cc␊x/projects"), synced.stdout


def test_upkeep_commands_keep_the_store_s_name_on_its_line(tmp_path: Path) -> None:
    """A store whose file name holds a newline: stats, migrate, optimize and redact each
    name it on one line (stdout and stderr alike), the newline shown as its sign."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(conversation_to_json(ROOT)) + "\n", encoding="utf-8")
    db = tmp_path / "first\nharkback: forged.db"
    assert harkback("ingest", str(source), "--db", str(db)).returncode == 0
    for command in ("stats", "migrate", "optimize", "redact"):
        done = harkback(command, "--db", str(db))
        assert done.returncode == 0, done.stderr
        lines = (done.stdout + done.stderr).splitlines()
        assert not any(line.startswith("harkback: forged") for line in lines), (command, lines)
        assert any("first␊harkback: forged.db" in line for line in lines), (command, lines)
