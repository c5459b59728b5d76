"""CPU per search, by query and stage, in one long-lived process: a soak searcher's work alone.

    .venv/bin/python -m benchmarks.search_cpu --db PATH [--size 100k] [--rounds 10]

Opens the SQLite store at ``--db`` read-only (built from :mod:`benchmarks.generate` first when
the file is missing, as :mod:`benchmarks.soak` builds it), runs the soak's query mix through
:meth:`~harkback.pipeline.facade.Harkback.search` (``limit=5``, no model) once to warm up,
then ``--rounds`` times, and prints each query's CPU time per search (every thread of the
process: the store's thread too) and each stage's part of it. On two shared cores eight
soak searchers queue, so the soak's p95 follows this figure (benchmarks/README.md).

To compare two versions of the code, run it under each, one after the other and back again
(an older commit's packages extracted with ``git archive`` and put first on ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from benchmarks.generate import parse_size
from benchmarks.scale import build_store
from benchmarks.soak import QUERIES
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.compose import STAGE_NAMES
from harkback.pipeline.facade import Harkback
from harkback.stages.observe import StageEvent

LIMIT = 5
"""The soak's searchers ask for five sessions."""


@attrs.define
class StageClock:
    """An observer adding up the process CPU time spent inside each stage."""

    started: dict[str, float] = attrs.Factory(dict)
    spent: dict[str, float] = attrs.Factory(dict)

    def __call__(self, event: StageEvent) -> None:
        """Note when a stage starts; add its CPU time when it ends."""
        now = time.process_time()
        if event.status == "started":
            self.started[event.stage] = now
        elif event.stage in self.started:
            begun = self.started.pop(event.stage)
            self.spent[event.stage] = self.spent.get(event.stage, 0.0) + now - begun


@attrs.frozen
class QueryCpu:
    """One query's CPU milliseconds per search, in all and per stage."""

    query: str
    total_ms: float
    stage_ms: tuple[float, ...]


async def measure(db: Path, rounds: int, queries: Sequence[str] = QUERIES) -> list[QueryCpu]:
    """CPU per search of each query over ``rounds`` rounds, after one warm-up round."""
    store = SqliteStore.open(db, readonly=True).unwrap()
    try:
        for query in queries:
            await Harkback(store=store).search(query, limit=LIMIT)
        clocks = {query: StageClock() for query in queries}
        totals = dict.fromkeys(queries, 0.0)
        for _ in range(rounds):
            for query in queries:
                started = time.process_time()
                await Harkback(store=store, observer=clocks[query]).search(query, limit=LIMIT)
                totals[query] += time.process_time() - started
    finally:
        await asyncio.to_thread(store.close)
    return [QueryCpu(q, 1000 * totals[q] / rounds,
                     tuple(1000 * clocks[q].spent.get(s, 0.0) / rounds for s in STAGE_NAMES))
            for q in queries]


def table(results: Sequence[QueryCpu]) -> str:
    """The figures as a Markdown table, with the mean of the mix last."""
    def row(name: str, total: float, stages: Sequence[float]) -> str:
        return f"| {name} | {total:.1f} | " + " | ".join(f"{s:.1f}" for s in stages) + " |"
    count = max(len(results), 1)
    mean = [sum(r.stage_ms[i] for r in results) / count for i in range(len(STAGE_NAMES))]
    return "\n".join([
        "| query | CPU ms | " + " | ".join(STAGE_NAMES) + " |",
        "|---|---" + "|---" * len(STAGE_NAMES) + "|",
        *(row(r.query, r.total_ms, r.stage_ms) for r in results),
        row("mean", sum(r.total_ms for r in results) / count, mean)])


def main(argv: Sequence[str] | None = None) -> int:
    """Build the store when missing, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--size", type=parse_size, default=100_000,
                        help="messages of the store built when --db is missing")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    if not args.db.is_file():
        build_store(args.db, args.size, incremental=0)
    print(table(asyncio.run(measure(args.db, max(args.rounds, 1)))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
