"""``harkback sync --watch``: keep the store current while the agents write.

After the first sync, :func:`watch` waits on the sources' folders with ``watchfiles``
(the ``watch`` extra, imported here only), syncs once more as soon as the watcher is in
place (catching what changed in between; then it says ``watching``), gathers changes
for a short quiet spell (``step_ms``, at most ``debounce_ms``), and re-syncs only the
sources a change belongs to: a ``.jsonl`` file or a folder (moved in or out) under a
transcripts folder, or a Hermes ``state.db`` or its ``-wal`` (not its ``-shm``, which
readers, harkback included, touch). Ctrl-C
(SIGINT) or SIGTERM stops it between syncs, or cancels the one running: marks are
kept only after their sessions are stored, so nothing is skipped next time. A store
file deleted or replaced under the watch stops it (:mod:`~harkback.pipeline.store_guard`).
A store out of reach for a while (its server restarting) is waited for
(:mod:`~harkback.pipeline.watch_outage`).
Every :data:`CHECK_S` it also looks at what it watches (:mod:`~harkback.pipeline.watch_layout`):
a source that appeared (an agent run for the first time), a folder moved away or made
again, start the watcher again on what is there; a source whose sync failed is tried
again (its failure printed once, its recovery too).

>>> from harkback.adapters.sources.hermes import HermesImporter
>>> belongs(HermesImporter(Path("/h/state.db")), Path("/h/state.db-wal"))
True
>>> belongs(HermesImporter(Path("/h/state.db")), Path("/h/state.db-shm"))
False
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from harkback.adapters.sources.hermes import HermesImporter
from harkback.adapters.sources.importing import Importer
from harkback.pipeline.command_basics import CliError
from harkback.pipeline.embed import EmbedSummary
from harkback.pipeline.named_once import NamedOnce
from harkback.pipeline.redacting import RedactionMemo
from harkback.pipeline.store_guard import StoreFile
from harkback.pipeline.sync import Located, SourceReport, gone_line, sync_one
from harkback.pipeline.sync_lock import StoreDown, SyncLock
from harkback.pipeline.terminal import json_text, line_of, one_line
from harkback.pipeline.watch_embed import RoundEmbedding
from harkback.pipeline.watch_layout import Layout, watched_folders
from harkback.pipeline.watch_outage import Outage, passing
from harkback.stages.imports import ImportLedger, SourceKey
from harkback.stages.ports import Embedder, SessionStore

T = TypeVar("T")

DEBOUNCE_MS = 400
"""Changes are gathered for at most this long before a re-sync."""
STEP_MS = 50
"""... and yielded once the sources were quiet for this long."""
READY_MS = 200
"""How often the watcher wakes when nothing changes (its first wake: it is in place)."""
WAIT_SAID_S = 5.0
"""A round that waits its turn (an ingest writing) says so once it has waited this long: a
watch beside one-shot ingests said a line for each of them."""
CHECK_S = 2.0
"""How often the watch looks for sources that appeared and folders gone or made again, and
tries again the sources whose last sync failed."""


def belongs(importer: Importer, changed: Path) -> bool:
    """Whether a change to ``changed`` may change what ``importer`` reads."""
    location = Path(importer.key.location)
    if isinstance(importer, HermesImporter):
        return changed.name in (location.name, f"{location.name}-wal") and (
            changed.parent == location.parent)
    if not any(changed.is_relative_to(folder) for folder in watched_folders(importer)):
        return False
    # A folder moved in or out (a project's, a day's) is one change of the folder's own
    # path, none of the transcripts in it: it counts, as a folder there or a path gone.
    return changed.suffix == ".jsonl" or changed.is_dir() or not os.path.lexists(changed)


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
                      *(f"{stamp} {report.kind}: note: {one_line(n)}" for n in report.notes),
                      *([f"{stamp} {gone_line(report)}"] if report.newly_gone else [])])


def failed_at_start(located: Sequence[Located], reports: Sequence[SourceReport]
                    ) -> tuple[dict[SourceKey, str], bool]:
    """The sources whose first sync (``reports``, in :func:`~harkback.pipeline.sync.sync`'s
    order) failed, by key with their error, for the watch to try again; and whether a
    source a flag named failed or is not there (then the watch does not start: the user
    asked for that one)."""
    failing: dict[SourceKey, str] = {}
    named_failed = False
    pending = iter(reports)
    for place in located:
        for importer in place.importers or (None,):
            report = next(pending)
            if report.status != "failed":
                continue
            named_failed = named_failed or place.given
            if importer is not None:
                failing[importer.key] = report.error
            elif place.present:  # no importer yet: counted until one syncs under its key
                failing[place.awaited_key()] = report.error
    return failing, named_failed


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




@attrs.define
class Resyncs:
    """The re-syncs of one watch: what they skipped, and the sources failing now (by key,
    with the error last printed, so a failure tried again is printed once)."""

    store: SessionStore
    ledger: ImportLedger
    stop: asyncio.Event
    redact: bool = True
    prune: bool = False
    memo: RedactionMemo | None = None
    as_json: bool = False
    name_skipped: Callable[[SourceReport], None] | None = None
    store_file: StoreFile | None = None
    skips: int = 0
    failing: dict[SourceKey, str] = attrs.field(factory=dict)
    announced: Layout | None = None
    lock: SyncLock = attrs.field(factory=lambda: SyncLock(None, ""))
    """Taken for each round (not the whole watch): another sync gets its turn in between."""
    outage: Outage[Importer] = attrs.field(factory=lambda: Outage(_said))
    once: NamedOnce = attrs.field(factory=NamedOnce)
    """Unreadable files named so far: not named again while unchanged."""
    embedding: RoundEmbedding = attrs.field(factory=lambda: RoundEmbedding(None))
    stored: set[str] = attrs.field(factory=set)
    """Sessions the rounds stored that were not embedded yet (a round the store was lost
    in, or whose embedding failed: the next one embeds them)."""

    def guard(self) -> None:
        """Stop (:class:`CliError`) when the store file was deleted or replaced."""
        problem = self.store_file.problem() if self.store_file is not None else None
        if problem:  # checked at every wake: each re-sync would be lost with the file
            raise CliError(problem)

    async def run(self, due: Sequence[Importer]) -> bool:
        """Re-sync each of ``due`` and print what changed, holding the store's sync lock;
        False when stopped first. While the store cannot be reached they wait, with what
        came due before, for the next try (:class:`~harkback.pipeline.watch_outage.Outage`)."""
        due = self.outage.due(due)
        if not due:
            return True
        try:
            done = await until_stopped(self._run_held(due), self.stop)
        except StoreDown as down:  # the lock was not taken: nothing of the round is stored
            self.outage.failed(due, down.where, down.reason)
            return True
        except _LostStore as lost:  # stored up to where it was lost: the rest waits
            return await self._lost(lost)
        if done is None:  # stopped first: perhaps while trying a store out of reach again
            self.outage.stopped(due)
            return False
        self.outage.reached()
        # Embedded once the lock is let go: another sync may write meanwhile. Sessions
        # whose embedding failed go to the next round: dropped, "works again" left them
        # without vectors for good, unsaid.
        stored, self.stored = frozenset(self.stored), set()
        if not stored:
            return done
        worked = await until_stopped(self.embedding.after(self.store, stored), self.stop)
        if not worked:
            self.stored |= stored
        return done and worked is not None

    async def _lost(self, lost: _LostStore) -> bool:
        """Wait for the store lost in a round (False when stopped first), once the sync lock
        taken again as at a round's start says it is out of reach for now: a refusal that
        waiting does not mend (its database dropped, whose connections end as a server
        stopping ends them) ends the watch there (:class:`CliError`)."""
        where, reason = self.lock.where, lost.reason
        try:
            going = await until_stopped(self._run_held(()), self.stop) is not None
        except StoreDown as down:
            going, where, reason = True, down.where, down.reason
        self.outage.failed(lost.left, where, reason)
        return going

    async def _run_held(self, due: Sequence[Importer]) -> bool:
        async with self.lock.held(quiet_s=WAIT_SAID_S):
            return await self._run(due)

    async def _run(self, due: Sequence[Importer]) -> bool:
        for at, importer in enumerate(due):
            if self.stop.is_set():
                return False
            self.guard()
            report = await sync_one(importer, self.store, self.ledger, progress=False,
                                    redact=self.redact, prune=self.prune,
                                    memo=self.memo)
            if passing(report):  # not this source's failure: each would print it
                raise _LostStore(due[at:], report.error)
            report = self.once.fresh(report)
            self.stored |= report.stored
            self.skips += report.skips
            if report.skips and self.name_skipped is not None:
                self.name_skipped(report)
            before = self.failing.pop(importer.key, None)
            if report.error:
                self.failing[importer.key] = report.error
            # A failure goes on being tried: printed when it is new, and its end too.
            if (report.error != before if report.error
                    else report.new or report.updated or report.removed
                    or report.newly_gone or before):
                print(json_text(report.to_payload()) if self.as_json
                      else change_line(report), flush=True)
        return True


class _LostStore(Exception):
    """The store went out of reach in the middle of a round: the sources ``left`` to sync
    (the one that met it first) wait for it (:mod:`~harkback.pipeline.watch_outage`)."""

    def __init__(self, left: Sequence[Importer], reason: str) -> None:
        super().__init__(reason)
        self.left, self.reason = left, reason


@attrs.frozen
class Watched:
    """How a watch ended: the damaged lines its re-syncs skipped, and the sources whose
    last sync had failed when it was stopped (by key, with the error)."""

    skips: int
    failing: Mapping[SourceKey, str]
    embedded: EmbedSummary | None = None
    """What the rounds embedded (None: no embedder); its error: the last round's failure."""


