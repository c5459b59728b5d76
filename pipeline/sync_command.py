"""The ``harkback sync`` command: find the sources, open the store, sync, embed what it
stored (an embedder configured; ``--watch``: each round's too), print.

Kept apart from :mod:`~harkback.pipeline.commands` (which calls it) so the importers
load only when ``sync`` runs. ``--watch`` goes on in :mod:`~harkback.pipeline.watch`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from returns.result import Failure

from harkback.pipeline import wiring
from harkback.pipeline.command_kit import (
    EXIT_USAGE,
    BadStore,
    CliError,
    db_of,
    embed_after,
    embed_payload,
    embedder_of,
    finished,
    holds_nothing,
    name_skips,
    name_stopped,
    noted,
    open_store,
    opened,
    release,
    settings_of,
)
from harkback.pipeline.embed import EmbedSummary
from harkback.pipeline.embed_scope import first_vectors, kept_while_embedding, left_to_embed
from harkback.pipeline.in_memory import refusal
from harkback.pipeline.output import print_json
from harkback.pipeline.redacting import RedactionMemo
from harkback.pipeline.so_far import SoFar
from harkback.pipeline.store_guard import StoreFile
from harkback.pipeline.sync import (
    Located,
    SourceReport,
    describe,
    locate,
    payload,
    stopped_payload,
    sync,
)
from harkback.pipeline.sync_lock import SyncLock
from harkback.pipeline.terminal import json_text, line_of
from harkback.pipeline.termination import removed_new_store, stopped_with
from harkback.pipeline.watch_outage import Outage
from harkback.stages.errors import NoStore
from harkback.stages.imports import SourceKey
from harkback.stages.ports import Embedder, SessionStore
from harkback.stages.shown_url import shown_url

WATCH_EXTRA = "sync --watch needs watchfiles: pip install 'harkback[watch]'"


def located_sources(args: argparse.Namespace) -> tuple[Located, ...]:
    """The sources the flags and the defaults name; none found at all is a :class:`CliError`."""
    located = located_again(args)
    # One there but unreadable (a closed ~/.claude) is found: its failure names why.
    if not any(place.importers or place.given or place.present for place in located):
        raise CliError("no agent history found (looked in " + ", ".join(
            f"{p.where} for {p.kind}" for p in located) + "); name one with --hermes, "
            "--claude-code or --codex")
    return located


def located_again(args: argparse.Namespace) -> tuple[Located, ...]:
    """The sources the flags and the defaults name, as they are now (``--watch`` looks
    again for those that were not there)."""
    return locate({"hermes": args.hermes, "claude-code": args.claude_code,
                   "codex": args.codex}, archived=args.archived)


def progress_wanted(args: argparse.Namespace) -> bool:
    """``--progress``/``--no-progress``, else a bar only when stdout and stderr are terminals."""
    if args.progress is not None:
        return bool(args.progress)
    return sys.stdout.isatty() and sys.stderr.isatty()


def _store_for(args: argparse.Namespace) -> SessionStore:
    target = db_of(args)
    folder = wiring.folder_named(target)
    if folder is not None:  # no store can be there, dry run or not
        raise BadStore(folder)
    if args.dry_run:
        if wiring.store_kind(target) == "sqlite" and not Path(target).is_file():
            return open_store(":memory:", readonly=False)  # nothing stored yet: all is new
        reading = wiring.open_store(target, readonly=True)
        if isinstance(reading, Failure) and isinstance(reading.failure(), NoStore):
            # An empty PostgreSQL database, as a missing file: the sync would make the
            # store (a dry run was refused, telling the user to make one first).
            return open_store(":memory:", readonly=False)
        return opened(reading)
    return open_store(target, readonly=False, args=args)


async def _reachable(target: str) -> None:
    """Wait while the store a watch starts on is out of reach for now (its PostgreSQL server
    not up yet at boot, or restarting), as a watch waits for it between rounds: a watch
    started as a service then ended at once, status 1. Said once, and once it is back;
    a refusal waiting does not mend (a wrong password) is left to the open that follows."""
    outage: Outage[str] = Outage(lambda line: print(line_of(line), file=sys.stderr, flush=True))
    while True:
        probe = wiring.open_store(target, readonly=True)
        if not isinstance(probe, Failure):
            probe.unwrap().close()
            break
        if not probe.failure().transient:
            break
        outage.failed([], shown_url(target), probe.failure().reason)
        await asyncio.sleep(outage.wait)
    outage.reached()


async def run_sync(args: argparse.Namespace) -> int:
    """``harkback sync``: import what changed in every source; keep what is gone (remove it
    with ``--prune``). Damaged input is named as an import names it, and makes the status 3
    (done with skips)."""
    refused = None if args.dry_run else refusal(db_of(args), "sync")
    if refused is not None:
        raise CliError(refused, EXIT_USAGE)
    located = located_sources(args)
    if args.watch:
        try:
            import watchfiles  # noqa: F401  (only to learn whether the extra is installed)
        except ImportError:
            raise CliError(WATCH_EXTRA) from None
        if args.dry_run:
            raise CliError("--watch writes as the sources change; leave out --dry-run", 2)
    new = None if args.dry_run else wiring.new_file(db_of(args))
    # What was synced gets its vectors, as an ingest's does: with an embedder configured
    # the sessions a sync brought were found by words alone until `harkback embed` ran.
    # A watch embeds what each round stores too.
    embedder = None if args.dry_run else embedder_of(args)
    try:
        return await _synced(args, located, new, embedder)
    finally:
        await release(embedder)


async def _synced(args: argparse.Namespace, located: tuple[Located, ...], new: Path | None,
                  embedder: Embedder | None) -> int:
    if args.watch:
        await _reachable(db_of(args))
    store = _store_for(args)
    store_file = StoreFile.of(db_of(args)) if args.watch else None
    # One sync writes at a time (a dry run writes nothing: it takes no lock, makes no file).
    lock = SyncLock(None, db_of(args)) if args.dry_run else SyncLock.of(db_of(args), store)
    # A watch syncs its largest transcripts again and again: what it redacted is kept.
    memo = RedactionMemo() if args.watch else None
    try:
        if store.import_ledger() is None:
            raise CliError("this store does not remember imports; sync into a file")
        unused, so_far = Unused(new, store, lock), SoFar()
        fresh = await first_vectors(store, embedder)
        try:
            async with lock.held():
                try:
                    reports = await sync(located, store, dry_run=args.dry_run,
                                         prune=args.prune, redact=settings_of(args).redact,
                                         memo=memo, progress=progress_wanted(args),
                                         so_far=so_far)
                except BaseException:  # stopped on the way (Ctrl-C) before storing any
                    await unused.discard(args)
                    raise
                # A failed sync into a store it created, storing nothing, leaves no store
                # behind (a watch that goes on may store sessions yet).
                if not payload(reports)["success"] and not _watches(args, located, reports):
                    await unused.discard()
            embedded = None if unused.removed else await _embedded(args, store, embedder,
                                                                    reports)
        except BaseException:  # stopped (Ctrl-C) while it waited its turn, or from above
            await unused.discard(args)
            stopped_with(args, payload=noted(args, stopped_payload(so_far, dry_run=args.dry_run)))
            raise
        skips = sum(r.skips for r in reports)
        name_skips([k for r in reports for k in r.skipped], skips, verbose=args.verbose)
        name_stopped(embedded, after_import=True)
        shown = noted(args, payload(reports, dry_run=args.dry_run))
        rest = None if embedded is None else left_to_embed(
            fresh, embedded, sum(r.unchanged for r in reports), by="a sync")
        if embedded is not None:
            shown["embedding"] = embed_payload(embedded, note=rest)
        if args.json:
            print_json(shown) if not args.watch else print(_one_line(shown), flush=True)
        else:
            print(describe(reports, dry_run=args.dry_run), flush=True)
            if embedded is not None:
                print(embedded.describe(after_import=True), flush=True)
            if rest:
                print(f"note: {rest}", flush=True)
        # A source found where it is looked for by default that failed (an agent's folder
        # this user may not read) does not keep --watch from watching the others.
        failing: dict[SourceKey, str] = {}
        retried, named_failed = "", False
        if args.watch:
            from harkback.pipeline.watch import CHECK_S, failed_at_start, watch
            failing, named_failed = failed_at_start(located, reports)
            if not named_failed:
                retried = f"; watching the others, trying it again every {CHECK_S:g} s"
        for failed in (r for r in reports if r.status == "failed"):
            # Every failure is also one line on stderr (the table or payload says it too).
            print(line_of(f"harkback: sync of {failed.kind} at {failed.location} failed: "
                          f"{failed.error}{retried}"), file=sys.stderr)
        if args.watch:
            if not _watches(args, located, reports):
                # Nothing to watch, or a source named by flag failed or is not there: say
                # so, as plain sync does, rather than watch nothing until Ctrl-C.
                return finished(False, skips)
            watched = await watch(located, store, as_json=args.json, embedder=embedder,
                                  redact=settings_of(args).redact, prune=args.prune,
                                  name_skipped=lambda r: name_skips(r.skipped, r.skips,
                                                                    verbose=args.verbose),
                                  store_file=store_file, find=lambda: located_again(args),
                                  failing=failing, lock=lock, memo=memo, named=reports)
            # Stopped by Ctrl-C, cleanly: the status sync would give now, failed while a
            # source's last sync failed (its failure was printed when it came); skips were
            # named as they came, and make it "done with skips" as they do for sync; an
            # embedding that stopped and had not worked again since makes it 3 too.
            return finished(not watched.failing, skips + watched.skips,
                            watched.embedded or embedded)
    finally:
        lock.close()
        store.close()
    return finished(bool(shown["success"]), skips, embedded)


async def _embedded(args: argparse.Namespace, store: SessionStore, embedder: Embedder | None,
                    reports: Sequence[SourceReport]) -> EmbedSummary | None:
    """What the embedder made of what the sync stored: those sessions' messages alone, not
    the whole history (hours with a local model, unsaid, at the first sync after an
    embedder was configured: :func:`left_to_embed` names ``harkback embed`` for it). A
    sync that stored nothing does not look (a scan of every message, 0.7 s at a million)."""
    stored = frozenset(s for r in reports for s in r.stored)
    if embedder is None or not stored:
        return None if embedder is None else EmbedSummary(model=embedder.name, embedded=0)
    return await embed_after(store, embedder, progress_wanted(args),
                             counted=kept_while_embedding(args, embedder.name), sessions=stored)


class Unused:
    """The store a sync created, taken away again (with its lock file) when the sync ends
    having stored nothing in it: failed, or stopped (Ctrl-C, SIGTERM) while it waited its
    turn or before its first session was stored. A store that was there before stays.

    Called while the lock is held when it is, before another sync may write to the store.
    """

    def __init__(self, new: Path | None, store: SessionStore, lock: SyncLock) -> None:
        """``new``: the store file this sync creates (None: it was there, or is no file)."""
        self.new, self.store, self.lock = new, store, lock
        self.removed = False

    async def discard(self, stopped: argparse.Namespace | None = None) -> None:
        """Remove the store file and its lock file if the store holds no session (once);
        a sync ``stopped`` on the way then says so (:func:`removed_new_store`)."""
        if self.new is None or self.removed or not await holds_nothing(self.store):
            return
        self.removed = True
        self.store.close()
        if wiring.discard_new(self.new) and stopped is not None:
            stopped_with(stopped, removed_new_store(self.new))
        self.lock.discard()  # made with the store, unless another sync holds it


def _watches(args: argparse.Namespace, located: Sequence[Located],
             reports: Sequence[SourceReport]) -> bool:
    """Whether ``sync --watch`` goes on watching after the first sync (``reports``): there
    is something to watch, and every source a flag named was synced."""
    if not args.watch:
        return False
    from harkback.pipeline.watch import failed_at_start
    return any(p.importers or p.present for p in located) \
        and not failed_at_start(located, reports)[1]


def _one_line(shown: dict[str, object]) -> str:
    return json_text(shown)

