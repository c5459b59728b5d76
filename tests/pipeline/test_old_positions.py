"""A store written by an older harkback may hold message positions ingest now refuses
(``1.5`` from a library caller, a Hermes id past 2 ** 31 - 1): its sessions still read."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run


@pytest.mark.parametrize("stored", [1.5, 2**40])
def test_a_position_stored_before_ingest_refused_it_still_reads(tmp_path: Path,
                                                               stored: float) -> None:
    """With the check in ``Message`` itself, ``show`` and every search loading the session
    ended in "internal error" (exit 70)."""
    db = ingested(tmp_path, [conversation(
        "old", ("user", "the docker bridge lost its routes"),
        ("assistant", "recreated the bridge network"), started_at=1_770_000_000.0)])
    with sqlite3.connect(db) as connection:  # as the older harkback stored it
        connection.execute("UPDATE messages SET position = ? WHERE position = 1", (stored,))
    connection.close()
    shown = run("show", "old", "--json", db=db)
    assert shown.returncode == 0, shown.stderr
    assert "recreated the bridge network" in shown.stdout
    found = run("search", "bridge routes", "--summarizer", "none", "--json", db=db)
    assert found.returncode == 0, found.stderr
    assert [r["session_id"] for r in json.loads(found.stdout)["results"]] == ["old"]
