"""Search as a person meets it: one new ``harkback search`` process per question.

    .venv/bin/python -m benchmarks.cold_search --db benchmarks/out/scale-1M.db --rounds 3

Each question of :data:`benchmarks.scale.QUERY_MIX` (recent mode left out) runs as the
command a person types, with no model configured, so the default (extractive) summary;
the stage timings come from its ``--json`` payload and the wall time from outside, so
the interpreter's start-up, opening the file and a cold page cache all count. The
process's CPU time (user and system, from the operating system's accounting of the
finished child) is kept too: on a machine shared with other jobs it moves much less
than the wall-clock figures, which include the wait for a core.
:mod:`benchmarks.scale` runs it on each store it builds, right after the bulk ingest
and with no ``optimize``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.arguments import count
from benchmarks.entry import run_main
from benchmarks.metrics import percentile

MODEL_VARIABLES = ("HARKBACK_MODEL", "HARKBACK_EMBEDDER", "HARKBACK_DB")
"""Settings a person's environment may hold that would change what is measured."""


def user_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The caller's environment as a person's shell would give it to harkback: no model,
    embedder or store from the caller's settings, and bytecode cached as an installed
    package's is (pip compiles it). Under ``PYTHONDONTWRITEBYTECODE`` every new process
    would compile harkback's sources again: ~70 ms of a search process here, some of it
    inside the match stage (modules it imports on first use).

    >>> user_environment({"PATH": "/bin", "PYTHONDONTWRITEBYTECODE": "1", "HARKBACK_DB": "x"})
    {'PATH': '/bin'}
    """
    dropped = (*MODEL_VARIABLES, "PYTHONDONTWRITEBYTECODE")
    return {k: v for k, v in environ.items() if k not in dropped}


def cold_samples(db: Path, queries: Sequence[tuple[str, str]], rounds: int
                 ) -> list[dict[str, Any]]:
    """Run each non-empty query ``rounds`` times, each in a new process; one sample each
    (after one untimed search that leaves the bytecode cached)."""
    env = user_environment()
    warm_up = [sys.executable, "-m", "harkback.pipeline.cli", "search", "warm up", "--db",
               str(db), "--json"]
    subprocess.run(warm_up, capture_output=True, text=True, env=env, check=False, timeout=300)
    samples: list[dict[str, Any]] = []
    for round_ in range(rounds):
        for label, query in queries:
            if not query:
                continue
            command = [sys.executable, "-m", "harkback.pipeline.cli", "search", query,
                       "--db", str(db), "--json"]
            started, cpu_before = time.perf_counter(), _children_cpu()
            done = subprocess.run(command, capture_output=True, text=True, env=env,
                                  check=False, timeout=300)
            wall = (time.perf_counter() - started) * 1000.0
            cpu = (_children_cpu() - cpu_before) * 1000.0
            if done.returncode != 0:
                raise SystemExit(f"{label}: harkback search failed: {done.stderr.strip()}")
            payload = json.loads(done.stdout)
            samples.append({"query": label, "round": round_, "wall_ms": wall,
                            "cpu_ms": cpu, "timings": payload["timings"]})
    return samples


def _children_cpu() -> float:
    # Seconds of CPU used by finished child processes; one child runs at a time here.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def cold_stats(samples: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """p50 and p95 of the match stage, of the five stages together, of the wall time and
    of the process's CPU time (start-up included).

    >>> s = [{"wall_ms": 90.0, "cpu_ms": 70.0, "timings": {"match": 10.0, "load": 2.0}}]
    >>> cold_stats(s)["all stages"], cold_stats(s)["process CPU"]
    ({'p50': 12.0, 'p95': 12.0}, {'p50': 70.0, 'p95': 70.0})
    """
    def stats(values: Sequence[float]) -> dict[str, float]:
        return {"p50": percentile(values, 50), "p95": percentile(values, 95)}
    return {"match": stats([s["timings"]["match"] for s in samples]),
            "all stages": stats([sum(s["timings"].values()) for s in samples]),
            "wall": stats([s["wall_ms"] for s in samples]),
            "process CPU": stats([s["cpu_ms"] for s in samples])}


def main(argv: Sequence[str] | None = None) -> int:
    """Print the cold-process figures of one store."""
    from benchmarks.scale import QUERY_MIX

    parser = argparse.ArgumentParser(prog="python -m benchmarks.cold_search",
                                     description=__doc__)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--rounds", type=count, default=3)
    args = parser.parse_args(argv)
    found = cold_stats(cold_samples(args.db, QUERY_MIX, args.rounds))
    print("| measure | p50 ms | p95 ms |\n|---|---:|---:|")
    for name, values in found.items():
        print(f"| {name} | {values['p50']:.1f} | {values['p95']:.1f} |")
    return 0


if __name__ == "__main__":
    run_main(main)
