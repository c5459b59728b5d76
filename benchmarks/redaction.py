"""Ingest throughput with and without secret redaction, on the synthetic corpus.

Builds one JSON-lines file of ``--size`` generated messages (see :mod:`benchmarks.generate`,
with a few secrets sprinkled in), then ingests it into fresh SQLite files, alternating
plain and redacting runs (and which goes first, since a run pays for the disk writes the
one before it left) so both see the same machine load, and prints the medians. A last row
times the redaction alone over the parsed corpus, in process: on a shared machine it is
the steadier measure of what redaction adds::

    python -m benchmarks.redaction --size 20k --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks.arguments import count, size
from benchmarks.entry import run_main
from benchmarks.generate import generate, to_json_line
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.importing import ingest_file
from harkback.pipeline.ingest import read_conversations
from harkback.stages.redact.scrub import redact_all

TARGET = 0.15
"""The most redaction may cost, as a share of plain ingest throughput."""


def write_corpus(path: Path, messages: int) -> None:
    """The generated corpus, one session in fifty carrying an AWS key in its first message."""
    with path.open("w", encoding="utf-8") as out:
        for index, chat in enumerate(generate(messages, seed=7)):
            line = to_json_line(chat)
            if index % 50 == 0 and chat.messages:
                line = line.replace('"content": "', '"content": "AKIAIOSFODNN7EXAMPLE ', 1)
            out.write(line + "\n")


Row = tuple[float, float, int]
"""Median wall seconds, median CPU seconds (every thread of the process), secrets found."""


async def _ingest(source: Path, db: Path, *, redact: bool) -> tuple[float, float, int]:
    store = SqliteStore.open(db).unwrap()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        summary = await ingest_file(source, store, progress=False, redact=redact)
        return (time.perf_counter() - wall, time.process_time() - cpu, summary.secrets.total)
    finally:
        store.close()


def _median(rows: list[tuple[float, float, int]]) -> Row:
    return (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
            rows[-1][2])


def measure(messages: int, runs: int, folder: Path) -> dict[str, Row]:
    """Medians per mode over ``runs`` alternating runs, and redaction alone."""
    source = folder / "corpus.jsonl"
    write_corpus(source, messages)
    done: dict[str, list[tuple[float, float, int]]] = {"plain": [], "redacted": []}
    for run in range(runs):
        for mode in ("plain", "redacted") if run % 2 == 0 else ("redacted", "plain"):
            db = folder / f"{mode}-{run}.db"
            done[mode].append(asyncio.run(_ingest(source, db, redact=mode == "redacted")))
    return {"plain": _median(done["plain"]), "redacted": _median(done["redacted"]),
            "redaction alone": redaction_alone(source, runs)}


def redaction_alone(source: Path, runs: int) -> Row:
    """Medians of :func:`redact_all` over the corpus (parsed beforehand)."""
    with source.open(encoding="utf-8") as lines:
        chats = [chat for _, chat in read_conversations(lines, lambda _: None)]
    rows = []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        _, counts = redact_all(chats)
        rows.append((time.perf_counter() - wall, time.process_time() - cpu, counts.total))
    return _median(rows)


def table(messages: int, results: dict[str, Row]) -> str:
    """A Markdown table: seconds (wall and CPU), messages per second, secrets found, and
    what redaction costs beside plain ingest, by wall and by CPU time."""
    plain_wall, plain_cpu, _ = results["plain"]
    lines = ["| ingest | wall s | CPU s | messages/s | secrets | cost (wall) | cost (CPU) |",
             "|---|---|---|---|---|---|---|"]
    for mode, (wall, cpu, secrets) in results.items():
        extra = 0.0 if mode == "redaction alone" else 1.0
        costs = ("-", "-") if mode == "plain" else (
            f"{wall / plain_wall - extra:+.1%}", f"{cpu / plain_cpu - extra:+.1%}")
        lines.append(f"| {mode} | {wall:.2f} | {cpu:.2f} | {messages / wall:,.0f} | {secrets} "
                     f"| {costs[0]} | {costs[1]} |")
    lines.append(f"\ntarget: redaction costs at most {TARGET:.0%} of plain ingest")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.redaction")
    parser.add_argument("--size", type=size, default="20k")
    parser.add_argument("--runs", type=count, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        results = measure(args.size, args.runs, Path(folder))
    print(table(args.size, results))
    return 0


if __name__ == "__main__":
    run_main(main)
