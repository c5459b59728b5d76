"""``recent`` on a store whose first request is tens of megabytes (a pasted log) lists it
within a modest memory bound: the stores fetch only the start of the message the preview
reads. They fetched the whole text and collapsed its whitespace (84 MB: 7-10 s, 1.6 GB).
A SQLite file and a real PostgreSQL server (tests/support/postgres_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.bounded_run import ingest_then_run
from tests.support.new_stores import store_locations

db = store_locations("sqlite", "postgres")
"""A new store: a SQLite file, or an empty database on the test server."""


def test_recent_lists_a_huge_first_request_in_bounded_memory(
        db: str, tmp_path: Path) -> None:
    """A 42 MB first request: listed with its preview, under a 400 MB address space."""
    source = tmp_path / "huge.jsonl"
    source.write_text(json.dumps({"id": "h1", "title": "pasted log", "messages": [
        {"role": "user", "content": "docker " * 6_000_000},
        {"role": "assistant", "content": "ok"}]}) + "\n", encoding="utf-8")
    # The listing needed ~700 MB (SQLite), ~800 MB (PostgreSQL) before; 150-200 MB now.
    done = ingest_then_run(source, db, "recent")
    assert done.returncode == 0, done.stderr
    [listed] = json.loads(done.stdout)["results"]
    assert listed["preview"] == ("docker " * 29)[:200].rstrip()
    assert (listed["session_id"], listed["message_count"]) == ("h1", 2)
