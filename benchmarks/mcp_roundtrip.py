"""The MCP round trip: client → ``harkback mcp`` → search on a store → client, timed.

Builds a SQLite store from :mod:`benchmarks.generate` (or reuses ``--db``), starts
``harkback mcp`` as a subprocess with the SDK's stdio client, and calls
``session_search`` over the query mix of :mod:`benchmarks.scale` ``--calls`` times per
summarizer, after one warm-up call (which opens the store). Each call is timed from the
client's request to its parsed reply; the server's start (spawn to initialized) is
reported apart. Needs the ``mcp`` extra.

    python -m benchmarks.mcp_roundtrip --messages 100k --calls 50 [--handshakes 10]

``--handshakes N`` also starts the server N more times, cold, and times what an agent's
client waits for at its start (Codex gives a server 10 s by default): from spawn to the
reply to ``initialize``, to the reply to ``tools/list``, and to the reply to a first
``recent_sessions`` call, each in wall seconds and in the server's CPU seconds at that
moment (``/proc``: Linux). These talk JSON lines on the pipes directly, so no client
library's own start is counted; bytecode is cached, as an installed package's is.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from benchmarks.arguments import count, size
from benchmarks.cold_search import user_environment
from benchmarks.entry import run_main
from benchmarks.extras import needs_extra
from benchmarks.scale import QUERY_MIX, _percentile, build_store

try:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
except ImportError as missing:
    raise needs_extra("mcp", missing) from None

SUMMARIZERS = ("none", "extractive")


def _stats(samples: list[float]) -> dict[str, float]:
    """p50, p95 and max of ``samples`` seconds, in milliseconds."""
    return {"p50_ms": round(1000 * _percentile(samples, 0.5), 1),
            "p95_ms": round(1000 * _percentile(samples, 0.95), 1),
            "max_ms": round(1000 * max(samples), 1), "calls": len(samples)}


async def measure(db: Path, calls: int) -> dict[str, Any]:
    """Start the server on ``db`` and time ``calls`` searches per summarizer."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "harkback.pipeline.cli", "mcp", "--db", str(db)])
    queries = [query for _, query in QUERY_MIX if query]
    started = time.perf_counter()
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        start_s = time.perf_counter() - started
        warm = time.perf_counter()
        first = await session.call_tool("session_search", {"query": queries[0]})
        warm_s = time.perf_counter() - warm
        if first.is_error:
            raise SystemExit(f"mcp_roundtrip: the warm-up search failed: {first.content}")
        report: dict[str, Any] = {"start_s": round(start_s, 2),
                                  "first_call_ms": round(1000 * warm_s, 1)}
        for summarizer in SUMMARIZERS:
            samples = []
            for index in range(calls):
                arguments = {"query": queries[index % len(queries)], "summarizer": summarizer}
                began = time.perf_counter()
                result = await session.call_tool("session_search", arguments)
                samples.append(time.perf_counter() - began)
                if result.is_error:
                    raise SystemExit(f"mcp_roundtrip: {arguments}: {result.content}")
            report[summarizer] = _stats(samples)
    return report


STEPS = ("initialize", "tools/list", "first call")
"""What a cold start is timed to, in order (:func:`handshake`)."""

_INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "benchmark", "version": "0"}}


def _cpu_s(pid: int) -> float:
    """The CPU seconds (user and system) process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _reply(out: IO[bytes], wanted: int) -> dict[str, Any]:
    """The next reply to request ``wanted`` on the server's stdout (notifications skipped)."""
    while True:
        line = out.readline()
        if not line:
            raise SystemExit("mcp_roundtrip: the server ended during its handshake")
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == wanted:
            return message


def handshake(db: Path, model: str | None = None) -> dict[str, tuple[float, float]]:
    """One cold start of ``harkback mcp --db DB`` (with ``HARKBACK_MODEL`` set to
    ``model`` when given; the first call asks it nothing): for each of :data:`STEPS`, the
    wall seconds since spawn and the server's CPU seconds when its reply came."""
    argv = [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)]
    requests = [("initialize", _INITIALIZE), ("tools/list", {}),
                ("tools/call", {"name": "recent_sessions", "arguments": {"limit": 1}})]
    began = time.perf_counter()
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL,
                              env={**user_environment(), **({"HARKBACK_MODEL": model}
                                                            if model else {})})
    assert server.stdin is not None and server.stdout is not None
    timed: dict[str, tuple[float, float]] = {}
    try:
        for number, (step, (method, params)) in enumerate(zip(STEPS, requests, strict=True)):
            sent = [{"jsonrpc": "2.0", "id": number, "method": method, "params": params}]
            if number == 1:  # the client's acknowledgement of the handshake comes first
                sent.insert(0, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            server.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in sent))
            server.stdin.flush()
            reply = _reply(server.stdout, number)
            timed[step] = (time.perf_counter() - began, _cpu_s(server.pid))
            if "error" in reply or reply["result"].get("isError"):
                raise SystemExit(f"mcp_roundtrip: {method} failed: {reply}")
    finally:
        server.stdin.close()
        server.wait(timeout=60)
    return timed


def handshakes(db: Path, runs: int, model: str | None = None) -> dict[str, dict[str, float]]:
    """:func:`handshake` ``runs`` times after one warm-up (the file cache, bytecode): the
    median and max of each step's wall and CPU seconds."""
    handshake(db, model)
    samples = [handshake(db, model) for _ in range(runs)]
    report: dict[str, dict[str, float]] = {}
    for step in STEPS:
        walls, cpus = [s[step][0] for s in samples], [s[step][1] for s in samples]
        report[step] = {"wall_median_s": round(statistics.median(walls), 3),
                        "wall_max_s": round(max(walls), 3),
                        "cpu_median_s": round(statistics.median(cpus), 3),
                        "cpu_max_s": round(max(cpus), 3)}
    return report


def main(argv: list[str] | None = None) -> int:
    """Build (or reuse) a store, measure, print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=size, default=100_000)
    parser.add_argument("--calls", type=count, default=50)
    parser.add_argument("--db", type=Path, default=None,
                        help="measure this store (built there first when missing)")
    parser.add_argument("--handshakes", type=int, default=0,
                        help="cold starts to time to initialize, tools/list and a first "
                             "call (0: none)")
    parser.add_argument("--model", default=None,
                        help="start those with HARKBACK_MODEL set to this (no call asks it)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="harkback-mcp-") as folder:
        db = args.db or Path(folder) / "bench.db"
        built: dict[str, Any] = {}
        if not db.is_file():
            build = build_store(db, args.messages, incremental=0)
            built = {"messages": build.messages, "build_s": round(build.bulk_seconds, 1)}
        report = asyncio.run(measure(db, args.calls))
        if args.handshakes > 0:
            report["cold_start"] = {"runs": args.handshakes,
                                    **handshakes(db, args.handshakes, args.model)}
    print(json.dumps({"store": str(args.db or "temporary"), **built, **report}, indent=2))
    return 0


if __name__ == "__main__":
    run_main(main)
