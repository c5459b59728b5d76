"""Speed at scale on PostgreSQL: the scale benchmark's corpus and query mix, against the
PostgreSQL store.

    .venv/bin/python -m benchmarks.scale_postgres --sizes 100k,1m [--url postgresql://...]

For each size it creates a fresh database (on ``--url``'s server, or on a throwaway local
server with PostgreSQL's crash-safe defaults, started like the tests' one), ingests the
generated corpus (:mod:`benchmarks.generate`) in batches of 500 sessions (each one
transaction, messages by ``COPY``; the store's close, which waits for the merge of the
index's pending list, is timed with the ingest), runs ``optimize`` (``VACUUM ANALYZE``),
then asks the query mix of :mod:`benchmarks.scale` through the default pipeline in this
process, every stage timed through the facade. It prints a table beside the targets of issue 21.

``--first-asks N`` also times each query asked first in a fresh store (as a new
``harkback search`` process asks it), counting every word and trusting the planner's
statistics, alternating; with ``--database URL`` it times only that, on a store built
before (``--keep``).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from returns.result import Failure

from benchmarks.arguments import count, sizes
from benchmarks.entry import run_main
from benchmarks.extras import needs_extra
from benchmarks.generate import generate
from benchmarks.scale import (
    BATCH,
    QUERY_MIX,
    SEED,
    STAGES,
    _label,
    _percentile,
    _timed_ingest,
    _vs,
)

try:
    import psycopg
    from psycopg import sql

    from harkback.adapters.stores import postgres_statistics
    from harkback.adapters.stores.postgres import PostgresStore
except ImportError as missing:
    raise needs_extra("postgres", missing) from None
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback
from harkback.pipeline.ingest import chunked

TARGETS = {"bulk": 20_000.0, "match_p50": 50.0, "stages_p50": 80.0}
"""Issue 21's targets at 1M messages: ingest msg/s, match and five-stage p50 ms."""

_databases = itertools.count()


@contextmanager
def server(url: str | None) -> Iterator[str]:
    """The URL of a server's maintenance database: ``url``'s, or a throwaway local one
    (stopped and removed when the block ends, however it ends). A machine without
    PostgreSQL's server, or a clone without the dev extra, ends the run with one line."""
    if url is not None:
        yield url
        return
    try:
        from tests.support.postgres_server import INSTALL_HINT, running_server, server_binaries
    except ImportError as error:  # tests/support needs pytest: the dev extra
        raise SystemExit(f"a throwaway PostgreSQL server needs the dev extra ({error}): "
                         "pip install -e '.[dev]', or pass --url") from None
    if server_binaries() is None:
        raise SystemExit(INSTALL_HINT.replace("these tests", "this benchmark")
                         + "; or pass --url")
    servers = running_server(durable=True)
    try:
        yield next(servers).url()
    finally:
        servers.close()  # now, not whenever the generator is collected


