"""``harkback redact`` stopped after its rewrites but before it merged the full-text index
(the disk filled up; a kill there leaves the same file): run again, it finishes the job,
and no secret is left anywhere in the file, the index's old segments included."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from harkback.adapters.stores.sqlite_connection import MAX_PAGES_ENV

ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123456789"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, check=False, timeout=300,
                          env={**os.environ, **(env or {})})


def _store_with_secrets(folder: Path) -> tuple[Path, list[str]]:
    """A store of 3,000 sessions, one in ten holding a GitHub token, kept as written."""
    rng = random.Random(9)
    words = [f"w{n}" for n in range(3000)]
    tokens = []
    source = folder / "s.jsonl"
    with source.open("w", encoding="utf-8") as handle:
        for index in range(3000):
            token = "ghp_" + "".join(rng.choices(ALPHABET, k=36))
            if index % 10 == 0:
                tokens.append(token)
            handle.write(json.dumps({"id": f"x{index}", "messages": [
                {"role": "user", "content": " ".join(rng.choices(words, k=40))
                 + (f" token {token}" if index % 10 == 0 else "")} for _ in range(6)]}) + "\n")
    db = folder / "h.db"
    done = _run("ingest", str(source), "--db", str(db), "--keep-secrets", "--no-progress")
    assert done.returncode == 0, done.stderr
    return db, tokens


def _left(db: Path, tokens: list[str]) -> int:
    """How many tokens the file's bytes still hold (the index keeps them lower-cased and
    prefix-compressed, so their tails are looked for)."""
    data = b"".join(p.read_bytes() for p in db.parent.glob("h.db*")).lower()
    return sum(token[-12:].lower().encode() in data for token in tokens)


def test_redact_run_again_after_it_stopped_at_the_merge_leaves_no_secret(
        tmp_path: Path) -> None:
    """The first run fails on a full disk once every message is rewritten (no secret left
    to find), the second finds none and still merges: not one token stays in the file."""
    db, tokens = _store_with_secrets(tmp_path)
    original = db.read_bytes()
    pages = len(original) // 4096
    for room in (250, 350, 450, 550):  # pages enough for the rewrites, not for the merge
        db.write_bytes(original)
        stopped = _run("redact", "--db", str(db), env={MAX_PAGES_ENV: str(pages + room)})
        found = _run("redact", "--dry-run", "--json", "--db", str(db))
        if stopped.returncode == 1 and json.loads(found.stdout)["secrets_redacted"] == {}:
            break
    else:
        raise AssertionError("no page budget stopped redact between its rewrites and merge")
    assert "the disk is full" in stopped.stderr
    assert _left(db, tokens) > 0  # the fault left them in the index's old segments
    again = _run("redact", "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert _left(db, tokens) == 0
