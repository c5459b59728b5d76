"""A PostgreSQL row that reads as no record (a time a ``double precision`` holds but no date
has, written by another program) is the store's damage in one line, exit 1, as SQLite's is
(test_damaged_rows.py); it ended ``search``, ``show``, ``recent`` and ``redact`` in a
raw ValueError (exit 70)."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from harkback.pipeline.cli import main
from harkback.stages.ingest_format import conversation_to_json
from harkback.stages.records import Role
from tests.conftest import conversation
from tests.support.new_stores import store_locations

url = store_locations("postgres")

DAMAGE = {
    "message": ("UPDATE messages SET timestamp = 1e300",
                "a stored message is damaged (session 's-pelican', position 0: timestamp must "
                "be epoch seconds between the years 1 and 9999, got 1e+300)"),
    "session": ("UPDATE sessions SET started_at = -1e20",
                "a stored session is damaged (session 's-pelican': started_at must be epoch "
                "seconds between the years 1 and 9999, got -1e+20)"),
    "tool calls": ("UPDATE messages SET tool_calls = '[{}]' WHERE position = 1",
                   "a stored message is damaged (session 's-pelican', position 1: its tool "
                   "calls are stored as no list of calls)"),
}


def _rows(url: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as connection:
        return [*connection.execute("SELECT * FROM sessions ORDER BY id"),
                *connection.execute("SELECT * FROM messages ORDER BY id")]


COMMANDS = (["search", "pelican"], ["show", "s-pelican"], ["redact"],
            ["search", "pelican", "--json"])
"""Commands that read both; ``recent`` reads no message as a record."""


@pytest.mark.parametrize(("damage", "command"), [
    *((damage, command) for damage in sorted(DAMAGE) for command in COMMANDS),
    ("session", ["recent"])])
def test_a_time_out_of_range_is_said_in_one_line(
        damage: str, command: list[str], url: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One line naming the row, exit 1, nothing written."""
    source = tmp_path / "sessions.jsonl"
    source.write_text(json.dumps(conversation_to_json(conversation(
        "s-pelican", ("user", "the pelican crontab"), ("assistant", "restore the pelican"),
        started_at=1_770_000_000.0, title="Pelican crontab"))) + "\n", encoding="utf-8")
    assert main(["ingest", str(source), "--db", url]) == 0
    update, said = DAMAGE[damage]
    with psycopg.connect(url) as connection:
        connection.execute(update)
    before = _rows(url)
    capsys.readouterr()
    assert main([*command, "--db", url]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [f"harkback: session store unavailable: {url}: {said}"], err
    assert _rows(url) == before


def _ingest(url: str, folder: Path, *turns: tuple[Role, str]) -> int:
    source = folder / "more.jsonl"
    source.write_text(json.dumps(conversation_to_json(conversation(
        "s-pelican", *turns, started_at=1_770_000_000.0))) + "\n", encoding="utf-8")
    return main(["ingest", str(source), "--db", url])


def test_ingesting_again_over_a_damaged_message_fails_as_the_store(
        url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The upsert reads the stored messages to take them out of the index totals."""
    assert _ingest(url, tmp_path, ("user", "the pelican crontab")) == 0
    with psycopg.connect(url) as connection:
        connection.execute(DAMAGE["message"][0])
    before = _rows(url)
    capsys.readouterr()
    assert _ingest(url, tmp_path, ("user", "the pelican crontab, again")) == 1
    assert DAMAGE["message"][1] in capsys.readouterr().err.splitlines()[-1]
    assert _rows(url) == before


def test_a_migration_meeting_a_damaged_message_leaves_the_version(
        url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Schema 5 tokenizes kana again, reading each message holding them as a record."""
    assert _ingest(url, tmp_path, ("user", "バケット を 作る")) == 0
    with psycopg.connect(url) as connection:
        connection.execute(DAMAGE["message"][0])
        connection.execute("UPDATE harkback_schema SET version = 4")
    capsys.readouterr()
    assert main(["migrate", "--db", url]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [f"harkback: session store unavailable: {url}: "
                                f"{DAMAGE['message'][1]}"], err
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT version FROM harkback_schema").fetchone() == (4,)
