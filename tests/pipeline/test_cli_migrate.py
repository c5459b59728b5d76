"""``harkback migrate`` and the project field as the commands show it, through real
subprocesses and real SQLite files."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from harkback.adapters.stores.sql.schema import SCHEMA_VERSION as LATEST
from harkback.stages.ingest_format import conversation_to_json
from harkback.stages.records import Conversation
from tests.adapters.stores.old_files import file_state, old_file, version_2_file
from tests.adapters.stores.test_voicing_migration import BUCKET, PACKET
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run
from tests.pipeline.test_sync_process import BOUND

DOCKER = conversation("docker", ("user", "the docker bridge lost its dns"),
                      ("assistant", "recreate the network"), started_at=1_770_000_000.0,
                      title="Docker DNS")


def _version(path: Path) -> int:
    with sqlite3.connect(path) as raw:
        version: int = raw.execute("PRAGMA user_version").fetchone()[0]
    raw.close()
    return version


def test_migrate_brings_an_old_file_forward_once(tmp_path: Path) -> None:
    """A version-1 file: migrate says 1 -> the latest, the data stay searchable; a second run says
    it is up to date and changes nothing."""
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    done = run("migrate", db=db)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{db}: schema version 1 -> {LATEST} (sessions.project")
    assert _version(db) == LATEST
    before = file_state(db)
    again = run("migrate", "--json", db=db)
    assert json.loads(again.stdout) == {"success": True, "db": str(db), "from": LATEST,
                                        "to": LATEST, "applied": []}
    assert file_state(db)[1] == before[1]
    found = json.loads(run("search", "docker bridge", "--json", "--summarizer", "none",
                           db=db).stdout)
    assert [r["session_id"] for r in found["results"]] == ["docker"]


def test_search_of_an_old_file_reads_it_without_migrating(tmp_path: Path) -> None:
    """A search opens read-only: an old file is searched as it is, and stays version 1,
    also when a model is named (whose summaries would otherwise be cached in the file)."""
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    before = file_state(db)
    found = json.loads(run("search", "docker bridge", "--json", "--summarizer", "none",
                           db=db).stdout)
    assert [(r["session_id"], r["project"]) for r in found["results"]] == [("docker", "")]
    assert file_state(db) == before
    # No server answers at this address: the recall falls back to extractive summaries.
    modelled = run("search", "docker bridge", "--json", "--model", "m", "--base-url",
                   "http://127.0.0.1:9/v1", "--deadline", "2", db=db)
    assert [r["session_id"] for r in json.loads(modelled.stdout)["results"]] == ["docker"]
    assert file_state(db) == before
    assert _version(db) == 1


def test_a_japanese_search_before_and_after_migrate(tmp_path: Path) -> None:
    """A version-2 file, indexed with kana devoiced: a search (read-only) writes nothing
    and finds the bucket session first for "S3 バケット"; migrate says 2 -> the latest, and then
    the word as written finds the bucket session alone."""
    db = tmp_path / "h.db"
    version_2_file(db, [PACKET, BUCKET])
    before = file_state(db)

    def sessions(query: str) -> list[str]:
        found = run("search", query, "--json", "--summarizer", "none", db=db)
        assert found.returncode == 0, found.stderr
        return [r["session_id"] for r in json.loads(found.stdout)["results"]]
    assert sessions("S3 バケット")[0] == "bucket"
    assert set(sessions('"バケット"')) == {"bucket", "packet"}  # as the old index holds it
    assert file_state(db) == before
    done = run("migrate", db=db)
    assert done.stdout.startswith(f"{db}: schema version 2 -> {LATEST} (the index keeps the voiced")
    assert sessions("S3 バケット")[0] == "bucket"
    assert sessions('"バケット"') == ["bucket"]
    assert sessions('"パケット"') == ["packet"]


def test_migrate_refuses_what_it_cannot_migrate(tmp_path: Path) -> None:
    """No file, a foreign file, a newer file: one line each, exit 1, nothing written."""
    missing = tmp_path / "none" / "h.db"
    done = run("migrate", db=missing)
    assert (done.returncode, done.stderr.strip()) == (
        1, f"harkback: no harkback database at {missing}; import sessions into it first:"
        f" harkback sync --db {missing} (the Claude Code, Codex and Hermes histories on this"
        f" machine), or harkback ingest FILE --db {missing} (a JSON-lines file)")
    assert not missing.parent.exists()
    foreign = tmp_path / "other.db"
    with sqlite3.connect(foreign) as raw:
        raw.execute("CREATE TABLE t (x)")
    raw.close()
    newer = tmp_path / "newer.db"
    assert run("migrate", db=newer).returncode == 1  # missing: nothing made
    run("ingest", str(_jsonl(tmp_path, DOCKER)), db=newer)
    with sqlite3.connect(newer) as raw:
        raw.execute("PRAGMA user_version = 99")
    raw.close()
    for path, line in ((foreign, f"{foreign} is not a harkback database"),
                       (newer, f"{newer} has harkback schema version 99, newer than this "
                               f"harkback knows ({LATEST}): upgrade harkback")):
        before = file_state(path)
        done = run("migrate", db=path)
        assert (done.returncode, done.stderr.strip()) == (
            1, f"harkback: session store unavailable: {line}")
        assert file_state(path) == before


def _jsonl(folder: Path, *conversations: Conversation) -> Path:
    path = folder / "in.jsonl"
    path.write_text("".join(json.dumps(conversation_to_json(c)) + "\n"
                            for c in conversations), encoding="utf-8")
    return path


def test_the_project_reaches_search_recent_and_show(tmp_path: Path) -> None:
    """A session ingested with a project carries it in every JSON payload that describes
    sessions."""
    db = tmp_path / "h.db"
    session = attrs.evolve(DOCKER.session, project="/home/me/code/infra")
    assert run("ingest", str(_jsonl(tmp_path, attrs.evolve(DOCKER, session=session))),
               db=db).returncode == 0
    found = json.loads(run("search", "docker bridge", "--json", "--summarizer", "none",
                           db=db).stdout)
    listed = json.loads(run("recent", "--json", db=db).stdout)
    shown = json.loads(run("show", "docker", "--json", db=db).stdout)
    assert found["results"][0]["project"] == "/home/me/code/infra"
    assert listed["results"][0]["project"] == "/home/me/code/infra"
    assert shown["session"]["project"] == "/home/me/code/infra"


@pytest.mark.parametrize("command", [("ingest", "IN"), ("import", "jsonl", "IN"),
                                     ("optimize",), ("redact",)])
@pytest.mark.parametrize("as_json", [False, True])
def test_a_writable_command_says_it_migrated_an_old_store(
        tmp_path: Path, command: tuple[str, ...], as_json: bool) -> None:
    """A writable open brings an old store forward: it did so silently, and an older
    harkback sharing the file then found it too new. One line on stderr, and a note in
    --json, now say from which version to which."""
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    source = tmp_path / "more.jsonl"
    source.write_text(json.dumps(conversation_to_json(DOCKER)) + "\n", encoding="utf-8")
    args = [str(source) if a == "IN" else a for a in command]
    done = run(*args, *(("--json",) if as_json else ()), db=db)
    assert done.returncode == 0, done.stderr
    note = f"{db} was migrated from schema version 1 to {LATEST} (harkback migrate does only that)"
    assert done.stderr.splitlines()[0] == f"harkback: note: {note}"  # optimize says more
    assert done.stderr.count("migrated") == 1
    if as_json:
        assert json.loads(done.stdout)["notes"][-1] == note
    assert _version(db) == LATEST
    again = run(*args, db=db)  # migrated once: nothing more to say
    assert again.returncode == 0 and "migrated" not in again.stderr


def test_stats_and_migrate_give_the_schema_version_alike(tmp_path: Path) -> None:
    """``stats --json`` gave the version as text ("1") where ``migrate --json`` gives
    numbers: a script comparing them never found them equal."""
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    before = json.loads(run("stats", "--json", db=db).stdout)["schema_version"]
    migrated = json.loads(run("migrate", "--json", db=db).stdout)
    after = json.loads(run("stats", "--json", db=db).stdout)["schema_version"]
    assert (before, after) == (migrated["from"], migrated["to"]) == (1, LATEST)


def test_a_new_store_is_not_said_to_be_migrated(tmp_path: Path) -> None:
    """A store made by this run starts at the latest version: nothing to say."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(conversation_to_json(DOCKER)) + "\n", encoding="utf-8")
    done = run("ingest", str(source), db=tmp_path / "new.db")
    assert (done.returncode, done.stderr) == (0, "")


