"""What each ``harkback`` command does, given its parsed arguments: call, then print.

Every command opens its store through :mod:`harkback.pipeline.wiring` and sees it only
through the ports; a failure is a :class:`CliError` with the exit status to use. What only
one command needs (the importers, the ingest reader) is imported inside it, so a search
starts without them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import attrs
from returns.result import Failure

from harkback.pipeline import wiring
from harkback.pipeline.check_command import check
from harkback.pipeline.command_kit import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    db_of,
    embed_after,
    embed_payload,
    embedder_of,
    error_line,
    finished,
    holds_nothing,
    name_skips,
    name_stopped,
    needs_file,
    noted,
    open_store,
    opened,
    release,
    settings_of,
    unwrap,
)
from harkback.pipeline.embed import EmbedSummary
from harkback.pipeline.facade import Harkback, Response
from harkback.pipeline.in_memory import in_memory, refusal
from harkback.pipeline.model_flags import model_settings
from harkback.pipeline.output import format_page, format_payload, print_json
from harkback.pipeline.terminal import line_of
from harkback.pipeline.termination import removed_new_store, stopped_with
from harkback.pipeline.upkeep_commands import embed, migrate, optimize, redact, sources, stats
from harkback.stages.time_bounds import out_of_order, parse_as_of, parse_time_bound

if TYPE_CHECKING:
    from harkback.adapters.sources.importing import Importer
    from harkback.pipeline.importing import ImportOutcome
    from harkback.pipeline.so_far import SoFar


async def ingest(args: argparse.Namespace) -> int:
    """``harkback ingest FILE``: store the sessions of a JSON-lines file (``import jsonl``'s
    path, reading the whole file)."""
    from harkback.pipeline.importing import importers_for

    found = importers_for("jsonl", args.file)
    if isinstance(found, Failure):
        raise CliError(found.failure().reason)
    (importer,) = found.unwrap()
    (outcome,), embedded, rest = await _import(
        args, (importer,), full=True, stopped=lambda so_far: so_far.one_payload(importer.key))
    ok = outcome.ok  # vectors not made leave the sessions stored: done, status 3
    name_skips(outcome.skipped, outcome.skips, verbose=args.verbose)
    name_stopped(embedded, after_import=ok)
    stopped = (None if outcome.error is None
               else f"{outcome.line()}; stopped: {outcome.error.message()}")
    if args.json:
        payload = {**outcome.to_payload(), "success": ok}
        if embedded is not None:
            payload["embedding"] = embed_payload(embedded, note=rest)
        print_json(noted(args, payload))
        if stopped is not None:  # the one line every failure gives, --json or not
            print(line_of(f"harkback: {stopped}"), file=sys.stderr)
        return finished(ok, outcome.skips, embedded)
    if stopped is not None:
        raise CliError(stopped)
    print(outcome.line())
    for note in outcome.notes:
        print(line_of(f"note: {note}"))
    if embedded is not None:
        print(embedded.describe(after_import=True))
    if rest:
        print(f"note: {rest}")
    return finished(ok, outcome.skips, embedded)


async def _import(args: argparse.Namespace, importers: Sequence[Importer], *, full: bool,
                  stopped: Callable[[SoFar], dict[str, Any]]
                  ) -> tuple[list[ImportOutcome], EmbedSummary | None, str | None]:
    """Run ``importers`` into the store of ``args`` (``ingest`` and ``import`` alike), then
    embed the sessions they read when an embedder is configured (a sync: it stored), with
    the note naming ``harkback embed`` for the rest (:mod:`~harkback.pipeline.embed_scope`).
    Stopped on the way (Ctrl-C), it leaves ``stopped`` of what it did so far as the payload
    to print."""
    from harkback.adapters.stores.import_ledger import MemoryImportLedger
    from harkback.pipeline.embed_scope import (
        first_vectors,
        held_besides,
        kept_while_embedding,
        left_to_embed,
    )
    from harkback.pipeline.importing import run_import
    from harkback.pipeline.so_far import SoFar
    from harkback.pipeline.sync_lock import SyncLock

    refused = refusal(db_of(args), args.command)
    if refused is not None:
        raise CliError(refused, EXIT_USAGE)
    embedder = embedder_of(args)
    outcomes, so_far = [], SoFar()
    new = wiring.new_file(db_of(args))
    unused, rest = False, None
    try:
        store = open_store(db_of(args), readonly=False, create=args.create, args=args)
        # It writes the marks a sync writes: the two take turns (see pipeline/sync_lock.py).
        lock = SyncLock.joined(db_of(args), store, command=args.command)
        try:
            # A store that keeps no ledger still imports; what was read is not remembered.
            ledger = store.import_ledger() or MemoryImportLedger()
            fresh = await first_vectors(store, embedder)
            async with lock.held():
                for importer in importers:
                    outcomes.append(so_far.ended_with(await run_import(
                        importer, store, ledger, full=full, progress=args.progress,
                        redact=settings_of(args).redact, seen=so_far.saw)))
            # What they read, not every session lacking a vector: one session ingested
            # into a large store whose vectors were never made waited for all of them. Not
            # only what they stored: a session found unchanged but never embedded (stored
            # without an embedder, or by a run stopped while it embedded) stayed so, unsaid.
            read = frozenset(s for o in outcomes for s in o.delta.read)
            counted = None if embedder is None else kept_while_embedding(args, embedder.name)
            embedded = await embed_after(store, embedder, args.progress, counted=counted,
                                         sessions=read)
            if embedded is not None and fresh:
                rest = left_to_embed(fresh, embedded, await held_besides(store, read),
                                     by=f"an {args.command}")
            # A source that could not be read leaves no store behind that was not there.
            unused = (new is not None and not all(o.ok for o in outcomes)
                      and await holds_nothing(store))
        except BaseException:
            # Nor does a run stopped on the way (Ctrl-C, an error) before it stored any.
            unused = new is not None and await holds_nothing(store)
            stopped_with(args, payload=noted(args, stopped(so_far)))
            raise
        finally:
            lock.close()
            store.close()
            # Only the store: an import makes no lock file (SyncLock.joined locks one only
            # when a sync made it), and a sync's file is not the import's to remove.
            if unused and new is not None and wiring.discard_new(new):
                stopped_with(args, removed_new_store(new))  # said if it was stopped
    finally:
        await release(embedder)
    return outcomes, embedded, rest


def _check_times(args: argparse.Namespace, as_of: float | None = None) -> None:
    """An unreadable ``--since``/``--until`` is a usage error (exit 2), found before the
    store is opened; so is one out of range counted back from ``as_of`` (else now), and a
    ``--since`` later than the ``--until``."""
    bounds = {flag: unwrap(parse_time_bound(value, now=as_of, what=f"--{flag}",
                                            end=flag == "until"), EXIT_USAGE)
              for flag in ("since", "until") if (value := getattr(args, flag)) is not None}
    if len(bounds) == 2 and bounds["since"] > bounds["until"]:
        raise CliError(out_of_order((args.since, bounds["since"]), (args.until, bounds["until"]),
                                    names=("--since", "--until")).reason, EXIT_USAGE)


async def search(args: argparse.Namespace) -> int:
    """``harkback search QUERY``: recall the sessions about a question."""
    as_of = None if args.as_of is None else unwrap(parse_as_of(args.as_of, what="--as-of"))
    _check_times(args, as_of)
    chosen = settings_of(args)
    settings = wiring.RecallSettings(
        db=chosen.db, ranker=args.ranker, summarizer=args.summarizer,
        chat=model_settings(args, chosen.model_environment()), deadline_s=args.deadline,
        rerank=args.rerank, embedder=chosen.embedder,
        environ=chosen.model_environment(os.environ))
    unwrap(wiring.pipeline_for(settings))  # usage errors before the store is opened
    store = opened(wiring.open_for_recall(settings, once=True))  # one search, then exit
    try:
        harkback = unwrap(wiring.recall(settings, store))
        try:
            response = await harkback.search(
                args.query, limit=chosen.limit, roles=args.role,
                current_session_id=args.current_session, since=args.since, until=args.until,
                as_of=as_of, sources=tuple(args.source or ()),
                projects=tuple(args.project or ()))
        finally:
            await harkback.aclose()
    finally:
        store.close()
    # The hint to open a result repeats --db when a flag named the store: pasted, it
    # must read the same store.
    named = chosen.db if chosen.origin("db") == "flag --db" else None
    return _emit(response, as_json=args.json, db=named, note=in_memory(chosen.db))


async def recent(args: argparse.Namespace) -> int:
    """``harkback recent``: list recent sessions, newest first."""
    _check_times(args)
    store = open_store(db_of(args), readonly=True)
    try:
        response = await Harkback(store=store).recent(
            limit=args.limit, current_session_id=args.current_session, since=args.since,
            until=args.until, sources=tuple(args.source or ()),
            projects=tuple(args.project or ()))
    finally:
        store.close()
    return _emit(response, as_json=args.json, note=in_memory(db_of(args)))


async def show(args: argparse.Namespace) -> int:
    """``harkback show SESSION_ID``: a page of one session's transcript, with message ids."""
    target = db_of(args)
    needs_file(target)
    store = open_store(target, readonly=True)
    try:
        read = await Harkback(store=store).read_session(
            args.session_id, around=args.around, offset=args.offset, limit=args.limit)
    finally:
        store.close()
    empty = in_memory(target)
    if empty is not None and isinstance(read, Failure):  # say why nothing is there
        raise CliError(f"{error_line(read.failure())} ({empty})")
    payload = unwrap(read).to_payload()
    if args.json:
        print_json(payload)
    else:
        print(format_page(payload))
    return EXIT_OK


