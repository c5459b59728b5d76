"""``harkback sync --watch``: keep the store current while the agents write.

After the first sync, :func:`watch` waits on the sources' folders with ``watchfiles``
(the ``watch`` extra, imported here only), syncs once more as soon as the watcher is in
place (catching what changed in between; then it says ``watching``), gathers changes
for a short quiet spell (``step_ms``, at most ``debounce_ms``), and re-syncs only the
sources a change belongs to: a ``.jsonl`` file under a transcripts folder, or a Hermes ``state.db``
or its ``-wal`` (not its ``-shm``, which readers, harkback included, touch). Ctrl-C
(SIGINT) or SIGTERM stops it between syncs, or cancels the one running: marks are
kept only after their sessions are stored, so nothing is skipped next time. A store
file deleted or replaced under the watch stops it (:mod:`~harkback.pipeline.store_guard`).

>>> from harkback.adapters.sources.hermes import HermesImporter
>>> belongs(HermesImporter(Path("/h/state.db")), Path("/h/state.db-wal"))
True
>>> belongs(HermesImporter(Path("/h/state.db")), Path("/h/state.db-shm"))
False
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from harkback.adapters.sources.hermes import HermesImporter
from harkback.adapters.sources.importing import Importer
from harkback.pipeline.command_basics import CliError
from harkback.pipeline.store_guard import StoreFile
from harkback.pipeline.sync import Located, SourceReport, sync_one
from harkback.pipeline.terminal import json_text, one_line
from harkback.stages.ports import SessionStore

T = TypeVar("T")

DEBOUNCE_MS = 400
"""Changes are gathered for at most this long before a re-sync."""
STEP_MS = 50
"""... and yielded once the sources were quiet for this long."""
READY_MS = 200
"""How often the watcher wakes when nothing changes (its first wake: it is in place)."""


def watched_folder(importer: Importer) -> Path:
    """The folder to watch for ``importer``'s source."""
    location = Path(importer.key.location)
    return location.parent if isinstance(importer, HermesImporter) else location


def belongs(importer: Importer, changed: Path) -> bool:
    """Whether a change to ``changed`` may change what ``importer`` reads."""
    location = Path(importer.key.location)
    if isinstance(importer, HermesImporter):
        return changed.name in (location.name, f"{location.name}-wal") and (
            changed.parent == location.parent)
    return changed.suffix == ".jsonl" and changed.is_relative_to(location)


def touched(importers: Sequence[Importer], changes: Iterable[tuple[object, str]]
            ) -> list[Importer]:
    """The importers some of ``changes`` (``watchfiles`` pairs) belong to, in order."""
    paths = [Path(path) for _, path in changes]
    return [i for i in importers if any(belongs(i, p) for p in paths)]


def change_line(report: SourceReport) -> str:
    """One line for a re-sync, for people, then a line per note.

    >>> change_line(SourceReport(kind="codex", location="/x", status="synced", new=1,
    ...                          notes=("read as UTF-16",))).splitlines()[1][8:]
    ' codex: note: read as UTF-16'
    """
    stamp = time.strftime("%H:%M:%S")
    if report.error:
        return f"{stamp} {report.kind}: failed: {report.error}"
    skipped = f", {report.skips} damaged line(s) or field(s)" if report.skips else ""
    # Notes (a session replaced from another source, a file read as UTF-16) go on lines of
    # their own, as ``sync`` prints them: a watch that runs for days is where they'd be lost.
    return "\n".join([f"{stamp} {report.kind}: {report.new} new, {report.updated} updated, "
                      f"{report.removed} removed{skipped} ({report.seconds:.2f} s)",
                      *(f"{stamp} {report.kind}: note: {one_line(n)}" for n in report.notes)])


async def until_stopped(work: Awaitable[T], stop: asyncio.Event) -> T | None:
    """``work``'s result, or None when ``stop`` is set first (``work`` is then cancelled)."""
    task = asyncio.ensure_future(work)
    waiter = asyncio.ensure_future(stop.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


async def watch(located: Sequence[Located], store: SessionStore, *, as_json: bool = False,
                debounce_ms: int = DEBOUNCE_MS, step_ms: int = STEP_MS,
                redact: bool = True,
                name_skipped: Callable[[SourceReport], None] | None = None,
                store_file: StoreFile | None = None) -> int:
    """Re-sync each source as it changes until SIGINT or SIGTERM (the first sync is done);
    how many damaged lines the re-syncs skipped. ``name_skipped`` is given each re-sync's
    report that skipped any, as it comes (the command names them on stderr). A
    ``store_file`` deleted or replaced while watching stops the watch (:class:`CliError`)."""
    import watchfiles

    ledger = store.import_ledger()
    if ledger is None:
        raise ValueError("sync needs a store that remembers imports")
    importers = [i for place in located for i in place.importers]
    folders = sorted({watched_folder(i) for i in importers})
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    ready = False
    skips = 0
    try:
        async for changes in watchfiles.awatch(
                *folders, stop_event=stop, watch_filter=None, debounce=debounce_ms,
                step=step_ms, rust_timeout=READY_MS, yield_on_timeout=True,
                ignore_permission_denied=True):
            problem = store_file.problem() if store_file is not None else None
            if problem:  # checked at every wake: each re-sync would be lost with the file
                raise CliError(problem)
            if not ready:
                # The watcher is in place now: catch what changed since the first sync.
                ready, due = True, importers
                print(f"watching {', '.join(str(f) for f in folders)} (Ctrl-C to stop)",
                      file=sys.stderr, flush=True)
            else:
                due = touched(importers, changes)
            for importer in due:
                report = await until_stopped(sync_one(importer, store, ledger, progress=False,
                                                      redact=redact),
                                             stop)
                if report is None:
                    break
                skips += report.skips
                if report.skips and name_skipped is not None:
                    name_skipped(report)
                if report.new or report.updated or report.removed or report.error:
                    print(json_text(report.to_payload()) if as_json
                          else change_line(report), flush=True)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    print("stopped watching", file=sys.stderr, flush=True)
    return skips
