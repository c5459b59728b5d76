"""SIGTERM (``kill``, ``timeout``, a service manager stopping a job) taken as Ctrl-C.

Python's default for SIGTERM ends the process on the spot: ``harkback sync --json`` under
``timeout`` printed nothing at all (``--json`` promises a payload whatever happens), and a
write in flight was left to SQLite's journal. :func:`terminating` has it take Ctrl-C's way
instead: the running command is cancelled, the batch being written commits whole and the
store is closed, then the command line says ``harkback: terminated`` with the status a shell
gives a process SIGTERM ended (143). Light: the standard library only.

>>> with terminating() as stop:
...     stop.received
False
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from harkback.pipeline.terminal import json_text

EXIT_INTERRUPTED = 128 + signal.SIGINT
"""What a shell reports for a process Ctrl-C ended."""
EXIT_TERMINATED = 128 + signal.SIGTERM
"""What a shell reports for a process SIGTERM ended."""


class Termination:
    """Whether SIGTERM was received while :func:`terminating` was in force."""

    def __init__(self) -> None:
        self.received = False

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """The SIGTERM handler: note it, then do what Ctrl-C would do now (cancel the
        running ``asyncio.run``, or raise ``KeyboardInterrupt``)."""
        self.received = True
        interrupt = signal.getsignal(signal.SIGINT)
        if callable(interrupt):
            interrupt(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt  # Ctrl-C ignored (a job a shell started in the background)


@contextmanager
def terminating() -> Iterator[Termination]:
    """SIGTERM taken as Ctrl-C within the block (the handler before it is put back)."""
    stop = Termination()
    try:
        before = signal.signal(signal.SIGTERM, stop.handle)
    except ValueError:  # not the main thread (a command run from a test's worker thread)
        yield stop
        return
    try:
        yield stop
    finally:
        signal.signal(signal.SIGTERM, before)


def interrupted(as_json: bool, stop: Termination) -> int:
    """Say that the command was interrupted (Ctrl-C) or terminated (SIGTERM), as JSON too
    under ``--json``; the status a shell would give."""
    word = "terminated" if stop.received else "interrupted"
    if as_json:
        print(json_text({"success": False, "error": word}))
    print(f"harkback: {word}", file=sys.stderr)
    return EXIT_TERMINATED if stop.received else EXIT_INTERRUPTED