async def watch(located: Sequence[Located], store: SessionStore, *, as_json: bool = False,
                debounce_ms: int = DEBOUNCE_MS, step_ms: int = STEP_MS,
                redact: bool = True, prune: bool = False,
                name_skipped: Callable[[SourceReport], None] | None = None,
                store_file: StoreFile | None = None,
                find: Callable[[], Sequence[Located]] = lambda: (),
                check_s: float = CHECK_S,
                failing: Mapping[SourceKey, str] | None = None,
                lock: SyncLock | None = None, memo: RedactionMemo | None = None,
                named: Sequence[SourceReport] = (), embedder: Embedder | None = None
                ) -> Watched:
    """Re-sync each source as it changes until SIGINT or SIGTERM (the first sync is done);
    how many damaged lines the re-syncs skipped, and which sources were still failing
    when it stopped. ``name_skipped`` is given each re-sync's
    report that skipped any, as it comes (the command names them on stderr). A
    ``store_file`` deleted or replaced while watching stops the watch (:class:`CliError`).
    ``find`` locates the sources again (sources it finds that ``located`` lacked are
    watched too), every ``check_s`` seconds, and tries again the sources ``failing``
    (key: the error the first sync met), as those whose re-sync fails. ``lock`` (the
    store's sync lock) is held for each round of re-syncs; ``memo`` keeps what they redacted
    (:class:`~harkback.pipeline.redacting.RedactionMemo`); ``named``, the first sync's
    reports: the unreadable files they named are not named again while unchanged;
    ``embedder``: each round embeds what it stored (:mod:`.watch_embed`)."""
    ledger = store.import_ledger()
    if ledger is None:
        raise ValueError("sync needs a store that remembers imports")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # The loop's handlers go back to the default when removed (SIGTERM's ends the process
    # on the spot): the handlers before the watch (the command's, Ctrl-C's way) come back.
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in before:
        loop.add_signal_handler(sig, stop.set)
    resyncs = Resyncs(store=store, ledger=ledger, stop=stop, redact=redact, prune=prune,
                      memo=memo, as_json=as_json,
                      name_skipped=name_skipped, store_file=store_file,
                      failing=dict(failing or {}), lock=lock or SyncLock(None, ""),
                      embedding=RoundEmbedding(embedder, as_json=as_json))
    resyncs.once.saw(named)
    layout: Layout | None = Layout.of(i for place in located for i in place.importers)
    try:
        while layout is not None and not stop.is_set():
            layout = await _watch(layout, resyncs, find, debounce_ms=debounce_ms,
                                  step_ms=step_ms, check_s=check_s)
    finally:
        for sig, handler in before.items():
            loop.remove_signal_handler(sig)
            if handler is not None:
                signal.signal(sig, handler)
    print("stopped watching", file=sys.stderr, flush=True)
    resyncs.embedding.stopped(len(resyncs.stored))
    # Stopped while the store was out of reach: what waited for it was not synced.
    held = {i.key: resyncs.outage.reason for i in resyncs.outage.held}
    return Watched(skips=resyncs.skips, failing={**held, **resyncs.failing},
                   embedded=resyncs.embedding.total)


