"""A question naming a project finds that project's sessions (the title index holds each
session's project name, :mod:`~harkback.stages.match.titles`): the CLI over a real SQLite
file of developer sessions, each in its project folder, ingested as JSON lines."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.pipeline.test_import_cli import harkback

FIXTURE = Path(__file__).parents[1] / "fixtures" / "project-sessions.json"
"""Sessions of a developer's projects (billing, gateway, lumen-api, mobile-app, web), their
ages in days, messages as [role, text]."""


def _lines() -> str:
    """The fixture's sessions as JSON lines, dated back from now, a minute a message."""
    now = time.time()
    out = []
    for s in json.loads(FIXTURE.read_text(encoding="utf-8"))["sessions"]:
        start = now - s.pop("age_days") * 86400
        messages = [{"role": role, "content": text, "timestamp": start + 60 * i,
                     **({"tool_name": "bash"} if role == "tool" else {})}
                    for i, (role, text) in enumerate(s.pop("messages"))]
        out.append(json.dumps({**s, "started_at": start,
                               "ended_at": start + 60 * len(messages), "messages": messages},
                              ensure_ascii=False) + "\n")
    return "".join(out)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sessions above in a SQLite file, ingested by the CLI."""
    folder = tmp_path_factory.mktemp("projects")
    lines = folder / "sessions.jsonl"
    lines.write_text(_lines(), encoding="utf-8")
    made = harkback("ingest", str(lines), "--db", str(folder / "h.db"), "--create")
    assert made.returncode == 0, made.stderr
    return folder / "h.db"


def _first(db: Path, question: str) -> str:
    """The session ``search`` puts first for ``question``."""
    found = harkback("search", question, "--db", str(db), "--json")
    assert found.returncode == 0, found.stderr
    return str(json.loads(found.stdout)["results"][0]["session_id"])


@pytest.mark.parametrize(("question", "answer"), [
    ("mobile-app", "apns"),
    ("the session in the billing project about refunds", "billing-refunds"),
    ("what did we change in the gateway project?", "nginx-timeout"),
])
def test_a_question_naming_a_project_finds_its_session_first(
        db: Path, question: str, answer: str) -> None:
    """The project's name finds its session (only a session saying "app" was found for
    mobile-app), and "the NAME project" is read as that project, not a session titled "New
    project scaffolding" (which came first for both questions)."""
    assert _first(db, question) == answer


@pytest.mark.parametrize(("question", "answer"), [
    ("how did we fix CORS in the web app", "api-cors"),
    ("rate limiting for the API", "api-ratelimit"),
    ("where do we keep the JWT in the web client", "auth-tokens"),
])
def test_a_project_name_does_not_outweigh_the_answer_elsewhere(
        db: Path, question: str, answer: str) -> None:
    """A word naming a project many sessions share ("web", "api") does not put them above
    the session answering the question's other words."""
    assert _first(db, question) == answer
