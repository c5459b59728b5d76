"""Do the SQLite and PostgreSQL stores rank one corpus alike? Top-5 agreement on LongMemEval.

    .venv/bin/python -m benchmarks.agreement_postgres \\
        --data /work/shared/data/longmemeval-dev/longmemeval_s_cleaned.json.gz [--url URL]

Every distinct haystack session goes once into a SQLite file and into a PostgreSQL database
(on ``--url``'s server, dropped after, or a throwaway local one); every question is then
asked of both through the default ranker and the resolve stage (the retrieval benchmark's
pooled protocol, asked at the question's date). It prints how many questions got the same
set of five first sessions (issue 21's target: at least 99 %) and the same order, with the
first few that differ.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.arguments import count
from benchmarks.entry import run_main
from benchmarks.longmemeval import Dataset
from benchmarks.retrieval import ingest, rank
from benchmarks.scale_postgres import dropped_after, fresh_database, open_postgres, server
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.match.rankers import RANKERS
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation

TOP = 5
TARGET = 0.99


async def _filled(store: SessionStore, conversations: Sequence[Conversation]) -> float:
    started = time.perf_counter()
    await ingest(store, conversations)  # type: ignore[arg-type]
    return time.perf_counter() - started


async def compare(data: Dataset, sqlite: SqliteStore, postgres: PostgresStore, *,
                  limit: int | None) -> tuple[int, int, int, list[str]]:
    """Questions asked, with the same top-5 set, with the same top-5 order; the first
    differences."""
    match = RANKERS["lexical"]
    asked = same_set = same_order = 0
    differ: list[str] = []
    for question in data.questions[:limit]:
        on_sqlite, _ = await rank(sqlite, match, question)
        on_postgres, _ = await rank(postgres, match, question)
        asked += 1
        same_set += set(on_sqlite[:TOP]) == set(on_postgres[:TOP])
        same_order += on_sqlite[:TOP] == on_postgres[:TOP]
        if set(on_sqlite[:TOP]) != set(on_postgres[:TOP]) and len(differ) < 5:
            differ.append(f"{question.id}: {on_sqlite[:TOP]} vs {on_postgres[:TOP]}")
    return asked, same_set, same_order, differ


async def run(data: Dataset, url: str, folder: Path, limit: int | None) -> int:
    """Fill both stores, compare them, print the table; 0 when the target is met."""
    conversations = data.pooled()
    sqlite = SqliteStore.open(folder / "pooled.db").unwrap()
    postgres = open_postgres(url)
    try:
        sqlite_s = await _filled(sqlite, conversations)
        postgres_s = await _filled(postgres, conversations)
        (await postgres.optimize().awaitable()).unwrap()
        messages = sum(len(c.messages) for c in conversations)
        print(f"{len(conversations)} sessions, {messages} messages; ingest SQLite "
              f"{messages / sqlite_s:,.0f} msg/s, PostgreSQL {messages / postgres_s:,.0f} msg/s",
              flush=True)
        asked, same_set, same_order, differ = await compare(data, sqlite, postgres,
                                                            limit=limit)
    finally:
        sqlite.close()
        postgres.close()
    share = same_set / asked if asked else 0.0
    print()
    print("| questions | same top-5 set | same top-5 order | target (set) |")
    print("|---:|---:|---:|---|")
    print(f"| {asked} | {same_set} ({share:.1%}) | {same_order} ({same_order / max(asked, 1):.1%})"
          f" | ≥ {TARGET:.0%}: {'ok' if share >= TARGET else 'missed'} |")
    for line in differ:
        print(f"  differs: {line}")
    return 0 if share >= TARGET else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.agreement_postgres",
                                     description=__doc__)
    parser.add_argument("--data", type=Path, required=True, help="a LongMemEval JSON file")
    parser.add_argument("--url", default=None,
                        help="a server's maintenance database (default: a throwaway server)")
    parser.add_argument("--limit", type=count, default=None, help="ask only the first N")
    args = parser.parse_args(argv)
    data = Dataset.read(args.data)
    with server(args.url) as maintenance, tempfile.TemporaryDirectory() as folder:
        database = fresh_database(maintenance, len(data.questions))
        with dropped_after(maintenance, database):  # a --url server keeps none of ours
            return asyncio.run(run(data, database, Path(folder), args.limit))


if __name__ == "__main__":
    run_main(main)
