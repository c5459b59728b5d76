"""A large import shared with small ingests and searches: every writer gets its turn.

    .venv/bin/python -m benchmarks.shared_writers [--mb 100] [--ingests 20]

Writes a JSON-lines file of ``--mb`` megabytes (sessions of about 200 KB, as the issue's
"one ~100 MB batch of 500 sessions"), starts ``harkback import jsonl`` on it as a process,
and while it runs starts ``--ingests`` one-session ``harkback ingest`` processes, one
after another, each with a word of its own; meanwhile this process searches the store
over a connection of its own. It reports whether every process finished with status 0,
how many sessions are missing afterwards, how many searches failed, and their p50/p95.
The test suite runs it at a few megabytes (``tests/benchmarks/test_shared_writers.py``);
:mod:`benchmarks.soak` runs it at 100 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from benchmarks.entry import run_main
from benchmarks.metrics import percentile
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback

SESSION_BYTES = 200_000
"""About this much JSON per session of the large import."""

MESSAGE_CHARS = 2_000

WORDS = [f"w{n:04d}" for n in range(4_000)] + "docker bridge network deploy rollback".split()


def harkback_argv(*args: str) -> list[str]:
    """The command line of a harkback process run by this interpreter."""
    return [sys.executable, "-m", "harkback.pipeline.cli", *args]


def write_large_input(path: Path, megabytes: float, seed: int = 7) -> int:
    """Write sessions ``big-N`` of about :data:`SESSION_BYTES` each; return how many."""
    rng = random.Random(seed)
    paragraphs = [" ".join(rng.choices(WORDS, k=MESSAGE_CHARS // 6)) for _ in range(200)]
    count = max(1, int(megabytes * 1_000_000 / SESSION_BYTES))
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            messages = [{"role": "user" if i % 2 == 0 else "assistant",
                         "content": f"{rng.choice(paragraphs)} big{index}x{i}",
                         "timestamp": 1_760_000_000 + index * 60 + i}
                        for i in range(SESSION_BYTES // (MESSAGE_CHARS + 60))]
            handle.write(json.dumps({"id": f"big-{index}", "source": "cli",
                                     "started_at": 1_760_000_000 + index * 60,
                                     "messages": messages}) + "\n")
    return count


def write_small_input(path: Path, index: int) -> str:
    """One session ``small-N`` whose user message holds the word ``lonelyN``."""
    session = f"small-{index}"
    path.write_text(json.dumps({"id": session, "source": "cli", "started_at": 1_770_000_000,
                                "messages": [{"role": "user",
                                              "content": f"lonely{index} docker bridge"}]})
                    + "\n", encoding="utf-8")
    return session


@attrs.frozen(kw_only=True)
class SharedRun:
    """What one run of the scenario saw."""

    megabytes: float
    import_status: int
    import_seconds: float
    ingest_statuses: tuple[int, ...]
    overlapped: int
    ingest_errors: tuple[str, ...]
    lost_sessions: int
    searches: int
    failed_searches: int
    search_p50_ms: float
    search_p95_ms: float

    @property
    def ok(self) -> bool:
        """Every process finished with status 0, nothing lost, no search failed."""
        return (self.import_status == 0 and all(s == 0 for s in self.ingest_statuses)
                and self.lost_sessions == 0 and self.failed_searches == 0)

    def table(self) -> str:
        """The figures as a Markdown table."""
        ok = sum(1 for s in self.ingest_statuses if s == 0)
        rows = [("input", f"{self.megabytes:g} MB, one `harkback import jsonl`"),
                ("import", f"status {self.import_status}, {self.import_seconds:.1f} s"),
                ("one-session ingests during it", f"{ok}/{len(self.ingest_statuses)} status 0 "
                                                  f"({self.overlapped} started mid-import)"),
                ("lost sessions", str(self.lost_sessions)),
                ("searches during the import", f"{self.searches} ({self.failed_searches} "
                                               "failed)"),
                ("search p50 / p95", f"{self.search_p50_ms:.0f} ms / "
                                     f"{self.search_p95_ms:.0f} ms")]
        return "\n".join(["| shared writers | |", "|---|---|",
                          *(f"| {name} | {value} |" for name, value in rows)])


async def _search_until(db: Path, done: asyncio.Event, times: list[float],
                        failures: list[str]) -> None:
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        hb = Harkback(store=store)
        while not done.is_set():
            started = time.perf_counter()
            response = await hb.search("docker bridge", limit=5)
            times.append(time.perf_counter() - started)
            payload = response.to_payload()
            if not payload["success"]:
                failures.append(str(payload.get("error")))
            await asyncio.sleep(0.02)


async def _stopped(processes: Sequence[asyncio.subprocess.Process]) -> None:
    """Kill the commands still running: an interrupted run (``kill -INT`` of this process
    alone) would otherwise leave the import and the ingests writing into a temporary
    folder that is gone."""
    for process in processes:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()


async def _run_processes(db: Path, large: Path, smalls: Sequence[Path], gap_s: float,
                         done: asyncio.Event
                         ) -> tuple[int, float, list[int], int, list[str]]:
    started = time.monotonic()
    importer = await asyncio.create_subprocess_exec(
        *harkback_argv("import", "jsonl", str(large), "--db", str(db), "--no-progress"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ingests: list[asyncio.subprocess.Process] = []
    overlapped = 0
    try:
        for small in smalls:
            await asyncio.sleep(gap_s)
            ingests.append(await asyncio.create_subprocess_exec(
                *harkback_argv("ingest", str(small), "--db", str(db), "--no-progress"),
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
            overlapped += importer.returncode is None
        statuses, errors = [], []
        for process in ingests:
            _, err = await process.communicate()
            statuses.append(process.returncode if process.returncode is not None else -1)
            if process.returncode:
                errors.append(err.decode(errors="replace").strip())
        _, err = await importer.communicate()
    finally:
        await _stopped([importer, *ingests])
    seconds = time.monotonic() - started
    done.set()
    if importer.returncode:
        errors.append(err.decode(errors="replace").strip())
    return importer.returncode or 0, seconds, statuses, overlapped, errors


async def run_shared(folder: Path, megabytes: float, ingests: int = 20,
                     gap_s: float = 0.1) -> SharedRun:
    """Run the scenario in ``folder`` (see the module) and return what it saw."""
    db, large = folder / "shared.db", folder / "large.jsonl"
    count = write_large_input(large, megabytes)
    smalls = [folder / f"small-{i}.jsonl" for i in range(ingests)]
    ids = [write_small_input(path, i) for i, path in enumerate(smalls)]
    seed = folder / "seed.jsonl"
    write_small_input(seed, ingests)  # the store exists before the searches start
    subprocess.run(harkback_argv("ingest", str(seed), "--db", str(db)), check=True,
                   capture_output=True)
    done = asyncio.Event()
    times: list[float] = []
    failures: list[str] = []
    searching = asyncio.create_task(_search_until(db, done, times, failures))
    status, seconds, statuses, overlapped, errors = await _run_processes(
        db, large, smalls, gap_s, done)
    await searching
    expected = {f"big-{i}" for i in range(count)} | set(ids)
    with sqlite3.connect(db) as raw:
        stored = {row[0] for row in raw.execute("SELECT id FROM sessions")}
    raw.close()
    ms = sorted(t * 1000 for t in times)
    return SharedRun(megabytes=megabytes, import_status=status, import_seconds=seconds,
                     ingest_statuses=tuple(statuses), overlapped=overlapped,
                     ingest_errors=tuple(errors + failures),
                     lost_sessions=len(expected - stored), searches=len(times),
                     failed_searches=len(failures),
                     search_p50_ms=percentile(ms, 50) if ms else 0.0,
                     search_p95_ms=percentile(ms, 95) if ms else 0.0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the scenario once in a temporary folder and print its table."""
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mb", type=float, default=100.0, help="size of the large import")
    parser.add_argument("--ingests", type=int, default=20)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        run = asyncio.run(run_shared(Path(tmp), args.mb, args.ingests))
    print(run.table())
    for error in run.ingest_errors:
        print(f"error: {error}")
    return 0 if run.ok else 1


if __name__ == "__main__":
    run_main(main)
