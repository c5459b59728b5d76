"""Secrets at the command line: kept out at ingest and import, taken out by ``redact``."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation
from tests.pipeline.test_cli import run
from tests.support.chat_server import ChatServer

AWS = "AKIAIOSFODNN7EXAMPLE"
DSN = "postgres://app:hunter2@db.internal:5432/prod"


def _sessions(path: Path) -> Path:
    chats = [conversation("s1", ("user", f"deploy with {AWS} and {DSN}"),
                          ("assistant", "done, rotate the kiwi key"),
                          title=f"deploy {AWS}", started_at=1_770_000_000.0)]
    path.write_text("".join(json.dumps(conversation_to_json(c)) + "\n" for c in chats),
                    encoding="utf-8")
    return path


def test_ingest_stores_placeholders_and_reports_the_counts(tmp_path: Path) -> None:
    """Nothing of the secrets reaches the file; the report counts them by kind."""
    db = tmp_path / "h.db"
    done = run("ingest", str(_sessions(tmp_path / "in.jsonl")), db=db)
    assert done.returncode == 0, done.stderr
    assert "3 secret(s) redacted (aws-access-key 2, password 1)" in done.stdout
    shown = run("show", "s1", db=db)
    assert "deploy with [secret:aws-access-key] and postgres://app:[secret:password]@db" in (
        shown.stdout)
    assert b"hunter2" not in db.read_bytes() and AWS.encode() not in db.read_bytes()


def test_keep_secrets_stores_them_and_redact_takes_them_out(tmp_path: Path) -> None:
    """--keep-secrets stores the text as it is; ``redact`` later removes it from the file,
    its index and its titles; a dry run counts without writing."""
    db = tmp_path / "h.db"
    assert run("ingest", str(_sessions(tmp_path / "in.jsonl")), "--keep-secrets",
               db=db).returncode == 0
    assert AWS in run("search", AWS, "--summarizer", "none", db=db).stdout
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    dry = run("redact", "--dry-run", "--json", db=db)
    assert dry.returncode == 0, dry.stderr
    counts = json.loads(dry.stdout)
    assert counts["secrets_redacted"] == {"aws-access-key": 2, "password": 1}
    assert (counts["messages"], counts["titles"], counts["dry_run"]) == (1, 1, True)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    done = run("redact", db=db)
    assert done.returncode == 0, done.stderr
    assert "3 secret(s) redacted" in done.stdout
    assert run("search", AWS, "--summarizer", "none", db=db).stdout.count(AWS) == 0
    assert b"hunter2" not in db.read_bytes() and AWS.encode() not in db.read_bytes()
    again = json.loads(run("redact", "--json", db=db).stdout)
    assert (again["secrets_redacted"], again["messages"]) == ({}, 0)


def test_a_dry_run_says_it_found_the_secrets_not_that_it_redacted_them(tmp_path: Path
                                                                       ) -> None:
    """The dry run's line said "3 secret(s) redacted" over a file it left as it was."""
    db = tmp_path / "h.db"
    assert run("ingest", str(_sessions(tmp_path / "in.jsonl")), "--keep-secrets",
               db=db).returncode == 0
    dry = run("redact", "--dry-run", db=db)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"{db}: 3 secret(s) found (aws-access-key 2, password 1); "
                                 "would change 1 message(s)")


def test_import_redacts_and_reports_per_source(tmp_path: Path) -> None:
    """``import jsonl`` redacts as ingest does, and counts only sessions it stored."""
    db = tmp_path / "h.db"
    source = _sessions(tmp_path / "in.jsonl")
    first = json.loads(run("import", "jsonl", str(source), "--json", db=db).stdout)
    assert first["sources"][0]["secrets_redacted"] == {"aws-access-key": 2, "password": 1}
    again = json.loads(run("import", "jsonl", str(source), "--full", "--json", db=db).stdout)
    assert again["sources"][0]["secrets_redacted"] == {}
    assert again["sources"][0]["sessions"]["skipped"] == 1


