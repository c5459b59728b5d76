"""A week of a user's history, synced from a home folder and asked about as a person asks.

The transcripts are dated relative to the test's clock (a session of yesterday is
yesterday's), so what a user meets in the first week of use is met here: listings that
say which model worked, a time question answered with the user's work rather than the
scheduled jobs of that time.
"""

from __future__ import annotations

import calendar
import json
import time
from pathlib import Path
from typing import Any

import pytest

from harkback.stages.when import latest_weekday
from tests.pipeline.test_cli import run
from tests.support.hermes_db import HermesFile

DAY = 86_400.0
MODEL = "claude-sonnet-4-5-20250929"


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(epoch))


def claude_session(home: Path, session_id: str, start: float, *turns: tuple[str, str]) -> None:
    """A Claude Code transcript of ``turns`` (role, text) in the ``infra`` project."""
    folder = home / ".claude" / "projects" / "-home-ana-code-infra"
    folder.mkdir(parents=True, exist_ok=True)
    lines, parent = [], None
    for n, (role, text) in enumerate(turns):
        uuid = f"{session_id}-{n}"
        message: dict[str, Any] = (
            {"role": "user", "content": text} if role == "user" else
            {"model": MODEL, "id": f"msg_{n}", "type": "message", "role": "assistant",
             "content": [{"type": "text", "text": text}]})
        lines.append({"parentUuid": parent, "isSidechain": False, "type": role,
                      "cwd": "/home/ana/code/infra", "sessionId": session_id, "uuid": uuid,
                      "timestamp": _iso(start + 20 * n), "message": message})
        parent = uuid
    (folder / f"{session_id}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def cron_sessions(home: Path, starts: list[float]) -> None:
    """Hermes sessions of its scheduler (source ``cron``), one at each of ``starts``."""
    (home / ".hermes").mkdir(parents=True, exist_ok=True)
    db = HermesFile(home / ".hermes" / "state.db", "v30")
    for n, start in enumerate(starts):
        db.session(f"cron_{n}", source="cron", started_at=start)
        db.message(f"cron_{n}", "user", "nightly check: disk usage, backup status",
                   timestamp=start + 1)
        db.message(f"cron_{n}", "assistant", "disk 61% used; backup exited 0",
                   timestamp=start + 5)
    db.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home folder whose Claude Code history holds two sessions of three and four days
    ago (the second one yesterday's evening as well), and a scheduled job every night."""
    home = tmp_path / "home"
    now = time.time()
    claude_session(home, "net-fix", now - 3 * DAY,
                   ("user", "the api container cannot reach the db after the recreate"),
                   ("assistant", "added networks: [default, backend] to api in compose"))
    claude_session(home, "backup", now - 4 * DAY,
                   ("user", "write a nightly backup script for postgres"),
                   ("assistant", "wrote ~/bin/pg-nightly-backup.sh"))
    cron_sessions(home, [now - n * DAY - 600 for n in range(1, 8)])
    return home


def cli(home: Path, db: Path, *args: str) -> dict[str, Any]:
    """``harkback ARGS --json --db DB`` with ``HOME`` at ``home``: its JSON payload."""
    done = run(*args, "--json", db=db, env={
        "HOME": str(home), "TZ": "UTC", "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "",
        "HERMES_HOME": ""})
    assert done.returncode == 0, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


def test_listings_say_which_model_worked(home: Path, tmp_path: Path) -> None:
    """``recent`` and a question naming only a time list each session's model, as a
    search result does."""
    db = tmp_path / "h.db"
    cli(home, db, "sync")
    found = cli(home, db, "search", "network container", "--summarizer", "none")
    listed = cli(home, db, "recent", "--source", "claude-code")
    asked = cli(home, db, "search", "what did I do 3 days ago?", "--source", "claude-code")
    assert [r["model"] for r in found["results"]] == [MODEL]
    assert [(r["session_id"], r["model"]) for r in listed["results"]] == [
        ("net-fix", MODEL), ("backup", MODEL)]
    assert [(r["session_id"], r["model"]) for r in asked["results"]] == [("net-fix", MODEL)]


def test_a_time_question_lists_the_users_work_before_scheduled_jobs(
        home: Path, tmp_path: Path) -> None:
    """"What did I do last week?" answers with the sessions the user worked in; the
    scheduler's sessions of those days follow them (a search counts them half), and a
    listing asked for ``cron`` alone still lists them."""
    db = tmp_path / "h.db"
    cli(home, db, "sync")
    asked = cli(home, db, "search", "what did I do in the past week?")
    roomy = cli(home, db, "search", "what did I do in the past week?", "--limit", "4")
    cron = cli(home, db, "search", "what did I do in the past week?", "--source", "cron")
    assert [r["session_id"] for r in asked["results"]] == ["net-fix", "backup", "cron_0"]
    assert [r["session_id"] for r in roomy["results"]] == [
        "net-fix", "backup", "cron_0", "cron_1"]
    assert [r["session_id"] for r in cron["results"]] == ["cron_0", "cron_1", "cron_2"]


def test_a_day_named_by_its_weekday_is_that_day(home: Path, tmp_path: Path) -> None:
    """"What did I do on Tuesday?" lists the sessions of the latest such day before today,
    as "last Tuesday" does, rather than searching for the word "tuesday"."""
    db = tmp_path / "h.db"
    cli(home, db, "sync")
    day = time.strftime("%A", time.gmtime(time.time() - 3 * DAY))
    asked = cli(home, db, "search", f"what did I do on {day}?", "--source", "claude-code")
    last = cli(home, db, "search", f"what did I do last {day}?", "--source", "claude-code")
    assert [r["session_id"] for r in asked["results"]] == ["net-fix"]
    assert asked["window"] == last["window"]


def codex_session(home: Path, session_id: str, start: float, ask: str, command: str,
                  output: str, answer: str) -> None:
    """A Codex rollout: a request, one shell command and its output, an answer."""
    day = time.strftime("%Y/%m/%d", time.gmtime(start))
    folder = home / ".codex" / "sessions" / day
    folder.mkdir(parents=True, exist_ok=True)
    call = {"command": ["bash", "-lc", command]}
    items: list[dict[str, Any]] = [
        {"type": "session_meta", "payload": {"id": session_id, "timestamp": _iso(start),
                                              "cwd": "/home/ana/code/webshop"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                               "content": [{"type": "input_text", "text": ask}]}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                               "arguments": json.dumps(call), "call_id": "c1"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                               "output": json.dumps({"output": output})}},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": answer}]}}]
    lines = [{"timestamp": _iso(start + n), **item} for n, item in enumerate(items)]
    (folder / f"rollout-{session_id}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_an_error_seen_only_in_a_commands_output_is_found(home: Path, tmp_path: Path) -> None:
    """The exact error a user copies from a command's output finds its session, with a
    note that it matched in tool output (searched when user and assistant messages hold
    nothing), rather than "No matching sessions found."; a word found nowhere is still
    no result, and ``--role`` given keeps to the roles it names."""
    codex_session(home, "webhook", time.time() - DAY, "stripe webhooks fail in staging",
                  "kubectl logs deploy/shop-api | grep -i stripe",
                  "stripe.error.SignatureVerificationError: No signatures found",
                  "The handler must verify the raw request body.")
    db = tmp_path / "h.db"
    cli(home, db, "sync")
    found = cli(home, db, "search", "SignatureVerificationError", "--summarizer", "none")
    nowhere = cli(home, db, "search", "kafkaesque", "--summarizer", "none")
    kept = cli(home, db, "search", "SignatureVerificationError", "--summarizer", "none",
               "--role", "user")
    assert [r["session_id"] for r in found["results"]] == ["webhook"]
    assert any("tool output" in note for note in found["notes"])
    assert nowhere["results"] == [] and kept["results"] == []


def test_since_and_until_read_a_weekday(home: Path, tmp_path: Path) -> None:
    """``--since tuesday`` is the start of the latest Tuesday before today, ``--until
    tuesday`` its end (as ``yesterday`` reads), so bounds take the words a question does."""
    db = tmp_path / "h.db"
    cli(home, db, "sync")
    day = time.strftime("%A", time.gmtime(time.time() - 3 * DAY)).lower()
    since = cli(home, db, "recent", "--source", "claude-code", "--since", day)
    until = cli(home, db, "recent", "--source", "claude-code", "--until", f"last {day}")
    assert [r["session_id"] for r in since["results"]] == ["net-fix"]
    assert [r["session_id"] for r in until["results"]] == ["net-fix", "backup"]


def test_fix_frames_a_question_and_the_rare_word_decides(home: Path, tmp_path: Path) -> None:
    """"How did I fix the 504?" asks about the 504: yesterday's session that says "fix"
    three times, and not 504, no longer comes before the one of last week that holds it."""
    claude_session(home, "lint", time.time() - DAY,
                   ("user", "fix the lint errors in the cart module"),
                   ("assistant", "fixed them; the fix for E501 was wrapping two lines"),
                   ("user", "also fix the import order"))
    claude_session(home, "gateway", time.time() - 9 * DAY,
                   ("user", "checkout shows 504 Gateway Timeout"),
                   ("assistant", "raised proxy_read_timeout to 120s in deploy/nginx/shop.conf"))
    db = tmp_path / "h.db"
    cli(home, db, "sync")
    asked = cli(home, db, "search", "how did I fix the 504?", "--summarizer", "none")
    assert asked["results"][0]["session_id"] == "gateway"


def test_a_weekday_beside_a_topic_is_searched_for(home: Path, tmp_path: Path) -> None:
    """"Which job runs on Monday?" asks about a job's day of the week: the session that
    says so comes first, not last Monday's session of another job lifted for its day
    (a question naming only the day still lists that day)."""
    now = time.time()
    claude_session(home, "cleanup", now - 16 * DAY,
                   ("user", "set up the cleanup job for old artifacts"),
                   ("assistant", "the cleanup job runs on monday at 03:00 via a systemd timer"))
    monday = latest_weekday("monday", now)
    claude_session(home, "ci", calendar.timegm(monday.timetuple()) + 12 * 3600,
                   ("user", "the CI job keeps failing"),
                   ("assistant", "the job runs out of memory; raised the runner size"))
    db = tmp_path / "h.db"
    cli(home, db, "sync")
    asked = cli(home, db, "search", "which job runs on monday?", "--summarizer", "none")
    listed = cli(home, db, "search", "what did I do on monday?", "--source", "claude-code")
    assert [r["session_id"] for r in asked["results"]][:2] == ["cleanup", "ci"]
    assert "ci" in [r["session_id"] for r in listed["results"]] and listed["window"]
