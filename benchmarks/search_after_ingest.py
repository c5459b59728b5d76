"""A search on PostgreSQL right after another machine's small ingest: exact counts brought
forward over the new rows, against counted again over the index (issue 21).

    .venv/bin/python -m benchmarks.search_after_ingest --size 100k [--rounds 8]
        [--url postgresql://...] [--database postgresql://.../name]

Builds the scale benchmark's corpus of ``--size`` messages in a fresh database (on
``--url``'s server, dropped after, or a throwaway local one; ``--database`` uses a store
built before, e.g. by ``benchmarks.scale_postgres --keep``), then opens two long-lived
``Harkback``s on it, each with its own store and count memo, and a writer's store. Every
round asks each query of the soak's mix of both, alternating which goes first; before each
search the writer ingests one 10-message session, so both always search right after a
write. One brings exact counts forward
(:data:`~harkback.adapters.stores.postgres_memo.CATCH_UP`), the other counts them again as
before; a third figure is the same search again with no write between. It prints the median
wall time of ``search`` per query and over all.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Sequence
from typing import Any

from benchmarks.arguments import count, size
from benchmarks.entry import run_main
from benchmarks.generate import generate
from benchmarks.metrics import percentile
from benchmarks.scale import BATCH, QUERY_MIX, SEED, _timed_ingest
from benchmarks.scale_postgres import dropped_after, fresh_database, open_postgres, server
from harkback.adapters.stores import postgres_memo
from harkback.pipeline.facade import Harkback
from harkback.pipeline.ingest import chunked
from harkback.stages.records import Conversation, Message, Session

QUERIES = tuple((label, query) for label, query in QUERY_MIX if query)
MODES = ("counted again", "brought forward")


def small_session(number: int) -> Conversation:
    """One session of 10 messages, as the soak's writers ingest them."""
    sid = f"after-{number}"
    return Conversation(
        Session(id=sid, source="bench", started_at=time.time()),
        tuple(Message(session_id=sid, position=i, role="user" if i % 2 == 0 else "assistant",
                      content=f"writer note {number} step {i} docker bridge error config "
                              "server") for i in range(10)))


async def _search(hb: Harkback, query: str) -> tuple[float, float]:
    """The whole search's wall milliseconds and its match stage's."""
    started = time.perf_counter()
    response = await hb.search(query, limit=5)
    spent = (time.perf_counter() - started) * 1000
    if not response.ok:
        raise SystemExit(f"{query!r}: {response.to_payload()}")
    return spent, dict(response.timings)["match"]


Times = dict[str, dict[str, list[tuple[float, float]]]]
"""Each search's milliseconds (whole, match stage), by query label, then by mode."""


async def measure(url: str, rounds: int) -> Times:
    """Time every search, by query label, then by mode (and ``no write``)."""
    stores = [open_postgres(url) for _ in range(3)]
    writer, *readers = stores
    facades = dict(zip(MODES, (Harkback(store=s) for s in readers), strict=True))
    times: Times = {
        label: {mode: [] for mode in (*MODES, "no write")} for label, _ in QUERIES}
    written = 0
    try:
        for mode, hb in facades.items():  # warm-up: first touch of the pages, counts kept
            postgres_memo.CATCH_UP = mode == MODES[1]
            for _, query in QUERIES:
                await _search(hb, query)
        for round_ in range(rounds):
            for label, query in QUERIES:
                for mode in MODES if round_ % 2 == 0 else MODES[::-1]:
                    (await writer.ingest([small_session(written)]).awaitable()).unwrap()
                    written += 1
                    postgres_memo.CATCH_UP = mode == MODES[1]
                    times[label][mode].append(await _search(facades[mode], query))
                    if mode == MODES[1]:
                        times[label]["no write"].append(await _search(facades[mode], query))
    finally:
        postgres_memo.CATCH_UP = True
        for store in stores:
            await asyncio.to_thread(store.close)
    return times


def render(times: Times, load: tuple[float, float]) -> str:
    """The table of medians (match stage, then the whole search), and the load average
    before and after."""
    rows = [(label, by_mode) for label, by_mode in times.items()]
    rows.append(("all queries", {mode: [t for _, m in rows for t in m[mode]]
                                 for mode in (*MODES, "no write")}))
    lines = ["Search right after another connection's 10-message ingest, median ms "
             "(match stage; whole search):", "",
             f"| query | {MODES[0]} | {MODES[1]} | ratio | no write "
             f"| search: {MODES[0]} | {MODES[1]} | no write |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, by_mode in rows:
        old, new, still = (percentile([t[1] for t in by_mode[m]], 50)
                           for m in (*MODES, "no write"))
        whole = (percentile([t[0] for t in by_mode[m]], 50) for m in (*MODES, "no write"))
        lines.append(f"| {label} | {old:.1f} | {new:.1f} | {new / old:.2f} | {still:.1f} | "
                     + " | ".join(f"{w:.1f}" for w in whole) + " |")
    lines.append(f"\nload average {load[0]:.2f} before, {load[1]:.2f} after")
    return "\n".join(lines)


async def build(url: str, size: int) -> int:
    """Ingest the scale corpus of ``size`` messages at ``url`` and optimize; returns how
    many messages."""
    store = open_postgres(url)
    try:
        count, _, _ = await _timed_ingest(store, chunked(generate(size, SEED), BATCH))
        (await store.optimize().awaitable()).unwrap()
    finally:
        await asyncio.to_thread(store.close)
    return count


def main(argv: Sequence[str] | None = None) -> int:
    """Build (or open) the store, measure, print the table."""
    parser = argparse.ArgumentParser(prog="benchmarks.search_after_ingest")
    parser.add_argument("--size", type=size, default="100k")
    parser.add_argument("--rounds", type=count, default=8)
    parser.add_argument("--url", help="a server's maintenance database (default: a "
                                      "throwaway local server)")
    parser.add_argument("--database", help="a store built before: measure only")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    if args.database:
        times: Any = asyncio.run(measure(args.database, args.rounds))
    else:
        with server(args.url) as maintenance:
            url = fresh_database(maintenance, args.size)
            print(f"building {args.size:,} messages in {url}",
                  flush=True)
            with dropped_after(maintenance, url):  # a --url server keeps none of ours
                asyncio.run(build(url, args.size))
                load = os.getloadavg()[0]
                times = asyncio.run(measure(url, args.rounds))
    print(render(times, (load, os.getloadavg()[0])))
    return 0


if __name__ == "__main__":
    run_main(main)
