"""CPU per search, by query and stage, in one long-lived process: a soak searcher's work alone.

    .venv/bin/python -m benchmarks.search_cpu --db PATH [--size 100k] [--rounds 10] [--commits]

Opens the SQLite store at ``--db`` read-only (built from :mod:`benchmarks.generate` first when
the file is missing, as :mod:`benchmarks.soak` builds it), runs the soak's query mix through
:meth:`~harkback.pipeline.facade.Harkback.search` (``limit=5``, no model) once to warm up,
then ``--rounds`` times, and prints each query's CPU time per search (every thread of the
process: the store's thread too) and each stage's part of it. On two shared cores eight
soak searchers queue, so the soak's p95 follows this figure (benchmarks/README.md).

``--commits`` has another connection commit before every search (it sets the file's
``user_version`` to the value it has: nothing in the store changes). In the soak the writers
commit ~13 times a second, and a connection that sees another one's commit when its read
transaction starts drops its whole page cache (SQLite's pager, in WAL mode), so each search
there reads every page it needs again (~3 us of CPU a page here, 1,000-1,500 pages for the
heaviest queries: a fifth of a search's CPU); without ``--commits`` the pages stay cached
from one search to the next. Don't run two at once on one file: their commits wait on each
other.

To compare two versions of the code, ``--against NAME`` runs another copy of the package,
importable as ``NAME``, in the same process: query by query, this code's search and the
other's alternate (which goes first swaps every round), each on its own connection, and the
table gives both CPU figures and their ratio. Runs of separate processes one after the
other differ by up to a third on this shared machine (17 to 24 ms of CPU a search for the
same code, runs of a second each); alternating in one process cancels most of that. Python's
cyclic garbage collector is paused while the two alternate: left to itself it runs when a
count of allocations is passed, so its passes (~5 % of the CPU) fell on whichever search
crossed the count, in a pattern the fixed order of the searches repeats, and the same code
on both sides came out x0.95-1.03 by query. Instead each search ends by collecting its own
young objects (``gc.collect(0)``, timed with it) and the older generations are collected
between rounds, untimed: the same code then gives x1.00 (+-0.01) on the mix, and the
paired figures run ~3-5 % under :func:`measure`'s. An older commit as ``harkback_old``::

    git archive COMMIT stages adapters pipeline | tar -x -C /tmp/old/harkback_old
    touch /tmp/old/harkback_old/__init__.py
    find /tmp/old -name '*.py' -exec sed -i -E 's/\bharkback\\./harkback_old./g' {} +
    PYTHONPATH=/tmp/old .venv/bin/python -m benchmarks.search_cpu --db PATH --against harkback_old
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import attrs

from benchmarks.arguments import count, size
from benchmarks.entry import run_main
from benchmarks.scale import build_store
from benchmarks.soak import QUERIES
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.compose import STAGE_NAMES
from harkback.pipeline.facade import Harkback
from harkback.stages.observe import StageEvent

LIMIT = 5
"""The soak's searchers ask for five sessions."""

Side = TypeVar("Side")
Item = TypeVar("Item")


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


@contextlib.contextmanager
def committer(db: Path, enabled: bool) -> Iterator[Callable[[], None]]:
    """A function that commits to ``db`` from a connection of its own, leaving the store as
    it was (its ``user_version`` set to its value), or does nothing when not ``enabled``.

    Entered before the stores open, so that they find the ``-wal`` it keeps and open as a
    reader beside a writer (not ``immutable``), as in the soak.
    """
    if not enabled:
        yield lambda: None
        return
    connection = sqlite3.connect(db, isolation_level=None)
    try:
        version = int(connection.execute("PRAGMA user_version").fetchone()[0])
        commit = f"PRAGMA user_version = {version}"

        def bump() -> None:
            connection.execute(commit)

        bump()
        yield bump
    finally:
        connection.close()


async def measure(db: Path, rounds: int, queries: Sequence[str] = QUERIES, *,
                  commits: bool = False) -> list[QueryCpu]:
    """CPU per search of each query over ``rounds`` rounds, after one warm-up round;
    with ``commits``, each search follows another connection's commit (see the module)."""
    with committer(db, commits) as commit:
        return await _measure(db, rounds, queries, commit)


