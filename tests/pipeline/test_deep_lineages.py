"""Lineages thousands of sessions deep, and parent loops as long, searched through the CLI.

A Hermes gateway continued by compression for months, or a damaged store whose sessions
name each other as parents, must come back as one result, under its true root.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEPTH = 1_500


def harkback(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, timeout=300, check=False)


def ingested(tmp_path: Path, parent_of: Mapping[str, str | None], marked: set[str]) -> Path:
    """A store of one-message sessions with the parents given; ``marked`` ones say
    ``quokka``."""
    source = tmp_path / "sessions.jsonl"
    with source.open("w", encoding="utf-8") as out:
        for number, (sid, parent) in enumerate(parent_of.items()):
            words = f"step {number} zebrafish" + (" quokka" if sid in marked else "")
            out.write(json.dumps({"id": sid, "source": "cli", "parent_session_id": parent,
                                  "started_at": 1_772_547_300 + number,
                                  "messages": [{"role": "user", "content": words}]}) + "\n")
    db = tmp_path / "h.db"
    done = harkback("ingest", str(source), "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


def searched(db: Path, query: str) -> dict[str, Any]:
    done = harkback("search", query, "--db", str(db), "--json", "--limit", "10")
    assert done.returncode == 0, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


def test_a_chain_thousands_deep_is_one_result_under_its_root(tmp_path: Path) -> None:
    """Hits at both ends of a chain of continuations name the chain's first session once
    (the walk stopped after 64 generations, so one lineage came back once per 64, each
    under another root; and loading a lineage nested a step per generation: a
    RecursionError, status 70)."""
    chain = {f"s{i}": (f"s{i - 1}" if i else None) for i in range(DEPTH)}
    db = ingested(tmp_path, chain, {"s0", f"s{DEPTH // 2}", f"s{DEPTH - 1}"})
    payload = searched(db, "quokka")
    assert [r["session_id"] for r in payload["results"]] == ["s0"]
    (result,) = payload["results"]
    assert sorted(result["matched_sessions"]) == sorted(["s0", f"s{DEPTH // 2}",
                                                         f"s{DEPTH - 1}"])
    assert result["lineage"] == list(chain)


def test_a_long_parent_loop_is_one_result(tmp_path: Path) -> None:
    """Sessions that name each other as parents in a loop (a damaged store) come back once,
    every member's hit under the loop's earliest session."""
    loop = {f"c{i}": f"c{(i + 1) % DEPTH}" for i in range(DEPTH)}
    db = ingested(tmp_path, loop, {f"c{i}" for i in range(0, DEPTH, 50)})
    payload = searched(db, "quokka")
    assert [r["session_id"] for r in payload["results"]] == ["c0"]
    assert len(payload["results"][0]["lineage"]) == DEPTH
