"""``search`` on a store holding a message of tens of megabytes (a pasted log) finds and
summarises it within a modest memory bound: the stores read only the start of a long text
into a hit and into the transcript, and SQLite reads it apart from FTS5's ranking. They read,
tokenized and rendered the whole text (84 MB: 5.6 s, 970 MB). A SQLite file and a real
PostgreSQL server (tests/support/postgres_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.bounded_run import ingest_then_run
from tests.support.new_stores import store_locations

db = store_locations("sqlite", "postgres")
"""A new store: a SQLite file, or an empty database on the test server."""


def test_search_finds_a_huge_message_in_bounded_memory(
        db: str, tmp_path: Path) -> None:
    """A 42 MB message: found beside a short one on the same word, and summarised from its
    start, under a 400 MB address space."""
    source = tmp_path / "huge.jsonl"
    source.write_text("\n".join(json.dumps(session) for session in (
        {"id": "h1", "title": "pasted log", "messages": [
            {"role": "user", "content": "docker " * 6_000_000},
            {"role": "assistant", "content": "ok"}]},
        {"id": "s2", "title": "bridge", "messages": [
            {"role": "user", "content": "the docker bridge network is down"}]},
    )) + "\n", encoding="utf-8")
    # The search needed 500-550 MB (SQLite) before, ending in MemoryError; 250-300 MB now.
    done = ingest_then_run(source, db, "search", "docker")
    assert done.returncode == 0, done.stderr
    found = {r["session_id"]: r for r in json.loads(done.stdout)["results"]}
    assert {sid: r["matched_message_ids"] for sid, r in found.items()} == {
        "h1": ["h1:0"], "s2": ["s2:0"]}
    summary = found["h1"]["summary"]
    assert summary.startswith("[USER]: docker docker") and len(summary) < 2_000