async def _measure(db: Path, rounds: int, queries: Sequence[str],
                   commit: Callable[[], None]) -> list[QueryCpu]:
    store = SqliteStore.open(db, readonly=True).unwrap()
    try:
        for query in queries:
            await Harkback(store=store).search(query, limit=LIMIT)
        clocks = {query: StageClock() for query in queries}
        totals = dict.fromkeys(queries, 0.0)
        for _ in range(rounds):
            for query in queries:
                commit()
                started = time.process_time()
                await Harkback(store=store, observer=clocks[query]).search(query, limit=LIMIT)
                totals[query] += time.process_time() - started
    finally:
        await asyncio.to_thread(store.close)
    return [QueryCpu(q, 1000 * totals[q] / rounds,
                     tuple(1000 * clocks[q].spent.get(s, 0.0) / rounds for s in STAGE_NAMES))
            for q in queries]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off inside (on again after, if it was on before), so
    that it runs only when asked: see the module for why a paired run asks for it.

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@attrs.define
class Alternation(Generic[Side, Item]):
    """The one loop of a paired CPU measure: iterated, it gives each ``(side, item)`` in
    turn, item by item, round after round, which side goes first swapping every round, and
    adds to :attr:`spent` the CPU each turn took (the loop's body, from one turn given to
    the next asked: async code awaited in it too). ``before`` runs ahead of each turn,
    untimed. Python's collector is paused while it runs (:func:`collector_paused`), each
    turn's young garbage collected as part of it and the rest between rounds, untimed (see
    the module for why). It runs ``rounds`` rounds, or with ``seconds`` until they are spent
    in all (one round at least).

    >>> turns = Alternation(("a", "b"), ("x",), rounds=2)
    >>> list(turns), turns.rounds_run
    ([('a', 'x'), ('b', 'x'), ('b', 'x'), ('a', 'x')], 2)
    """

    sides: Sequence[Side]
    items: Sequence[Item]
    rounds: int = 1
    seconds: float | None = None
    before: Callable[[], None] = lambda: None
    spent: dict[tuple[Side, Item], float] = attrs.Factory(dict)
    rounds_run: int = 0

    def __iter__(self) -> Iterator[tuple[Side, Item]]:
        """Each turn, timed while the caller runs it."""
        with collector_paused():
            while self.rounds_run == 0 or (sum(self.spent.values()) < self.seconds
                                           if self.seconds is not None
                                           else self.rounds_run < self.rounds):
                order = self.sides if self.rounds_run % 2 == 0 else self.sides[::-1]
                for item in self.items:
                    for side in order:
                        self.before()
                        started = time.process_time()
                        yield side, item
                        gc.collect(0)  # the turn's own garbage, paid for by it
                        self.spent[side, item] = (self.spent.get((side, item), 0.0)
                                                  + time.process_time() - started)
                gc.collect()
                self.rounds_run += 1

    def ms(self, side: Side, item: Item) -> float:
        """The CPU milliseconds ``side`` spent on ``item``, a round."""
        return 1000 * self.spent.get((side, item), 0.0) / max(self.rounds_run, 1)


async def measure_paired(db: Path, rounds: int, other: str,
                         queries: Sequence[str] = QUERIES, *, commits: bool = False
                         ) -> list[tuple[str, float, float]]:
    """Each query's CPU per search under the package ``other`` and under this one, in ms,
    alternating search by search after one warm-up round of each; with ``commits``, each
    search follows another connection's commit (see the module)."""
    with committer(db, commits) as commit:
        return await _measure_paired(db, rounds, other, queries, commit)


async def _measure_paired(db: Path, rounds: int, other: str, queries: Sequence[str],
                          commit: Callable[[], None]) -> list[tuple[str, float, float]]:
    store_module = importlib.import_module(f"{other}.adapters.stores.sqlite")
    facade_module = importlib.import_module(f"{other}.pipeline.facade")
    other_store = store_module.SqliteStore.open(db, readonly=True).unwrap()
    sides: dict[str, tuple[Any, Any]] = {
        "other": (facade_module.Harkback, other_store),
        "this": (Harkback, SqliteStore.open(db, readonly=True).unwrap())}
    turns = Alternation(("other", "this"), queries, rounds=rounds, before=commit)
    try:
        for make, store in sides.values():
            for query in queries:
                await make(store=store).search(query, limit=LIMIT)
        for side, query in turns:
            make, store = sides[side]
            await make(store=store).search(query, limit=LIMIT)
    finally:
        for _, store in sides.values():
            await asyncio.to_thread(store.close)
    return [(q, turns.ms("other", q), turns.ms("this", q)) for q in queries]


def paired_table(results: Sequence[tuple[str, float, float]], other: str) -> str:
    """The paired figures as a Markdown table, with the mean of the mix last."""
    count = max(len(results), 1)
    before = sum(r[1] for r in results) / count
    after = sum(r[2] for r in results) / count
    return "\n".join([
        f"| query | {other} ms | this ms | this / {other} |", "|---|---|---|---|",
        *(f"| {q} | {b:.1f} | {a:.1f} | ×{a / b if b else 0.0:.2f} |" for q, b, a in results),
        f"| mean | {before:.1f} | {after:.1f} | ×{after / before if before else 0.0:.2f} |"])


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
    parser.add_argument("--size", type=size, default=100_000,
                        help="messages of the store built when --db is missing")
    parser.add_argument("--rounds", type=count, default=10)
    parser.add_argument("--against", default=None, metavar="NAME",
                        help="another copy of the package, importable as NAME: "
                             "alternate its searches with this code's (see above)")
    parser.add_argument("--commits", action="store_true",
                        help="another connection commits before every search, as the soak's "
                             "writers do (the store is left as it was; see above)")
    args = parser.parse_args(argv)
    if not args.db.is_file():
        build_store(args.db, args.size, incremental=0)
    rounds = max(args.rounds, 1)
    if args.against:
        print(paired_table(asyncio.run(measure_paired(args.db, rounds, args.against,
                                                      commits=args.commits)),
                           args.against))
    else:
        print(table(asyncio.run(measure(args.db, rounds, commits=args.commits))))
    return 0


if __name__ == "__main__":
    run_main(main)
