"""Python's cyclic garbage collector, paused while a one-shot command runs.

A new ``harkback search`` process builds some 40,000 objects as it imports the stores
and stages, and the collector scans them again and again while the command runs: about
10 ms of a search process's CPU, 2-3 ms of it inside the match stage (a generation-1
collection landing there). A process that searches once and exits has no use for it:
what cycles it leaves are freed at exit. Long-running commands (the MCP server, watch,
ingest and import) keep it.

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
