"""Fuzzed queries: every one must give a payload, quickly, in process and through the CLI.

    .venv/bin/python -m benchmarks.fuzz [--queries 100000] [--cli 300] [--size 10k] [--db PATH]

Builds a store with :mod:`benchmarks.generate` (as :mod:`benchmarks.scale` does; ``--db
PATH`` reuses one), then asks it ``--queries`` generated queries in process, through the
facade (``--summarizer none``: matching is what a query can hurt), and ``--cli`` of them
through the real ``harkback search --json`` in a fresh process each. The queries are
seeded: the issue's own (``NOT x`` ×1000 and ×100, ``x OR x`` ×8000, 100,000 characters),
then operator soups of FTS words, quotes, brackets, stars, store words and characters of
every Unicode category (surrogates, NUL, controls, right-to-left marks), a few of them
repeated to 100,000 characters. Printed as a table: exceptions (what the CLI reports as
exit 70), replies that are not JSON, failed payloads, the median and the slowest query
beside the target, the worst median of three more runs of the five slowest (a shared
machine stalls now and then: what the query itself costs), and the shape of the slowest.
"""

from __future__ import annotations

import argparse
import asyncio
import heapq
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import attrs

from benchmarks.arguments import count, size
from benchmarks.entry import run_main
from benchmarks.scale import build_store, machine
from harkback.pipeline import wiring
from harkback.pipeline.terminal import json_text

TARGET_S = 1.0
"""The issue's target for the slowest query."""

RETIMED = 5
"""How many of the slowest in-process queries are timed again."""

SEED = 20
LONGEST = 100_000

ISSUE_QUERIES = ("NOT x " * 1000 + "x", "NOT x " * 100 + "x", "x OR " * 8000 + "x",
                 ("docker bridge " * 7200)[:LONGEST], '"' + "a" * (LONGEST - 1))
"""The queries issue 20 found failing (exit 70, "store unavailable", 12 s)."""

_PIECES = ("OR", "AND", "NOT", "NEAR", "NEAR(", '"', "'", "(", ")", "[", "]", "{", "}", "*",
           "-", "+", "^", ":", "col:", "\\", "--", "\x00", "\x1b[2J", "\u202e", "\u200d",
           "docker", "network", "bridge", "error", "config", "上次", "怎么", "ポート", "端口")


def _character(rng: random.Random) -> str:
    """Any code point: a surrogate, a control, an unassigned one, or a letter."""
    return chr(rng.choice((rng.randrange(0x110000), rng.randrange(0x20),
                           rng.randrange(0xD800, 0xE000), rng.randrange(0x80, 0xA0),
                           rng.randrange(0x20, 0x7F), rng.randrange(0x4E00, 0x9FFF))))


