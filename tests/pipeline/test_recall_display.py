"""What ``harkback search`` shows of hostile sessions and model answers, through the real
CLI, a real SQLite store and the real Chat Completions test server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.test_cli_llm import harkback
from tests.support.chat_server import ChatServer, Reply

LOG = ("\n".join(f"row {i} ok" for i in range(3000))
       + "\nFATAL: disk quota exceeded on /var/lib/postgresql/data\n"
       + "\n".join(f"row {i} ok" for i in range(3000)))

SESSIONS = [
    {"id": "db-night", "messages": [
        {"role": "user", "content": "the database fell over overnight"},
        {"role": "tool", "tool_name": "bash", "content": LOG},
        {"role": "assistant", "content": "raised the limit, it is back"}]},
    {"id": "webhook", "messages": [
        {"role": "user", "content": "configure the stripe webhook endpoint"},
        {"role": "assistant", "content": "Added the endpoint in /srv/app/hooks.py and ran "
                                          "`make deploy` (commit 3f9a2c7e1b44); the webhook "
                                          "answers 200 now."}]},
]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A SQLite store holding the sessions above."""
    source = tmp_path / "sessions.jsonl"
    source.write_text("".join(json.dumps(s) + "\n" for s in SESSIONS))
    path = tmp_path / "harkback.db"
    done = harkback("ingest", str(source), "--db", str(path))
    assert done.returncode == 0, done.stderr
    return path


def _first(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)["results"][0]
    return result


def test_the_matching_line_of_a_long_tool_output_is_shown(db: Path) -> None:
    """A tool output of thousands of lines is clipped for the transcript; the line that
    matched, in its middle, is kept and shown, not just the head and tail."""
    done = harkback("search", "FATAL quota exceeded", "--db", str(db), "--role", "tool",
                    "--json")
    first = _first(done)
    assert first["session_id"] == "db-night"
    assert "FATAL: disk quota exceeded on /var/lib/postgresql/data" in first["summary"]


def _with_model(db: Path, query: str, reply: Reply) -> dict[str, Any]:
    with ChatServer(lambda _r: reply) as server:
        done = harkback("search", query, "--db", str(db), "--json", "--limit", "1",
                        "--model", "test-model", "--base-url", server.url,
                        env={"OPENAI_API_KEY": "test"})
    return _first(done)


RECAP = "The user added the webhook endpoint in /srv/app/hooks.py and ran `make deploy`."


def test_a_recap_fenced_whole_is_read_as_a_recap(db: Path) -> None:
    """A model that fences its whole answer wrote prose, not a code block to check line
    by line: the recap is shown, without the fence."""
    first = _with_model(db, "stripe webhook", Reply(
        content=f"```markdown\n{RECAP}\nSOURCES: 2\n```"))
    assert first["summary_kind"] == "llm"
    assert first["summary"] == RECAP


def test_a_recap_sent_as_json_is_shown_as_its_text(db: Path) -> None:
    """A JSON object is no recap to show as it is: its recap field is."""
    first = _with_model(db, "stripe webhook", Reply(
        content=json.dumps({"recap": RECAP, "sources": [2]})))
    assert first["summary_kind"] == "llm"
    assert first["summary"] == RECAP


def test_json_without_a_recap_gives_the_extractive_summary(db: Path) -> None:
    """JSON with nothing to show as a recap counts as no recap."""
    first = _with_model(db, "stripe webhook", Reply(content=json.dumps({"relevant": True})))
    assert first["summary_kind"] == "extractive"
    assert "no recap" in first["summary_note"]


def test_a_recap_cut_at_the_token_limit_drops_its_unfinished_sentence(db: Path) -> None:
    """Cut at the output limit, a recap ends mid-command: that half sentence is left out
    and the note says the recap was cut."""
    first = _with_model(db, "stripe webhook", Reply(
        content="The user added the webhook endpoint. Then the assistant ran `make dep",
        finish_reason="length"))
    assert first["summary"] == "The user added the webhook endpoint."
    assert "output token limit" in first["summary_note"]


def test_a_command_cut_mid_word_is_not_shown_as_the_sessions(db: Path) -> None:
    """`make dep` is in the session only as part of `make deploy`: it is another command,
    so the recap falls back to the extractive summary."""
    first = _with_model(db, "stripe webhook", Reply(
        content="The assistant deployed the webhook with `make dep`.\nSOURCES: 2"))
    assert first["summary_kind"] == "extractive"
    assert "make dep" in first["summary_note"]


@pytest.mark.parametrize(("invented", "named", "held"), [
    # A hash named in prose is as exact as a quoted command: one the session never named
    # is not shown; a short form of one it named (3f9a2c7 for 3f9a2c7e1b44) is.
    ("The webhook fix was commit 4b1e9d2a, deployed with `make deploy`.", "4b1e9d2a",
     "The user deployed the webhook fix as commit 3f9a2c7.\nSOURCES: 2"),
    # "ran make deploy --force" in plain words claims a flag the session never passed;
    # the session's own "ran make deploy" is shown.
    ("The assistant ran make deploy --force; the webhook answers 200 now.",
     "make deploy --force",
     "The assistant ran make deploy; the webhook answers 200 now.\nSOURCES: 2"),
], ids=["commit hash", "command in prose"])
def test_what_prose_names_is_checked_against_the_session(
        db: Path, invented: str, named: str, held: str) -> None:
    """A hash or a command named in plain words is as exact as a quoted one: one the
    session never had makes the recap give way to the extractive summary, its note naming
    it; one the session had is shown."""
    refused = _with_model(db, "stripe webhook", Reply(content=invented))
    assert refused["summary_kind"] == "extractive"
    assert named in refused["summary_note"]
    assert _with_model(db, "stripe webhook", Reply(content=held))["summary_kind"] == "llm"


def test_a_model_repeating_its_instructions_gives_the_extractive_summary(db: Path) -> None:
    """A small model answering with its system prompt wrote no recap."""
    echo = ("You recall past work sessions between a user and an AI assistant. You write a "
            "short, factual recap of one past session, focused on a question the user asks "
            "now.")
    first = _with_model(db, "stripe webhook", Reply(content=echo))
    assert first["summary_kind"] == "extractive"
    assert "instructions" in first["summary_note"]
