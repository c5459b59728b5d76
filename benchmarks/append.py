"""One line appended to a huge Claude Code transcript: the CPU time of the sync that stores it.

    .venv/bin/python -m benchmarks.append [--megabytes 30] [--appends 3]

Writes one Claude Code transcript of ``--megabytes`` MB (about 1,600 characters a message:
30 MB is 18,746 messages, one session), syncs it into three SQLite stores, then appends
one line at a time and syncs each store again, in turn (the order rotating with each
append), timing the CPU seconds of the process (every thread) for each:

* ``whole`` writes the changed session whole and redacts every message again (the sync
  before tail writes: the store offers no :class:`~harkback.stages.tails.TailWriter`);
* ``tail`` writes only what changed from the first changed message on (a one-shot
  ``harkback sync``, and a watch's first re-sync);
* ``tail + memo`` also reuses what the sync before redacted in the session
  (:class:`~harkback.pipeline.redacting.RedactionMemo`: what ``sync --watch`` does).

What is left is reading and parsing the whole file again, loading the stored messages and
comparing them. At the end the three stores must hold the same sessions and messages.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any, cast

from benchmarks.arguments import count
from benchmarks.entry import run_main
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.redacting import RedactionMemo
from harkback.pipeline.sync import Located, locate, sync
from harkback.stages.ports import SessionStore

TARGET_S = 2.0
"""The issue's target: an appended message searchable within 2 s under ``sync --watch``."""

WORDS = ("docker bridge nginx cors token refresh cache migration deploy rollback queue "
         "latency").split()
MODES = ("whole", "tail", "tail + memo")


def line(number: int, rng: random.Random) -> str:
    """One transcript line of about 1,600 characters (user and assistant in turn)."""
    role = "user" if number % 2 == 0 else "assistant"
    text = " ".join(rng.choice(WORDS) for _ in range(200))
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    return json.dumps({"type": role, "sessionId": "s", "uuid": f"u{number}",
                       "timestamp": "2026-03-01T10:00:00Z", "cwd": "/w/app",
                       "message": {"role": role, "content": content, "id": f"m{number}"}}) + "\n"


def write_transcript(path: Path, megabytes: int, rng: random.Random) -> int:
    """A transcript of ``megabytes`` MB at ``path``; returns its line count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    number = 0
    with path.open("w", encoding="utf-8") as handle:
        while handle.tell() < megabytes * 1_000_000:
            handle.write(line(number, rng))
            number += 1
    return number


class WholeWrites:
    """A store offering no tail writes (``ingest_tails``): the import writes sessions whole."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name == "ingest_tails":
            raise AttributeError(name)
        return getattr(self._store, name)


def sync_cpu(located: Sequence[Located], db: Path, mode: str,
             memo: RedactionMemo | None) -> float:
    """CPU seconds of this process for opening ``db``, syncing and closing it."""
    cpu = time.process_time()

    async def run() -> None:
        with SqliteStore.open(db).unwrap() as opened:
            store = cast(SessionStore, WholeWrites(opened)) if mode == "whole" else opened
            reports = await sync(located, store, progress=False, memo=memo)
            if any(r.status != "synced" for r in reports if r.located):
                raise SystemExit(f"sync failed: {[r.error for r in reports]}")
    asyncio.run(run())
    return time.process_time() - cpu


def held(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every session row and message row (row ids too) stored in ``db``."""
    with closing(sqlite3.connect(db)) as connection:
        return (connection.execute("SELECT * FROM sessions ORDER BY id").fetchall(),
                connection.execute("SELECT * FROM messages ORDER BY id").fetchall())


def table(lines: int, megabytes: int, cpu: dict[str, list[float]], same: bool) -> str:
    """The benchmark's table (Markdown): CPU seconds per appended line, by mode."""
    base = statistics.median(cpu["whole"])
    rows = []
    for mode in MODES:
        median = statistics.median(cpu[mode])
        verdict = "met" if median <= TARGET_S else "missed"
        rows.append(f"| {mode} | {median:.2f} | {max(cpu[mode]):.2f} | "
                    f"{median / base:.2f} | ≤ {TARGET_S} ({verdict}) |")
    return "\n".join([
        f"one line appended to a {megabytes} MB Claude Code transcript ({lines} lines), "
        f"{len(cpu['whole'])} appends; stores equal at the end: {'yes' if same else 'NO'}",
        "", "| sync | CPU s median | CPU s max | vs whole | target |", "|---|---|---|---|---|",
        *rows])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table; 1 when the stores differ at the end."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=count, default=30)
    parser.add_argument("--appends", type=count, default=3)
    args = parser.parse_args(argv)
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "projects"
        transcript = root / "-w-app" / "00000000-0000-4000-8000-000000000001.jsonl"
        lines = write_transcript(transcript, args.megabytes, rng)
        located = locate({"claude-code": root, "hermes": Path(scratch) / "none",
                          "codex": Path(scratch) / "none"})
        dbs = {mode: Path(scratch) / f"{n}.db" for n, mode in enumerate(MODES)}
        memo = RedactionMemo()
        memos = {"whole": None, "tail": None, "tail + memo": memo}
        for mode in MODES:  # the first sync (a watch's, for the memo)
            sync_cpu(located, dbs[mode], mode, memos[mode])
        cpu: dict[str, list[float]] = {mode: [] for mode in MODES}
        for number in range(args.appends):
            with transcript.open("a", encoding="utf-8") as handle:
                handle.write(line(lines + number, rng))
            order = MODES[number % 3:] + MODES[:number % 3]
            for mode in order:
                cpu[mode].append(sync_cpu(located, dbs[mode], mode, memos[mode]))
        stored = [held(dbs[mode]) for mode in MODES]
        same = all(s == stored[0] for s in stored) and len(stored[0][1]) == lines + args.appends
        print(table(lines + args.appends, args.megabytes, cpu, same))
    if not same:
        print("the stores differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    run_main(main)