def _emit(response: Response, *, as_json: bool, db: str | None = None,
          note: str | None = None) -> int:
    # A failure is one line (and the payload under --json, printed by the entry point); a
    # request rejected as asked (a role, a window ending before it starts) is a usage error.
    unwrap(response.outcome)
    payload = response.to_payload()
    if note is not None:  # why nothing was found: the in-memory store is always empty
        payload["notes"] = [*payload.get("notes", ()), note]
    if as_json:
        print_json(payload)
    else:
        print(format_payload(payload, db=db))  # its notes with it, the note above too
    return EXIT_OK


async def demo(args: argparse.Namespace) -> int:
    """``harkback demo``: build a sample store and ask it questions."""
    from harkback.pipeline.demo import run_demo
    return await run_demo(args.db)


async def import_history(args: argparse.Namespace) -> int:
    """``harkback import KIND [PATH]``: import another agent's transcripts incrementally."""
    from harkback.adapters.sources.hermes import HermesImporter
    from harkback.pipeline.importing import importers_for

    found = importers_for(args.kind, args.path)
    if isinstance(found, Failure):
        raise CliError(found.failure().reason)
    importers = [attrs.evolve(i, archived=True)
                 if isinstance(i, HermesImporter) and args.archived else i
                 for i in found.unwrap()]
    from harkback.pipeline.import_hints import with_hint
    outcomes, embedded, rest = await _import(
        args, importers, full=args.full,
        stopped=lambda so_far: {"sources": so_far.sources_payload()})
    outcomes = [with_hint(o) for o in outcomes]  # a folder with nothing of that kind
    ok = all(o.ok for o in outcomes)  # vectors not made leave the sessions stored
    name_skips([k for o in outcomes for k in o.skipped], sum(o.skips for o in outcomes),
               verbose=args.verbose)
    for outcome in outcomes:
        if outcome.error is not None:
            print(line_of(f"harkback: import of {outcome.key.location} stopped: "
                          f"{outcome.error.message()}"), file=sys.stderr)
    name_stopped(embedded, after_import=ok)
    if args.json:
        payload: dict[str, Any] = {"success": ok,
                                   "sources": [o.to_payload() for o in outcomes]}
        if embedded is not None:
            payload["embedding"] = embed_payload(embedded, note=rest)
        print_json(noted(args, payload))
    else:
        print("\n".join(o.describe() for o in outcomes))
        if embedded is not None:
            print(embedded.describe(after_import=True))
        if rest:
            print(f"note: {rest}")
    return finished(ok, sum(o.skips for o in outcomes), embedded)


async def sync(args: argparse.Namespace) -> int:
    """``harkback sync``: every agent history on this machine (see pipeline/sync.py)."""
    from harkback.pipeline.sync_command import run_sync
    return await run_sync(args)


COMMANDS: dict[str, Callable[[argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "ingest": ingest, "search": search, "recent": recent, "demo": demo,
    "import": import_history, "sources": sources, "embed": embed, "optimize": optimize,
    "show": show, "sync": sync, "redact": redact, "migrate": migrate,
    "stats": stats, "check": check}
"""Each command's coroutine by name: the commands that open a store or run stages
(``config`` and ``completion`` are in :mod:`~harkback.pipeline.setup_commands`; ``mcp``,
run before this module is loaded, in :mod:`~harkback.pipeline.mcp_command`)."""