def test_redact_of_a_missing_foreign_or_read_only_file_fails_in_one_line(tmp_path: Path
                                                                       ) -> None:
    """No database, another program's SQLite file, a file that is no database, a file
    without write permission: one line each, nothing written."""
    missing = run("redact", db=tmp_path / "none.db")
    assert missing.returncode == 1 and "no harkback database" in missing.stderr
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.execute("INSERT INTO notes VALUES ('password=hunter2')")
    connection.close()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all" * 100)
    kept = tmp_path / "kept.db"
    assert run("ingest", str(_sessions(tmp_path / "in.jsonl")), "--keep-secrets",
               db=kept).returncode == 0
    kept.chmod(0o444)
    for path, why in ((other, "not a harkback database"), (garbage, "not a"),
                      (kept, "read-only")):
        before = hashlib.sha256(path.read_bytes()).hexdigest()
        done = run("redact", db=path)
        assert done.returncode == 1 and why in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_the_config_file_can_turn_redaction_off_and_a_flag_wins(tmp_path: Path) -> None:
    """``redact = false`` in the config file keeps secrets at ingest and at sync, as
    ``--keep-secrets`` does; the file's value is where ``config`` says it came from."""
    settings = tmp_path / "config.toml"
    settings.write_text("redact = false\n", encoding="utf-8")
    env = {"HARKBACK_CONFIG": str(settings)}
    assert json.loads(run("config", "--json", env=env).stdout)["settings"]["redact"] == {
        "value": False, "from": f"file {settings} line 1"}
    db = tmp_path / "h.db"
    assert run("ingest", str(_sessions(tmp_path / "in.jsonl")), db=db, env=env).returncode == 0
    assert AWS.encode() in db.read_bytes()
    projects = tmp_path / "home" / ".claude" / "projects" / "-w-app"
    projects.mkdir(parents=True)
    (projects / "c0ffee00-0000-4000-8000-000000000001.jsonl").write_text(json.dumps({
        "type": "user", "sessionId": "c0ffee00-0000-4000-8000-000000000001",
        "timestamp": "2026-11-30T10:00:00Z", "cwd": "/w/app",
        "message": {"role": "user", "content": f"the token is {AWS}"}}) + "\n",
        encoding="utf-8")
    synced = tmp_path / "s.db"
    home = {"HOME": str(tmp_path / "home")}
    done = run("sync", "--claude-code", str(projects.parent), db=synced, env={**env, **home})
    assert done.returncode == 0, done.stderr
    assert AWS.encode() in synced.read_bytes()
    redacting = tmp_path / "r.db"
    done = run("sync", "--claude-code", str(projects.parent), db=redacting, env=home)
    assert done.returncode == 0, done.stderr
    assert AWS.encode() not in redacting.read_bytes()


def test_a_token_in_a_project_path_is_redacted_at_ingest_and_by_redact(tmp_path: Path
                                                                       ) -> None:
    """A project folder named after a token (a clone at ``/src/ghp_…/api``) is no way
    past redaction: not at ingest, not in a store built with --keep-secrets and redacted
    later, and the project keeps its last folder's name."""
    token = "ghp_" + "0123456789abcdefghijABCDEFGHIJ012345"
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(conversation_to_json(conversation(
        "s1", ("user", "the api build fails"), project=f"/src/{token}/api"))) + "\n",
        encoding="utf-8")
    ingested, kept = tmp_path / "ingested.db", tmp_path / "kept.db"
    assert run("ingest", str(source), db=ingested).returncode == 0
    assert run("ingest", str(source), "--keep-secrets", db=kept).returncode == 0
    done = run("redact", "--json", db=kept)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["secrets_redacted"] == {"github-token": 1}
    for db in (ingested, kept):
        found = run("search", "api build", "--project", "api", "--json",
                    "--summarizer", "none", db=db)
        assert found.returncode == 0, found.stderr
        assert [r["project"] for r in json.loads(found.stdout)["results"]] == [
            "/src/[secret:github-token]/api"]
        assert token.encode() not in db.read_bytes()


@pytest.mark.parametrize("token", ["ghp_" + "0123456789abcdefghijABCDEFGHIJ012345", AWS])
def test_a_search_whose_question_holds_a_secret_writes_it_nowhere(tmp_path: Path, token: str
                                                                 ) -> None:
    """``search`` with a model caches summaries in the store, but not those of a question
    holding a key: the file (and its -wal) never holds the key, as ingest promises. An
    upper-case key too (``AKIA…``), which the cache key's case-folded question hides."""
    db = tmp_path / "h.db"
    assert run("ingest", str(_sessions(tmp_path / "in.jsonl")), db=db).returncode == 0
    with ChatServer() as server:
        model = ("--model", "m", "--base-url", server.url)
        for query in ("kiwi key", f"kiwi key {token}"):
            done = run("search", query, "--json", *model, db=db)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["results"][0]["summary_kind"] == "llm"
    with sqlite3.connect(db) as connection:
        cached = [query for (query,) in connection.execute("SELECT query FROM summary_cache")]
    assert cached == ["kiwi key"]
    held = b"".join(path.read_bytes() for path in tmp_path.glob("h.db*")).lower()
    assert token[4:24].lower().encode() not in held