async def _watch(layout: Layout, resyncs: Resyncs, find: Callable[[], Sequence[Located]], *,
                 debounce_ms: int, step_ms: int, check_s: float) -> Layout | None:
    """Watch ``layout``'s folders until stopped (None) or until what is there differs from
    it: then the layout to watch instead."""
    import watchfiles

    if not layout.folders:  # none is there: sync (a failure is said once), look again later
        _announce(layout, resyncs, check_s)
        if not await resyncs.run(layout.importers):
            return None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(resyncs.stop.wait(), check_s)
        resyncs.guard()
        return layout.now(find())
    ready = False
    checked = time.monotonic()
    try:
        async with contextlib.aclosing(watchfiles.awatch(
                *layout.folders, stop_event=resyncs.stop, watch_filter=None,
                debounce=debounce_ms, step=step_ms, rust_timeout=READY_MS,
                yield_on_timeout=True, ignore_permission_denied=True)) as seen:
            async for changes in seen:
                resyncs.guard()
                if not ready:
                    # The watcher is in place now: catch what changed since the last sync.
                    ready, due = True, list(layout.importers)
                    _announce(layout, resyncs, check_s)
                else:
                    due = touched(layout.importers, changes)
                if time.monotonic() - checked >= check_s:
                    checked = time.monotonic()
                    now = layout.now(find())
                    if now != layout:
                        return now
                    due += [i for i in layout.importers
                            if i.key in resyncs.failing and i not in due]
                if not await resyncs.run(due):
                    return None
    except FileNotFoundError:  # a folder went between looking and watching: look again
        return layout.now(find())
    return None


def _said(text: str) -> None:
    print(line_of(text), file=sys.stderr, flush=True)


def _announce(layout: Layout, resyncs: Resyncs, check_s: float) -> None:
    """Say on stderr what is watched (once per layout): the folders, and those not there."""
    if resyncs.announced == layout:
        return
    resyncs.announced = layout
    missing = "".join(f"; {one_line(str(f))} is not there now (looked for every {check_s:g} s)"
                      for f in layout.missing)
    print(f"watching {', '.join(one_line(str(f)) for f in layout.folders) or 'nothing'} "
          f"(Ctrl-C to stop){missing}", file=sys.stderr, flush=True)
