"""Python's cyclic garbage collector, paused while a one-shot command runs.

A new ``harkback search`` process builds some 40,000 objects as it imports the stores
and stages, and the collector scans them again and again while the command runs: ~80
collections (a generation-1 one of 2-3 ms inside the match stage for the question and
the phrase of the benchmark mix), ~6 ms of the process's CPU net of the ~300 more pages
it touches without them (benchmarks/README.md, "Speed at scale"). A process that
searches once and exits has no use for it: what cycles it leaves are freed at exit.
Other commands (the MCP server, watch, ingest, import) keep it.

>>> import gc
>>> with paused_for("search"):
...     gc.isenabled()
False
>>> with paused_for("mcp"):
...     gc.isenabled()
True
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

ONE_SHOT = frozenset({"search"})
"""Commands whose process does one search and exits."""


@contextmanager
def paused_for(command: str) -> Iterator[None]:
    """The collector off while ``command`` runs when it is one-shot (see the module), then
    as it was (an in-process caller, a test or a library, gets it back)."""
    if command not in ONE_SHOT or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        # Switched back on as it is, the collector would scan at its next allocation
        # every object the command made (~11 ms, as the process exits): they go to the
        # oldest generation unscanned instead, to be scanned by its next full collection.
        gc.freeze()
        gc.unfreeze()
        gc.enable()
