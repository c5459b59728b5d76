"""Soak: searchers and writers share one store for a while; nothing fails, nothing is lost.

    .venv/bin/python -m benchmarks.soak [--size 100k] [--seconds 120] [--searchers 8]
        [--writers 2] [--writer-pace SESSIONS_PER_S] [--db PATH] [--import-mb 100]

Builds a store of ``--size`` messages with :mod:`benchmarks.generate` (``--db PATH``
reuses one already there), then starts ``--searchers`` search processes and ``--writers``
writer processes, each with a connection of its own, for ``--seconds``. A searcher runs
the query mix of :mod:`benchmarks.scale` through :class:`~harkback.pipeline.facade.Harkback`
(no model) as fast as it can; a writer ingests batches of 1 to 20 new sessions of 10
messages with pauses of up to 0.2 s (~80 sessions a second each: the store about triples
in 120 s), or with ``--writer-pace N`` one session at a time, N a second (an agent's hook
storing finished sessions writes far less than the default). Afterwards every session a
writer was told was stored is looked for. The table gives failed calls, lost sessions,
searches and writes, and search p50/p95 beside the target (p95 ≤ 100 ms), then each
query's p50/p95. ``--import-mb`` then runs :mod:`benchmarks.shared_writers` at that size
(a large import raced by 20 one-session ingests; 0 skips it).

``--db postgresql://...`` soaks a PostgreSQL store instead (an empty database is filled
with the generated corpus first; the large import, SQLite's, is skipped).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from returns.result import Failure, Result

from benchmarks.arguments import size
from benchmarks.entry import run_main
from benchmarks.generate import generate
from benchmarks.metrics import percentile
from benchmarks.scale import BATCH, QUERY_MIX, build_store
from benchmarks.shared_writers import run_shared
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.ingest import chunked
from harkback.pipeline.wiring import store_kind
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message, Session
from harkback.stages.stage import as_result

TARGET_P95_MS = 100.0
"""The issue's target for search p95 during the soak."""

QUERIES = tuple(query for _, query in QUERY_MIX if query)


def is_url(db: str) -> bool:
    """Whether ``db`` names a PostgreSQL server rather than a SQLite file."""
    return store_kind(db) == "postgresql"


def open_store(db: str, *, readonly: bool = False) -> SessionStore:
    """The store at ``db`` (a SQLite path or a ``postgresql://`` URL), opened or the run ends."""
    opened: Result[Any, StoreUnavailable]
    if is_url(db):
        from harkback.adapters.stores.postgres import PostgresStore
        opened = PostgresStore.open(db, readonly=readonly)
    else:
        opened = SqliteStore.open(Path(db), readonly=readonly)
    if isinstance(opened, Failure):
        raise SystemExit(f"{db}: {opened.failure().message()}")
    store: SessionStore = opened.unwrap()
    return store


def _close(store: SessionStore) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()


# --- the worker processes -------------------------------------------------------------------

