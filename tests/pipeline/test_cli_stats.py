"""``harkback stats``, run as a user would: through a subprocess, on a real SQLite file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.adapters.stores.sql.schema import SCHEMA_VERSION
from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation


def harkback(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_stats_counts_an_ingested_store(tmp_path: Path) -> None:
    """Totals, sources most first, the time span and the file's size, as JSON and a table;
    the store is only read."""
    source = tmp_path / "sessions.jsonl"
    chats = [conversation(f"c{i}", ("user", "docker"), ("assistant", "bridge"),
                          started_at=1_770_000_000.0 + i, source="cron" if i else "cli")
             for i in range(3)]
    source.write_text("".join(json.dumps(conversation_to_json(c)) + "\n" for c in chats),
                      encoding="utf-8")
    db = tmp_path / "h.db"
    assert harkback("ingest", str(source), "--db", str(db)).returncode == 0
    before = db.read_bytes()
    done = harkback("stats", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert (payload["sessions"], payload["messages"]) == (3, 6)
    assert payload["sources"] == [{"source": "cron", "sessions": 2, "messages": 4},
                                  {"source": "cli", "sessions": 1, "messages": 2}]
    assert (payload["oldest"], payload["newest"]) == ("2026-02-02T02:40:00Z",
                                                      "2026-02-02T02:40:02Z")
    assert payload["bytes_on_disk"] >= len(before)
    assert (payload["vectors"], payload["cached_summaries"]) == ({}, 0)
    assert payload["schema_version"] == SCHEMA_VERSION  # a new store is at the newest
    table = harkback("stats", "--db", str(db)).stdout.splitlines()
    assert table[1] == "sessions   3, from 2026-02-02T02:40:00Z to 2026-02-02T02:40:02Z"
    assert table[-2:] == ["cron                2         4", "cli                 1         2"]
    assert db.read_bytes() == before


def test_stats_of_a_missing_store_is_one_line(tmp_path: Path) -> None:
    """No file there: exit 1, one line (and a JSON failure with --json); nothing created."""
    db = tmp_path / "none.db"
    done = harkback("stats", "--db", str(db))
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"harkback: no harkback database at {db}; import sessions into it first: harkback sync"
        f" --db {db} (the Claude Code, Codex and Hermes histories on this machine), or harkback"
        f" ingest FILE --db {db} (a JSON-lines file)")
    as_json = harkback("stats", "--db", str(db), "--json")
    assert json.loads(as_json.stdout)["success"] is False
    assert not db.exists()


def test_the_source_table_names_every_source_whole(tmp_path: Path) -> None:
    """A session stored without a source is counted under a visible name, and a long
    source name is not cut (the name is what --source takes)."""
    long_name = "nightly-report-builder"
    chats = [conversation("a", ("user", "docker"), source=""),
             conversation("b", ("user", "bridge"), source=long_name)]
    source = tmp_path / "sessions.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(c)) + "\n" for c in chats),
                      encoding="utf-8")
    db = tmp_path / "h.db"
    assert harkback("ingest", str(source), "--db", str(db)).returncode == 0
    table = harkback("stats", "--db", str(db)).stdout.splitlines()
    rows = [line.split() for line in table[table.index(next(
        line for line in table if line.startswith("source "))) + 1:]]
    assert sorted(rows) == [["(none)", "1", "1"], [long_name, "1", "1"]]


IN_MEMORY = ":memory: is an in-memory store, empty and gone when the command ends"


@pytest.mark.parametrize(("command", "work"), [
    (("stats",), "count"), (("migrate",), "migrate"), (("redact",), "redact"),
    (("redact", "--dry-run"), "redact"), (("optimize",), "optimise")])
def test_upkeep_of_an_in_memory_store_says_so_in_one_line(command: tuple[str, ...],
                                                          work: str) -> None:
    """``--db :memory:`` is a store made for the command and gone after it: each command
    that looks after a store says there is nothing to do, in one line, status 0 (as
    ``optimize`` does); ``--json`` keeps the command's keys and adds the note."""
    done = harkback(*command, "--db", ":memory:")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"nothing to {work}: {IN_MEMORY}\n"
    shown = harkback(*command, "--db", ":memory:", "--json")
    assert shown.returncode == 0, shown.stderr
    payload = json.loads(shown.stdout)
    assert (payload["success"], payload["db"]) == (True, ":memory:")
    assert payload["note"] == f"nothing to {work}: {IN_MEMORY}"
