"""SIGTERM (``kill``, ``timeout``, a service manager stopping a job) taken as Ctrl-C.

Python's default for SIGTERM ends the process on the spot: ``harkback sync --json`` under
``timeout`` printed nothing at all (``--json`` promises a payload whatever happens), and a
write in flight was left to SQLite's journal. :func:`terminating` has it take Ctrl-C's way
instead: the running command is cancelled, the batch being written commits whole and the
store is closed, then the command line says ``harkback: terminated`` with the status a shell
gives a process SIGTERM ended (143). It needs the standard library, and the size of an
``embed`` batch for that command's line (from :mod:`~harkback.stages.defaults`: the
embedding pass would load the stages, which ``--help`` and ``harkback mcp``'s start do
without).

>>> with terminating() as stop:
...     stop.received
False
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import FrameType

from harkback.pipeline.terminal import json_text
from harkback.stages.defaults import EMBED_BATCH  # not embed's: that loads the stages

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


_STORED = ("the sessions stored before it are kept, each whole: the same command run again "
           "goes on from there, storing none twice")
KEPT_WHEN_STOPPED = {
    "ingest": _STORED, "import": _STORED, "sync": _STORED,
    # A batch at the embedder when stopped has no vectors yet: the next run asks again.
    "embed": f"the vectors made before it are kept (the batch then at the embedder, up to "
             f"{EMBED_BATCH} messages, is embedded again): the same command run again goes "
             "on from there",
    # The store's close waits for the statement under way: a merge (VACUUM) begun ends
    # whole, one still waiting for the write lock never begins.
    "optimize": "the store is whole, optimised or as it was: the same command run again "
                "finishes the job",
    # Said only when stopped before it began (startup's imports take about half of a
    # small store's migrate): once begun, it names the store's version (stopped_with).
    "migrate": "the migration had not begun: the store is as it was, and the same command "
               "run again migrates it",
    # Its merge, which takes the old texts out of the index and freed pages, ends a run.
    "redact": "the sessions rewritten before it keep their placeholders, but the old text "
              "may linger in the file until the same command run again finishes the job",
}
"""What a command that writes leaves when stopped, and that running it again goes on:
every batch commits whole and the store is closed before the line is said."""


def interrupted(args: argparse.Namespace, stop: Termination) -> int:
    """Say that the command of ``args`` was interrupted (Ctrl-C) or terminated (SIGTERM), and
    what of its work is kept (:data:`KEPT_WHEN_STOPPED`, or what the command said with
    :func:`stopped_with`), as JSON too under ``--json``; the status a shell would give (the
    line on stderr: ``harkback: interrupted; ...`` and the kept part, for the commands that
    write).

    >>> KEPT_WHEN_STOPPED["embed"][:36]
    'the vectors made before it are kept '
    """
    word = "terminated" if stop.received else "interrupted"
    # A dry run stores nothing: its line claims nothing kept.
    command = "" if getattr(args, "dry_run", False) else str(getattr(args, "command", ""))
    kept = getattr(args, STOPPED_KEPT, None) or KEPT_WHEN_STOPPED.get(command)
    if getattr(args, "json", False):
        so_far: dict[str, object] = getattr(args, STOPPED_PAYLOAD, None) or {}
        shown = {"success": False, **so_far, "error": word}
        shown["success"] = False  # first, as in every payload, whatever so_far said
        if kept or so_far:  # a command that writes: its payload says what the line says
            shown.update(interrupted=True, **({"kept": kept} if kept else {}))
        print(json_text(shown))
    print(f"harkback: {word}" + (f"; {kept}" if kept else ""), file=sys.stderr)
    return EXIT_TERMINATED if stop.received else EXIT_INTERRUPTED


STOPPED_KEPT, STOPPED_PAYLOAD = "stopped_kept", "stopped_payload"
"""Where on the command's arguments :func:`stopped_with` leaves what it kept."""


def stopped_with(args: argparse.Namespace, kept: str | None = None,
                 payload: Mapping[str, object] | None = None) -> None:
    """Have a command stopped on the way say ``kept`` (what of its work is kept, and what
    running it again does) instead of :data:`KEPT_WHEN_STOPPED`'s, and print ``payload``
    (its usual JSON, with the counts so far) under ``--json``."""
    if kept is not None:
        setattr(args, STOPPED_KEPT, kept)
    if payload is not None:
        setattr(args, STOPPED_PAYLOAD, dict(payload))


def removed_new_store(path: object) -> str:
    """What a command stopped before it stored anything kept: nothing, and the store file
    it had created is taken away again.

    >>> removed_new_store("/d/h.db")
    'nothing was stored, and /d/h.db, which it had created, is removed again: the same \
command run again starts afresh'
    """
    return (f"nothing was stored, and {path}, which it had created, is removed again: the "
            "same command run again starts afresh")