def _connected(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection to ``url``, or the run ends with one line saying why."""
    try:
        return psycopg.connect(url, autocommit=True)
    except psycopg.Error as error:
        reason = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        raise SystemExit(f"cannot reach the PostgreSQL server at {url}: {reason}") from None


def open_postgres(url: str) -> PostgresStore:
    """The store at ``url``, or the run ends with the store's one-line reason."""
    opened = PostgresStore.open(url)
    if isinstance(opened, Failure):
        raise SystemExit(f"{url}: {opened.failure().message()}")
    return opened.unwrap()


def fresh_database(url: str, size: int) -> str:
    """A new, empty database on ``url``'s server (an older one of that name is dropped)."""
    name = f"harkback_scale_{_label(size).lower()}_{os.getpid()}_{next(_databases)}"
    with _connected(url) as connection:
        connection.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    parts = psycopg.conninfo.conninfo_to_dict(url)
    parts["dbname"] = name
    return psycopg.conninfo.make_conninfo(**parts)  # type: ignore[arg-type]


async def measure(url: str, size: int, *, seed: int, repeat: int) -> dict[str, Any]:
    """Build the store of ``size`` messages at ``url`` and time ingest and the query mix."""
    store = open_postgres(url)
    spent = cpu = 0.0  # a failed ingest's own error is raised, not this block's
    try:
        count, spent, cpu = await _timed_ingest(store, chunked(generate(size, seed), BATCH))
    finally:
        # The load is one `harkback ingest`: its store's close, which waits for the merge
        # of the index's pending list that the last writes left, is timed with it.
        started, cpu_started = time.perf_counter(), time.process_time()
        await asyncio.to_thread(store.close)
        spent += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
    store = open_postgres(url)
    try:
        started = time.perf_counter()
        (await store.optimize().awaitable()).unwrap()
        optimize_s = time.perf_counter() - started
        harkback = Harkback(store=store, pipeline=Pipeline())
        for _, query in QUERY_MIX:  # warm-up: first touch of the pages
            await harkback.search(query)
        samples: list[dict[str, Any]] = []
        for _round in range(repeat):
            for label, query in QUERY_MIX:
                response = await harkback.search(query)
                if not response.ok:
                    raise SystemExit(f"{label}: {response.to_payload()}")
                samples.append({"query": label, "timings": dict(response.timings)})
    finally:
        await asyncio.to_thread(store.close)
    stages = {stage: _percentile([s["timings"][stage] for s in samples
                                  if stage in s["timings"]], 0.5) for stage in STAGES}
    totals = [sum(s["timings"].values()) for s in samples if "match" in s["timings"]]
    matches = [s["timings"]["match"] for s in samples if "match" in s["timings"]]
    return {"messages": count, "bulk_rate": count / spent, "client_cpu": cpu / spent,
            "optimize_s": optimize_s,
            "match_p50": _percentile(matches, 0.5), "match_p95": _percentile(matches, 0.95),
            "stages_p50": _percentile(totals, 0.5), "stages_p95": _percentile(totals, 0.95),
            "stage_p50": stages,
            "match_by_query": {label: _percentile([s["timings"]["match"] for s in samples
                                                   if s["query"] == label
                                                   and "match" in s["timings"]], 0.5)
                               for label, query in QUERY_MIX if query}}


async def first_asks(url: str, rounds: int) -> dict[str, tuple[float, float]]:
    """Median match ms of each query of the mix asked first in a fresh store (as a new
    ``harkback search`` process asks it): counting every word, then trusting the planner's
    statistics for words far past the count limit, alternating, ``rounds`` times each."""
    times: dict[str, tuple[list[float], list[float]]] = {
        label: ([], []) for label, query in QUERY_MIX if query}
    for _round in range(rounds):
        for label, query in QUERY_MIX:
            for trust in ((False, True) if query else ()):
                postgres_statistics.TRUST_STATISTICS = trust
                store = open_postgres(url)
                try:
                    response = await Harkback(store=store, pipeline=Pipeline()).search(query)
                finally:
                    await asyncio.to_thread(store.close)
                if not response.ok:
                    raise SystemExit(f"{label}: {response.to_payload()}")
                times[label][trust].append(dict(response.timings)["match"])
    postgres_statistics.TRUST_STATISTICS = True
    return {label: (_percentile(exact, 0.5), _percentile(trusted, 0.5))
            for label, (exact, trusted) in times.items()}


def render_first(asks: dict[str, tuple[float, float]]) -> str:
    """The first-ask table."""
    return "\n".join(["First ask in a fresh store, match median ms:", "",
                      "| query | counted | statistics trusted | ratio |", "|---|---:|---:|---:|",
                      *(f"| {label} | {exact:.1f} | {trusted:.1f} | {trusted / exact:.2f} |"
                        for label, (exact, trusted) in asks.items())])


COLUMNS = (("ingest msg/s", "bulk_rate", "{:,.0f}"), ("client CPU share", "client_cpu", "{:.0%}"),
           ("optimize s", "optimize_s", "{:.1f}"),
           ("match p50 ms", "match_p50", "{:.1f}"), ("match p95", "match_p95", "{:.1f}"),
           ("five stages p50 ms", "stages_p50", "{:.1f}"), ("p95", "stages_p95", "{:.1f}"))
"""The main table's columns: heading, field, format."""


def render(rows: Sequence[dict[str, Any]]) -> str:
    """The tables printed at the end of a run."""
    lines = ["| messages | " + " | ".join(head for head, _, _ in COLUMNS) + " |",
             "|---:" * (len(COLUMNS) + 1) + "|"]
    lines += ["| " + " | ".join([_label(r["messages"]),
                                 *(form.format(r[field]) for _, field, form in COLUMNS)]) + " |"
              for r in rows]
    last = rows[-1]
    lines += ["", f"Match stage by query at {_label(last['messages'])}, median ms:", "",
              "| query | match |", "|---|---:|"]
    lines += [f"| {label} | {ms:.1f} |" for label, ms in last["match_by_query"].items()]
    lines += ["", f"Targets (issue 21, at 1M) against {_label(last['messages'])}:", "",
              "| target | measured | verdict |", "|---|---:|---|"]
    lines += [f"| {name} | {last[field]:,.1f} | "
              f"{_vs(last[field], TARGETS[key], higher_is_better=key == 'bulk')} |"
              for name, field, key in (("ingest ≥ 20,000 msg/s", "bulk_rate", "bulk"),
                                       ("match p50 ≤ 50 ms", "match_p50", "match_p50"),
                                       ("five stages p50 ≤ 80 ms", "stages_p50", "stages_p50"))]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Build, measure and print the table."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale_postgres",
                                     description=__doc__)
    parser.add_argument("--sizes", type=sizes, default="100k",
                        help="comma-separated message counts")
    parser.add_argument("--url", default=None,
                        help="a server's maintenance database (default: a throwaway server)")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--repeat", type=count, default=5, help="rounds of the query mix")
    parser.add_argument("--keep", action="store_true", help="keep the databases built")
    parser.add_argument("--first-asks", type=int, default=0, metavar="ROUNDS",
                        help="also time each query asked first in a fresh store")
    parser.add_argument("--database", default=None,
                        help="only time first asks on this existing store (a URL)")
    args = parser.parse_args(argv)
    if args.database is not None:
        print(render_first(asyncio.run(first_asks(args.database, max(args.first_asks, 1)))))
        print(f"\nload {os.getloadavg()[0]:.2f}")
        return 0
    rows = []
    with server(args.url) as maintenance:
        for size in args.sizes:
            database = fresh_database(maintenance, size)
            print(f"building {_label(size)} in {database.split('dbname=')[-1]} ...", flush=True)
            rows.append(asyncio.run(measure(database, size, seed=args.seed,
                                            repeat=args.repeat)))
            if args.first_asks:
                rows[-1]["first_asks"] = asyncio.run(first_asks(database, args.first_asks))
            print(f"  ingest {rows[-1]['bulk_rate']:,.0f} msg/s, match p50 "
                  f"{rows[-1]['match_p50']:.1f} ms; load {os.getloadavg()[0]:.2f}", flush=True)
            if not args.keep:
                drop_database(maintenance, database)
    print()
    print(render(rows))
    if "first_asks" in rows[-1]:
        print()
        print(render_first(rows[-1]["first_asks"]))
    return 0


@contextmanager
def dropped_after(maintenance: str, database: str) -> Iterator[str]:
    """``database``, dropped from ``maintenance``'s server when the block ends. When the
    block ends by an error, a drop that fails too (a Ctrl-C stops a throwaway server as
    well) does not hide that error."""
    try:
        yield database
    except BaseException:
        with suppress(SystemExit):
            drop_database(maintenance, database)
        raise
    drop_database(maintenance, database)


def drop_database(maintenance: str, database: str) -> None:
    """Drop the database at URL ``database`` from ``maintenance``'s server."""
    name = psycopg.conninfo.conninfo_to_dict(database)["dbname"]
    with _connected(maintenance) as connection:
        connection.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(
            sql.Identifier(str(name))))


if __name__ == "__main__":
    run_main(main)
