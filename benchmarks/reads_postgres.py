"""The read commands at scale on both stores: ``recent`` (plain, ``--since``, ``--until``,
``--source``), ``search`` (plain and bounded by ``--since``), ``stats``, ``sources``,
``show`` and the MCP tools, timed on a PostgreSQL store and a SQLite store holding the
same generated corpus (:mod:`benchmarks.generate`).

    .venv/bin/python -m benchmarks.reads_postgres --size 1m [--url postgresql://...]
    .venv/bin/python -m benchmarks.reads_postgres --database postgresql://... --sqlite PATH

Without ``--database``/``--sqlite`` it builds both stores first (PostgreSQL as
:mod:`benchmarks.scale_postgres` does, on ``--url``'s server or a throwaway one, then
``optimize``; SQLite as :mod:`benchmarks.scale` does) and drops them after unless
``--keep``. Each read runs what its command runs (the facade, the MCP tools' handlers, the
store's counts and import ledger) on a store opened read-only as the commands open it,
once to warm up and then ``--rounds`` times, alternating the stores. The table gives each
read's median ms and a digest of what it returned, so runs of two builds on the same
stores can be shown to read the same sessions in the same order with the same counts.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode

from returns.result import Result

from benchmarks.arguments import count, size
from benchmarks.entry import run_main
from benchmarks.extras import needs_extra
from benchmarks.generate import generate
from benchmarks.scale import BATCH, SEED, _label, _timed_ingest, build_store

try:
    import psycopg

    from benchmarks.scale_postgres import dropped_after, fresh_database, open_postgres, server
except ImportError as missing:
    raise needs_extra("postgres", missing) from None
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback
from harkback.pipeline.ingest import chunked
from harkback.pipeline.mcp_tools import call_tool
from harkback.pipeline.stats import count_store
from harkback.pipeline.wiring import open_store
from harkback.stages.ports import SessionStore
from harkback.stages.stage import as_result

DAY = 86_400.0
QUESTION = "docker network bridge error"
"""The searched words: common in the corpus, so a bounded search has candidates to filter."""

class Newest(NamedTuple):
    """The store's newest root session, which the reads are asked about."""

    id: str
    started_at: float


Read = Callable[[SessionStore, Newest], Awaitable[Any]]
"""One read of a store (about its newest session), to what it returned."""


def _untimed(payload: Any) -> Any:
    """A payload without its ``timings``, the only part that differs from run to run."""
    return {k: v for k, v in payload.items() if k != "timings"} if isinstance(
        payload, dict) else payload


async def _stats(store: SessionStore, newest: Newest) -> Any:
    counted = (await count_store(store)).unwrap()
    return [counted.sessions, counted.messages, counted.oldest, counted.newest,
            [(s.source, s.sessions, s.messages) for s in counted.sources]]


async def _sources(store: SessionStore, newest: Newest) -> Any:
    ledger = store.import_ledger()
    listed = () if ledger is None else as_result(await ledger.sources().awaitable()).unwrap()
    return [(s.key.location, s.sessions, s.messages) for s in listed]


def _recall(store: SessionStore) -> Harkback:
    return Harkback(store=store, pipeline=Pipeline())


READS: dict[str, Read] = {
    "recent": lambda store, newest: _recall(store).recent(limit=10),
    "recent --since 7 days": lambda store, newest: _recall(store).recent(
        limit=10, since=newest.started_at - 7 * DAY),
    "recent --until 30 days ago": lambda store, newest: _recall(store).recent(
        limit=10, until=newest.started_at - 30 * DAY),
    "recent --source cron": lambda store, newest: _recall(store).recent(
        limit=10, sources=("cron",)),
    # No generated session has a project: the listing reads every root and lists none.
    "recent --project (none has it)": lambda store, newest: _recall(store).recent(
        limit=10, projects=("api",)),
    "search": lambda store, newest: _recall(store).search(QUESTION, limit=5),
    "search --since 30 days": lambda store, newest: _recall(store).search(
        QUESTION, limit=5, since=newest.started_at - 30 * DAY),
    "stats": _stats,
    "sources": _sources,
    "show": lambda store, newest: _recall(store).read_session(newest.id, around="5"),
    "mcp recent_sessions": lambda store, newest: call_tool(
        store, "recent_sessions", {"limit": 10, "since": newest.started_at - 7 * DAY}),
    "mcp session_search": lambda store, newest: call_tool(
        store, "session_search", {"query": QUESTION, "limit": 5,
                                  "since": newest.started_at - 30 * DAY}),
}
"""Every read timed, by the command it stands for."""


async def _newest(store: SessionStore) -> Newest:
    listed = (await _recall(store).recent(limit=1)).to_payload()["results"]
    return Newest(id=listed[0]["session_id"], started_at=float(listed[0]["started_at"]))