async def _search(db: str, seconds: float, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    times: list[float] = []
    asked: list[int] = []  # which of QUERIES each time is for
    failures: list[str] = []
    store = open_store(db, readonly=True)
    try:
        hb = Harkback(store=store)
        until = time.monotonic() + seconds  # from when this process is ready
        cpu = time.process_time()
        while not times or time.monotonic() < until:
            asked.append(rng.randrange(len(QUERIES)))
            started = time.perf_counter()
            try:
                payload = (await hb.search(QUERIES[asked[-1]], limit=5)).to_payload()
            except Exception as error:  # a crash of the call is a failed call, not the end
                payload = {"success": False, "error": repr(error)}
            times.append(time.perf_counter() - started)
            if not payload["success"]:
                failures.append(str(payload.get("error")))
        cpu = time.process_time() - cpu
    finally:
        await asyncio.to_thread(_close, store)
    return {"times": times, "asked": asked, "failures": failures, "cpu": cpu}


def _session(worker: int, number: int) -> Conversation:
    sid = f"soak-{worker}-{number}"
    messages = tuple(Message(session_id=sid, position=i, role="user" if i % 2 == 0
                             else "assistant",
                             content=f"soak writer {worker} note {number} step {i} docker "
                                     f"bridge error config server")
                     for i in range(10))
    return Conversation(Session(id=sid, source="soak", started_at=time.time()), messages)


async def _write(db: str, seconds: float, worker: int, pace: float = 0.0) -> dict[str, Any]:
    rng = random.Random(worker)
    stored: list[str] = []
    failures: list[str] = []
    number = 0
    store = open_store(db)
    try:
        until = time.monotonic() + seconds
        cpu = time.process_time()
        while number == 0 or time.monotonic() < until:
            started = time.monotonic()
            size = 1 if pace else rng.randint(1, 20)
            batch = [_session(worker, number + i) for i in range(size)]
            number += len(batch)
            outcome = as_result(await store.ingest(batch))
            if isinstance(outcome, Failure):
                failures.append(outcome.failure().message())
            else:
                stored.extend(c.session.id for c in batch)
            await asyncio.sleep(max(0.0, 1.0 / pace - (time.monotonic() - started)) if pace
                                else rng.uniform(0.0, 0.2))
        cpu = time.process_time() - cpu
    finally:
        await asyncio.to_thread(_close, store)
    return {"stored": stored, "failures": failures, "cpu": cpu}


def worker(argv: Sequence[str]) -> int:
    """One searcher or writer process; prints what it saw as one JSON line."""
    parser = argparse.ArgumentParser(prog="benchmarks.soak worker")
    parser.add_argument("role", choices=("search", "write"))
    parser.add_argument("--db", required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--index", type=int, default=0)
    parser.add_argument("--pace", type=float, default=0.0)
    args = parser.parse_args(argv)
    work = (_search(args.db, args.seconds, args.index) if args.role == "search"
            else _write(args.db, args.seconds, args.index, args.pace))
    print(json.dumps(asyncio.run(work)))
    return 0


# --- the run --------------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class Soak:
    """What one soak run measured."""

    messages: int
    seconds: float
    searchers: int
    writers: int
    searches: int
    writes: int
    writer_pace: float = 0.0
    """Sessions a second per writer (0: the default batches, as fast as they go)."""
    failed_calls: int
    lost_sessions: int
    p50_ms: float
    p95_ms: float
    cpu_ms: float = 0.0
    """The searchers' CPU time (all their threads) per search: the rest of a search's wall
    time is waiting, for a core or for the store."""
    writer_cores: float = 0.0
    """The writers' CPU time over the run's length: how many cores they kept busy."""
    load: tuple[float, float] = (0.0, 0.0)
    """The machine's 1-minute load average as the run started and as it ended."""
    errors: tuple[str, ...] = ()
    by_query: tuple[tuple[str, int, float, float], ...] = ()
    """Each query of the mix: (query, searches, p50 ms, p95 ms). The slowest queries make
    the run's p95, so this says which ones to make cheaper."""

    def table(self) -> str:
        """The figures as a Markdown table."""
        verdict = "met" if self.p95_ms <= TARGET_P95_MS else "missed"
        rows = [("store", f"{self.messages:,} messages"),
                ("processes", f"{self.searchers} searchers, {self.writers} writers"
                              + (f" ({self.writer_pace:g} session/s each)" if self.writer_pace
                                 else "") + ", "
                              f"{self.seconds:g} s"),
                ("searches", f"{self.searches:,}"), ("sessions written", f"{self.writes:,}"),
                ("failed calls", str(self.failed_calls)),
                ("lost sessions", str(self.lost_sessions)),
                ("search p50", f"{self.p50_ms:.1f} ms"),
                ("search CPU (mean)", f"{self.cpu_ms:.1f} ms"),
                ("writers' CPU", f"{self.writer_cores:.2f} cores"),
                ("load average", f"{self.load[0]:.1f} at the start, {self.load[1]:.1f} at the end"),
                ("search p95", f"{self.p95_ms:.1f} ms (target ≤ {TARGET_P95_MS:.0f} ms: "
                               f"{verdict})")]
        lines = ["| soak | |", "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]
        if self.by_query:
            lines += ["", "| query | searches | p50 | p95 |", "|---|---:|---:|---:|",
                      *(f"| {query} | {count:,} | {p50:.1f} ms | {p95:.1f} ms |"
                        for query, count, p50, p95 in self.by_query)]
        return "\n".join(lines)


def _stopped(processes: Sequence[subprocess.Popen[str]]) -> None:
    """Kill the workers still running: a soak interrupted (a ``kill -INT`` of this process
    alone, a worker's timeout) would otherwise leave them searching and writing a store
    whose temporary folder is gone, for up to ``--seconds``."""
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait()


def run_soak(db: str, *, seconds: float, searchers: int, writers: int,
             writer_pace: float = 0.0) -> Soak:
    """Run the searchers and writers against ``db`` for ``seconds`` and check the result."""
    root = Path(__file__).resolve().parent.parent
    load_before = os.getloadavg()[0]
    argv = [sys.executable, "-m", "benchmarks.soak", "worker"]
    commands = [[*argv, "search", "--db", str(db), "--seconds", str(seconds), "--index", str(i)]
                for i in range(searchers)]
    commands += [[*argv, "write", "--db", str(db), "--seconds", str(seconds), "--index", str(i),
                  "--pace", str(writer_pace)] for i in range(writers)]
    processes: list[subprocess.Popen[str]] = []
    seen: list[dict[str, Any]] = []
    errors: list[str] = []
    try:
        # Started inside the block: a worker that cannot start (too many open files), or a
        # Ctrl-C meanwhile, still stops those already running.
        for command in commands:
            processes.append(subprocess.Popen(command, stdout=subprocess.PIPE,
                                              stderr=subprocess.PIPE, text=True, cwd=root))
        for process in processes:
            out, err = process.communicate(timeout=seconds + 600)
            if process.returncode != 0:
                errors.append(err.strip()[-500:])
                seen.append({})
            else:
                seen.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        _stopped(processes)
    load = (load_before, os.getloadavg()[0])
    searched, written = seen[:searchers], seen[searchers:]
    times = sorted(t * 1000 for s in searched for t in s.get("times", []))
    per_query: dict[int, list[float]] = {}
    for s in searched:
        for t, asked in zip(s.get("times", []), s.get("asked", []), strict=False):
            per_query.setdefault(asked, []).append(t * 1000)
    by_query = tuple((QUERIES[i], len(q), percentile(sorted(q), 50), percentile(sorted(q), 95))
                     for i, q in sorted(per_query.items()))
    stored = {sid for w in written for sid in w.get("stored", [])}
    failures = [f for s in seen for f in s.get("failures", [])]
    found, messages = _soaked(db)
    return Soak(messages=messages, seconds=seconds, searchers=searchers, writers=writers,
                searches=len(times), writes=len(stored), writer_pace=writer_pace,
                failed_calls=len(failures) + len(errors), lost_sessions=len(stored - found),
                p50_ms=percentile(times, 50), p95_ms=percentile(times, 95),
                cpu_ms=1000 * sum(s.get("cpu", 0.0) for s in searched) / max(len(times), 1),
                writer_cores=sum(w.get("cpu", 0.0) for w in written) / seconds,
                load=load, errors=tuple(errors + failures[:5]), by_query=by_query)


def _soaked(db: str) -> tuple[set[str], int]:
    """The ids of the soak's sessions in the store at ``db``, and its message count."""
    sessions = "SELECT id FROM sessions WHERE source = 'soak'"
    if is_url(db):
        import psycopg
        with psycopg.connect(db) as connection:
            found = {str(row[0]) for row in connection.execute(sessions)}
            count = connection.execute("SELECT COUNT(*) FROM messages").fetchone()
        return found, int(count[0]) if count else 0
    with sqlite3.connect(db) as raw:
        found = {row[0] for row in raw.execute(sessions)}
        messages = raw.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    raw.close()
    return found, messages


def fill_postgres(url: str, size: int) -> None:
    """Ingest the generated corpus of ``size`` messages into the store at ``url`` when it
    holds no message yet."""
    async def run() -> None:
        store = open_store(url)  # makes the schema of an empty database
        try:
            if _soaked(url)[1] == 0:
                for group in chunked(generate(size, 0), BATCH):
                    (await store.ingest(group)).unwrap()
        finally:
            await asyncio.to_thread(_close, store)
    asyncio.run(run())


def main(argv: Sequence[str] | None = None) -> int:
    """Build or reuse the store, soak it, print the table (and the shared-writers one)."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["worker"]:
        return worker(given[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=size, default=100_000)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--searchers", type=int, default=8)
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--writer-pace", type=float, default=0.0,
                        help="sessions a second per writer, one at a time (default: batches of "
                             "1-20 with pauses of up to 0.2 s, as fast as that goes)")
    parser.add_argument("--db", default=None,
                        help="reuse (or build) this store: a SQLite path or a postgresql:// URL")
    parser.add_argument("--import-mb", type=float, default=100.0,
                        help="then a large import raced by 20 ingests (0: skip)")
    args = parser.parse_args(given)
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or str(Path(tmp) / "soak.db")
        if is_url(db):
            fill_postgres(db, args.size)
        elif not Path(db).is_file():
            build_store(Path(db), args.size, incremental=0)
        soak = run_soak(db, seconds=args.seconds, searchers=args.searchers,
                        writers=args.writers, writer_pace=args.writer_pace)
        print(soak.table())
        for error in soak.errors:
            print(f"error: {error}")
        ok = soak.failed_calls == 0 and soak.lost_sessions == 0
        if args.import_mb > 0 and is_url(db):
            print("\n(the large import of benchmarks.shared_writers is SQLite's: skipped)")
        elif args.import_mb > 0:
            folder = Path(tmp) / "shared"
            folder.mkdir()
            shared = asyncio.run(run_shared(folder, args.import_mb))
            print()
            print(shared.table())
            for error in shared.ingest_errors:
                print(f"error: {error}")
            ok = ok and shared.ok
    return 0 if ok else 1


if __name__ == "__main__":
    run_main(main)