def generate(count: int, seed: int = SEED) -> Iterator[str]:
    """The issue's queries, then seeded operator soups (one in 50 repeated to 100,000
    characters), ``count`` in all, made one at a time: 100,000 of them hold 200 million
    characters, so they are never all kept.

    >>> qs = list(generate(200))
    >>> len(qs), qs == list(generate(200)), max(len(q) for q in qs) == LONGEST
    (200, True, True)
    """
    rng = random.Random(seed)
    yield from ISSUE_QUERIES[:count]
    for _ in range(count - min(count, len(ISSUE_QUERIES))):
        parts = [rng.choice(_PIECES) if rng.random() < 0.6 else
                 "".join(_character(rng) for _ in range(rng.randint(1, 8)))
                 for _ in range(rng.randint(1, 24))]
        soup = rng.choice((" ", "", "  ")).join(parts)
        if rng.random() < 0.02:
            soup = (soup * (LONGEST // max(len(soup), 1) + 1))[:LONGEST]
        yield soup


@attrs.frozen
class Tally:
    """What one part of the run saw."""

    part: str
    queries: int
    exceptions: int
    not_json: int
    failed: int
    seconds: tuple[float, ...]
    slowest: str

    timed: bool = True
    retimed: float | None = None

    def row(self) -> str:
        """This tally as a Markdown table row (the target only where it applies)."""
        worst = max(self.seconds, default=0.0)
        target = f"≤ {TARGET_S:.1f}" if self.timed else "-"
        again = "-" if self.retimed is None else f"{self.retimed:.3f}"
        return (f"| {self.part} | {self.queries} | {self.exceptions} | {self.not_json} | "
                f"{self.failed} | {statistics.median(self.seconds or (0.0,)):.4f} | "
                f"{worst:.3f} | {again} | {target} |")


def _shape(query: str) -> str:
    return f"{len(query)} chars: {query[:40]!r}"


async def _in_process(db: Path, queries: Iterable[str]) -> Tally:
    settings = wiring.RecallSettings(db=str(db), summarizer="none")
    store = wiring.open_store(db, readonly=True).unwrap()
    hb = wiring.recall(settings, store).unwrap()
    exceptions = not_json = failed = 0
    seconds: list[float] = []
    worst: list[tuple[float, int, str]] = []  # a heap of the slowest few, fastest on top
    try:
        for number, query in enumerate(queries):
            started = time.perf_counter()
            try:
                payload = (await hb.search(query)).to_payload()
            except Exception:  # what the CLI would report as exit 70
                exceptions += 1
            else:
                failed += not payload["success"]
                try:
                    json.loads(json_text(payload).encode("utf-8"))
                except (UnicodeError, ValueError):
                    not_json += 1
            seconds.append(time.perf_counter() - started)
            if len(worst) < RETIMED:
                heapq.heappush(worst, (seconds[-1], number, query))
            elif seconds[-1] > worst[0][0]:
                heapq.heapreplace(worst, (seconds[-1], number, query))
        # A shared machine stalls now and then: the slowest few are timed again, three
        # times each, and the worst median says what the query itself costs.
        medians = []
        for _, _, query in worst:
            runs = []
            for _ in range(3):
                started = time.perf_counter()
                await hb.search(query)
                runs.append(time.perf_counter() - started)
            medians.append(statistics.median(runs))
    finally:
        await hb.aclose()
        store.close()
    slowest = _shape(max(worst)[2]) if worst else ""
    return Tally("in process", len(seconds), exceptions, not_json, failed, tuple(seconds),
                 slowest, retimed=max(medians, default=0.0))


def _argument(query: str) -> str:
    # An argument cannot hold NUL, nor a surrogate the file system encoding cannot carry,
    # nor more than 128 KiB.
    text = query.replace("\x00", " ")
    text = text.encode("utf-8", "replace").decode("utf-8", "surrogateescape")
    return text[:30_000]


def through_cli(db: Path, queries: Sequence[str]) -> Tally:
    """Each query through ``harkback search --json`` in a fresh process; one in ten is
    given without ``--`` before it (a query beginning with ``-`` is then a usage error,
    which must be JSON too)."""
    harkback = str(Path(sys.executable).with_name("harkback"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARKBACK_")}
    exceptions = not_json = failed = 0
    seconds: list[float] = []
    slowest = ""
    for i, query in enumerate(queries):
        separator = [] if i % 10 == 9 else ["--"]
        argv = [harkback, "search", "--db", str(db), "--json", "--summarizer", "none",
                *separator, _argument(query)]
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env=env, timeout=120, check=False)
        seconds.append(time.perf_counter() - started)
        if seconds[-1] >= max(seconds):
            slowest = _shape(query)
        exceptions += done.returncode == 70
        try:
            payload = json.loads(done.stdout.decode("utf-8"))
        except ValueError:
            not_json += 1
            continue
        failed += not payload["success"] and not payload.get("usage")
    # A process's wall clock includes the interpreter's start (benchmarks/startup.py):
    # the time target is the in-process one.
    return Tally("CLI --json (wall clock of a process)", len(queries), exceptions, not_json,
                 failed, tuple(seconds), slowest, timed=False)


def table(tallies: Sequence[Tally]) -> str:
    """The Markdown table of every part, then the slowest query of each."""
    lines = ["| part | queries | exceptions / exit 70 | not JSON | failed | median (s) | "
             "slowest (s) | slowest 5 re-timed (s) | target |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [t.row() for t in tallies]
    lines += [f"slowest {t.part}: {t.slowest}" for t in tallies]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Build or reuse the store, run the queries, print the table; 1 if any went wrong."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fuzz", description=__doc__)
    parser.add_argument("--queries", type=count, default=100_000,
                        help="queries asked in process (100000)")
    parser.add_argument("--cli", type=int, default=300,
                        help="of them, how many also go through the CLI (300)")
    parser.add_argument("--size", type=size, default="10k",
                        help="messages in a built store (10k)")
    parser.add_argument("--db", type=Path, default=None,
                        help="the store: reused when it exists, else built there")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    # The CLI part takes the issue's queries and an even spread of the rest, kept as the
    # in-process part goes by.
    step = max(1, args.queries // max(args.cli, 1))
    picked: list[str] = []

    def kept(queries: Iterable[str]) -> Iterator[str]:
        for number, query in enumerate(queries):
            if len(picked) < args.cli and (number < len(ISSUE_QUERIES)
                                           or (number - len(ISSUE_QUERIES)) % step == 0):
                picked.append(query)
            yield query

    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or Path(scratch, "fuzz.db")
        if not db.exists():
            print(f"building {args.size:,} messages at {db} ...", file=sys.stderr, flush=True)
            build_store(db, args.size, incremental=0)
        tallies = [asyncio.run(_in_process(db, kept(generate(args.queries, args.seed))))]
        tallies.append(through_cli(db, picked))
    print(f"machine: {machine()}")
    print(f"seed {args.seed}; store of {args.size:,} messages")
    print(table(tallies))
    bad = any(t.exceptions or t.not_json or t.failed for t in tallies)
    return 1 if bad else 0


if __name__ == "__main__":
    run_main(main)