def digest(value: Any) -> str:
    """A short fingerprint of a read's result (its JSON, keys sorted).

    >>> digest({"b": 1, "a": [2]}) == digest({"a": [2], "b": 1})
    True
    """
    text = json.dumps(value, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:10]


async def _timed(read: Read, store: SessionStore, newest: Newest) -> tuple[float, Any]:
    started = time.perf_counter()
    found = await read(store, newest)
    spent = (time.perf_counter() - started) * 1000
    if isinstance(found, Result):
        found = found.unwrap()
    if hasattr(found, "to_payload"):
        found = found.to_payload()
    return spent, _untimed(found)


async def measure(targets: dict[str, str], rounds: int
                  ) -> dict[str, dict[str, tuple[float, str]]]:
    """Median ms and result digest of every read on every store (``targets``: name to
    ``--db`` value), the stores alternating within each round."""
    stores = {name: open_store(target, readonly=True).unwrap()
              for name, target in targets.items()}
    try:
        newest = {name: await _newest(store) for name, store in stores.items()}
        times: dict[tuple[str, str], list[float]] = {}
        seen: dict[tuple[str, str], str] = {}
        for round_ in range(rounds + 1):  # the first round warms up, untimed
            for label, read in READS.items():
                for name, store in stores.items():
                    spent, found = await _timed(read, store, newest[name])
                    kept = digest(found)
                    if seen.setdefault((label, name), kept) != kept:
                        raise SystemExit(f"{label} on {name}: another result in round "
                                         f"{round_}")
                    if round_:
                        times.setdefault((label, name), []).append(spent)
    finally:
        for store in stores.values():
            await asyncio.to_thread(store.close)
    return {label: {name: (statistics.median(times[label, name]), seen[label, name])
                    for name in stores} for label in READS}


def as_url(conninfo: str) -> str:
    """A libpq connection string as the ``postgresql://`` URL that ``--db`` takes (every
    setting a query parameter).

    >>> as_url("user=me dbname=h host=/tmp/pg")
    'postgresql:///h?user=me&host=%2Ftmp%2Fpg'
    """
    parts = psycopg.conninfo.conninfo_to_dict(conninfo)
    database = str(parts.pop("dbname", ""))
    return f"postgresql:///{quote(database)}?{urlencode(parts, quote_via=quote)}"


def render(found: dict[str, dict[str, tuple[float, str]]]) -> str:
    """The table: per read, each store's median ms and digest."""
    names = list(next(iter(found.values())))
    lines = ["| read | " + " | ".join(f"{n} ms | {n} digest" for n in names) + " |",
             "|---|" + "---:|---|" * len(names)]
    lines += [f"| {label} | " + " | ".join(f"{ms:.1f} | {kept}" for ms, kept in row.values())
              + " |" for label, row in found.items()]
    return "\n".join(lines)


async def _fill_postgres(url: str, messages: int) -> None:
    store = open_postgres(url)
    try:
        await _timed_ingest(store, chunked(generate(messages, SEED), BATCH))
    finally:
        await asyncio.to_thread(store.close)
    store = open_postgres(url)
    try:
        (await store.optimize().awaitable()).unwrap()
    finally:
        await asyncio.to_thread(store.close)


def main(argv: Sequence[str] | None = None) -> int:
    """Build (or take) the two stores, time the reads, print the table."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reads_postgres",
                                     description=__doc__)
    parser.add_argument("--size", type=size, default="100k", help="messages in each store")
    parser.add_argument("--url", default=None,
                        help="a server's maintenance database (default: a throwaway server)")
    parser.add_argument("--database", default=None, help="an existing PostgreSQL store (URL)")
    parser.add_argument("--sqlite", type=Path, default=None, help="an existing SQLite store")
    parser.add_argument("--rounds", type=count, default=5, help="timed rounds of every read")
    parser.add_argument("--keep", action="store_true", help="keep the stores built")
    args = parser.parse_args(argv)
    if (args.database is None) != (args.sqlite is None):
        parser.error("--database and --sqlite go together (or neither: both are built)")
    if args.database is not None:
        print(render(asyncio.run(measure({"postgres": args.database,
                                          "sqlite": str(args.sqlite)}, args.rounds))))
        print(f"\nload {os.getloadavg()[0]:.2f}")
        return 0
    with server(args.url) as maintenance, tempfile.TemporaryDirectory() as folder:
        made = as_url(fresh_database(maintenance, args.size))
        sqlite = (Path() if args.keep else Path(folder)) / f"reads_{_label(args.size).lower()}.db"
        with nullcontext(made) if args.keep else dropped_after(maintenance, made) as database:
            print(f"building {_label(args.size)} ...", flush=True)
            asyncio.run(_fill_postgres(database, args.size))
            build_store(sqlite, args.size, incremental=0)
            print(render(asyncio.run(measure({"postgres": database, "sqlite": str(sqlite)},
                                             args.rounds))))
            if args.keep:
                print(f"kept {database} and {sqlite}")
    print(f"\nload {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    run_main(main)
