"""``harkback check --db postgresql://…``: the schema version and the index totals against
the rows; ``--repair`` says in one line that the server's administrator rebuilds indexes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from harkback.adapters.stores.postgres_check import REPAIR_LINE
from harkback.adapters.stores.postgres_migrations import SCHEMA_VERSION
from tests.pipeline.test_cli_postgres_faults import BOUND_S, _ended, _waiting_for_a_lock
from tests.pipeline.test_cli_postgres_upkeep import _secrets_and_a_writer
from tests.pipeline.test_cli_redact import _sessions
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations
from tests.support.postgres_server import start_server

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


def test_a_whole_server_store_is_fine(url: str, tmp_path: Path) -> None:
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    done = harkback("check", "--db", url, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert found["healthy"] is True
    assert f"schema version {SCHEMA_VERSION} (this harkback's)" in found["fine"]
    assert "the index totals count all 2 messages" in found["fine"]


def test_totals_out_of_step_are_damage_and_repair_says_whose_tool_reindex_is(
        url: str, tmp_path: Path) -> None:
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    with psycopg.connect(url) as connection:
        connection.execute("UPDATE index_totals SET messages = messages + 3")
    done = harkback("check", "--db", url)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "damaged: the index totals count 5 messages where 2 are stored" in done.stdout
    repaired = harkback("check", "--repair", "--db", url)
    assert repaired.returncode == 1
    assert f"repair: {REPAIR_LINE}" in repaired.stdout


def test_a_setting_that_is_no_number_is_one_line_as_every_command_says_it(url: str) -> None:
    """Not "internal error: ValueError": the words ``stats`` and every command give."""
    env = {"HARKBACK_PG_LOCK_TIMEOUT": "soon"}
    done = harkback("check", "--db", url, env=env)
    said = harkback("stats", "--db", url, env=env).stderr.strip()
    assert done.returncode == 1, done.stdout + done.stderr
    assert "HARKBACK_PG_LOCK_TIMEOUT is not a number of seconds: 'soon'" in said
    assert done.stderr.strip() == said.replace("session store unavailable: ", ""), done.stderr


def test_a_pending_compaction_is_said_with_the_redact_that_ends_it(url: str,
                                                                    tmp_path: Path) -> None:
    """A redact by a role that may not vacuum leaves the secrets' old row versions in the
    files: check said the store was fine and its next step "none"; it now says the
    compaction is pending and which command ends it, and after the owner's redact, not."""
    _, as_writer = _secrets_and_a_writer(url, tmp_path)
    assert harkback("redact", "--db", as_writer).returncode == 0
    pending = json.loads(harkback("check", "--db", url, "--json").stdout)
    assert harkback("redact", "--db", url).returncode == 0
    after = json.loads(harkback("check", "--db", url, "--json").stdout)
    assert pending["healthy"] is True
    assert any(line.startswith("a redact's compaction is pending") for line in pending["fine"])
    assert pending["next_step"].startswith("harkback redact --db URL")
    assert not any("compaction" in line for line in after["fine"])
    assert after["next_step"] == "none"


def _check_ended(url: str, env: dict[str, str],
                 meanwhile: contextlib.AbstractContextManager[None] | None = None
                 ) -> tuple[subprocess.Popen[str], float, str]:
    """``harkback check --db url`` started; once a statement of it waits on a lock (then
    in ``meanwhile``), how long it took to end (killed past :data:`BOUND_S`), its stderr."""
    check = subprocess.Popen([sys.executable, "-m", "harkback.pipeline.cli", "check", "--db",
                              url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, **env})
    _waiting_for_a_lock(url)
    with meanwhile or contextlib.nullcontext():
        took, err = _ended(check)
    return check, took, err


def _left_waiting(blocker: psycopg.Connection[tuple[int]], within: float = 5.0) -> int:
    """How many other sessions of the database still wait on a lock or sit in a
    transaction after ``within`` seconds (a closed client's session ends at once)."""
    deadline = time.monotonic() + within
    while True:
        left: int = blocker.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND (wait_event_type = 'Lock' "
            "OR state LIKE 'idle in transaction%')").fetchone()[0]  # type: ignore[index]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def test_a_check_waiting_on_a_locked_table_ends_at_the_read_bound(url: str,
                                                                 tmp_path: Path) -> None:
    """Another session's ACCESS EXCLUSIVE lock on the messages: the check waited for the
    lock's five minutes (forever with the lock wait set to 0); it ends at the read bound,
    in one line naming the setting, exit 1."""
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    with psycopg.connect(url) as blocker:
        blocker.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
        check, took, err = _check_ended(url, {"HARKBACK_PG_READ_TIMEOUT": "2",
                                              "HARKBACK_PG_LOCK_TIMEOUT": "0"})
        # Given up on, the check's session is gone from the server, not left waiting in
        # the lock's queue (or in a transaction) behind the blocker.
        assert _left_waiting(blocker) == 0
    assert check.returncode == 1, err
    (line,) = err.splitlines()
    assert "a statement took longer than 2 s" in line and "HARKBACK_PG_READ_TIMEOUT" in line
    assert took < BOUND_S


def test_a_check_whose_server_freezes_is_one_line_within_its_bound(tmp_path: Path) -> None:
    """The server's processes stopped while the check waits on it: one line, exit 1."""
    server = start_server()
    try:
        url = server.create_database("frozen_check") + "&connect_timeout=2"
        ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--db", url)
        assert ingested.returncode == 0, ingested.stderr
        with psycopg.connect(url) as blocker:
            blocker.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
            check, took, err = _check_ended(url, {}, server.frozen())
        assert check.returncode == 1, err
        (line,) = err.splitlines()
        assert "cannot reach the PostgreSQL server of" in line, line
        assert "no answer for 2 s, nor to a new connection within 2 s" in line
        assert took < BOUND_S
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
