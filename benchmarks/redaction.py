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

from benchmarks.generate import generate, parse_size, to_json_line
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.ingest import ingest_file, read_conversations
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


async def _ingest(source: Path, db: Path, *, redact: bool) -> tuple[float, int]:
    store = SqliteStore.open(db).unwrap()
    try:
        started = time.perf_counter()
        summary = await ingest_file(source, store, progress=False, redact=redact)
        return time.perf_counter() - started, summary.secrets.total
    finally:
        store.close()


def measure(messages: int, runs: int, folder: Path) -> dict[str, tuple[float, int]]:
    """Median seconds (and secrets found) per mode over ``runs`` alternating runs."""
    source = folder / "corpus.jsonl"
    write_corpus(source, messages)
    times: dict[str, list[float]] = {"plain": [], "redacted": []}
    found = {"plain": 0, "redacted": 0}
    for run in range(runs):
        for mode in ("plain", "redacted") if run % 2 == 0 else ("redacted", "plain"):
            db = folder / f"{mode}-{run}.db"
            seconds, secrets = asyncio.run(_ingest(source, db, redact=mode == "redacted"))
            times[mode].append(seconds)
            found[mode] = secrets
    medians = {mode: (statistics.median(values), found[mode]) for mode, values in times.items()}
    return {**medians, "redaction alone": redaction_alone(source, runs)}


def redaction_alone(source: Path, runs: int) -> tuple[float, int]:
    """Median seconds :func:`redact_all` takes over the corpus (parsed beforehand)."""
    with source.open(encoding="utf-8") as lines:
        chats = [chat for _, chat in read_conversations(lines, lambda _: None)]
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        _, counts = redact_all(chats)
        times.append(time.perf_counter() - started)
    return statistics.median(times), counts.total


def table(messages: int, results: dict[str, tuple[float, int]]) -> str:
    """A Markdown table: seconds, messages per second, secrets found, the cost."""
    plain = results["plain"][0]
    lines = ["| ingest | seconds | messages/s | secrets | cost |", "|---|---|---|---|---|"]
    for mode, (seconds, secrets) in results.items():
        share = seconds / plain if mode == "redaction alone" else seconds / plain - 1
        cost = "-" if mode == "plain" else f"{share:+.1%} (target <= {TARGET:.0%})"
        lines.append(f"| {mode} | {seconds:.2f} | {messages / seconds:,.0f} | {secrets} | {cost} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.redaction")
    parser.add_argument("--size", type=parse_size, default=parse_size("20k"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        results = measure(args.size, args.runs, Path(folder))
    print(table(args.size, results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
