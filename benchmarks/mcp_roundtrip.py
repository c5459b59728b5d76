"""The MCP round trip: client → ``harkback mcp`` → search on a store → client, timed.

Builds a SQLite store from :mod:`benchmarks.generate` (or reuses ``--db``), starts
``harkback mcp`` as a subprocess with the SDK's stdio client, and calls
``session_search`` over the query mix of :mod:`benchmarks.scale` ``--calls`` times per
summarizer, after one warm-up call (which opens the store). Each call is timed from the
client's request to its parsed reply; the server's start (spawn to initialized) is
reported apart. Needs the ``mcp`` extra.

    python -m benchmarks.mcp_roundtrip --messages 100k --calls 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.arguments import count, size
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


def main(argv: list[str] | None = None) -> int:
    """Build (or reuse) a store, measure, print the figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=size, default=100_000)
    parser.add_argument("--calls", type=count, default=50)
    parser.add_argument("--db", type=Path, default=None,
                        help="measure this store (built there first when missing)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="harkback-mcp-") as folder:
        db = args.db or Path(folder) / "bench.db"
        built: dict[str, Any] = {}
        if not db.is_file():
            build = build_store(db, args.messages, incremental=0)
            built = {"messages": build.messages, "build_s": round(build.bulk_seconds, 1)}
        report = asyncio.run(measure(db, args.calls))
    print(json.dumps({"store": str(args.db or "temporary"), **built, **report}, indent=2))
    return 0


if __name__ == "__main__":
    run_main(main)
