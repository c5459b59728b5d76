"""``harkback check --db postgresql://…``: the schema version and the index totals against
the rows; ``--repair`` says in one line that the server's administrator rebuilds indexes."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from harkback.adapters.stores.postgres_check import REPAIR_LINE
from harkback.adapters.stores.postgres_migrations import SCHEMA_VERSION
from tests.pipeline.test_cli_postgres_upkeep import _secrets_and_a_writer
from tests.pipeline.test_cli_redact import _sessions
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations

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