def test_the_migrate_hint_works_pasted_from_a_folder_with_a_tab(tmp_path: Path) -> None:
    """The ``harkback migrate`` a store too old to read asks for quoted its path with plain
    quotes, which output then showed with ``␉`` for the tab: pasted, it named a store that
    does not exist. The line as output shows it, pasted into bash, now migrates the store.
    (Every SQLite step reads forward, so only a server store's open asks today: the line
    is the same function's.)"""
    from harkback.adapters.stores.migration import needs_migrate
    from harkback.pipeline.terminal import line_of
    from tests.pipeline.test_cli_show import _pasted

    folder = tmp_path / "tab\there"
    folder.mkdir()
    db = folder / "h.db"
    old_file(db, [DOCKER])
    shown = line_of(needs_migrate(str(db), 1, LATEST))
    hint = shown.split("run `", 1)[1].split("`", 1)[0]
    migrated = _pasted(hint, tmp_path)
    assert migrated.returncode == 0, (hint, migrated.stderr)
    assert _version(db) == LATEST
    found = json.loads(run("search", "docker bridge", "--json", "--summarizer", "none",
                           db=db).stdout)
    assert [r["session_id"] for r in found["results"]] == ["docker"]


def _migrate_as_this_user(db: Path) -> subprocess.CompletedProcess[str]:
    """``harkback migrate`` without root's power to write any file (as a user runs it)."""
    return subprocess.run([*BOUND, sys.executable, "-m", "harkback.pipeline.cli", "migrate",
                           "--db", str(db)], capture_output=True, text=True, timeout=120,
                          check=False)


def test_migrate_of_a_read_only_file_up_to_date_says_so(tmp_path: Path) -> None:
    """chaos28: it asked for write access with nothing to do (PostgreSQL said "up to
    date"). Only a file that needs migrating asks for it; neither is written."""
    db = ingested(tmp_path, [DOCKER])
    db.chmod(0o444)
    before = file_state(db)
    done = _migrate_as_this_user(db)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"{db}: schema version {LATEST}, up to date\n", "")
    assert file_state(db) == before
    old = tmp_path / "old" / "h.db"
    old.parent.mkdir()
    old_file(old, [DOCKER])
    old.chmod(0o444)
    refused = _migrate_as_this_user(old)
    assert refused.returncode == 1
    assert f"cannot write the database {old}: the file itself is read-only" in refused.stderr
    assert _version(old) == 1
