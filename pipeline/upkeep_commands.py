"""The commands that look after a store: ``embed``, ``optimize``, ``migrate``, ``redact``,
``sources``, ``stats``.

Each opens the store through :mod:`harkback.pipeline.wiring`, does its one job and prints
a line or JSON; failures are :class:`~harkback.pipeline.command_kit.CliError`. On
``--db :memory:`` (a store made for the command and gone after it) each says in one line
that there is nothing to do
(:func:`~harkback.pipeline.in_memory.in_memory_note`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import Any

from returns.result import Failure, Result, Success

from harkback.adapters.stores.migration import Migrated
from harkback.pipeline import wiring
from harkback.pipeline.command_kit import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    db_of,
    embed_payload,
    embedder_of,
    name_stopped,
    needs_file,
    noted,
    open_store,
    release,
    unwrap,
)
from harkback.pipeline.embed import EmbedSummary, embed_missing
from harkback.pipeline.in_memory import in_memory_note
from harkback.pipeline.output import print_json
from harkback.pipeline.terminal import line_of, one_line
from harkback.pipeline.termination import stopped_with
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import Embedder, VectorStore
from harkback.stages.request import role_problem
from harkback.stages.shown_url import shown_url
from harkback.stages.stage import as_result


async def embed(args: argparse.Namespace) -> int:
    """``harkback embed``: give stored messages their vectors (resumable)."""
    problem = role_problem(args.role)  # as search refuses it: nothing to embed is no success
    if problem is not None:
        raise CliError(problem, EXIT_USAGE)
    embedder = embedder_of(args)
    if embedder is None:
        raise CliError("embed needs an embedding model: --embedder SPEC, $HARKBACK_EMBEDDER "
                       "or embedder in the config file", EXIT_USAGE)
    target = db_of(args)
    try:
        needs_file(target)
        store = open_store(target, readonly=False, args=args, existing=True)
        try:
            vectors = store.vector_store()
            if vectors is None:
                raise CliError(f"the store at {target} keeps no vectors")
            dropped = await _dropped(args, vectors, embedder)

            def so_far(done: int) -> None:  # what a Ctrl-C says it kept, counted
                stopped = EmbedSummary(model=embedder.name, embedded=done)
                stopped_with(args, _again(args, stopped.kept_when_stopped()), noted(args, {
                    **embed_payload(stopped), "complete": False,
                    **({"dropped": dropped} if args.replace else {})}))

            so_far(0)
            summary = await embed_missing(vectors, embedder, roles=args.role,
                                          progress=args.progress, counted=so_far)
        finally:
            store.close()
    finally:
        await release(embedder)
    if args.replace and summary.error is not None:  # "run it again" would drop them again
        print(line_of(f"harkback: embedded {summary.embedded} message(s) with {summary.model} "
                      f"after dropping {dropped}; stopped: {summary.error.message()} (the "
                      f"vectors made are kept: {summary.go_on_when()}, harkback embed without "
                      "--replace goes on; --replace would drop them again)"), file=sys.stderr)
    else:
        name_stopped(summary)
    if args.json:
        print_json(noted(args, {"success": summary.ok, **embed_payload(summary),
                                **({"dropped": dropped} if args.replace else {})}))
    elif summary.ok:  # a stop is said once, on stderr, as an ingest's is
        print(summary.describe())
    return EXIT_OK if summary.ok else EXIT_FAILED


PROBE = "does the embedder answer before the vectors of its model are dropped"
"""The text ``embed --replace`` embeds first (a few words: some vector of them)."""


async def _dropped(args: argparse.Namespace, vectors: VectorStore, embedder: Embedder) -> int:
    """``--replace``: the model's vectors dropped (how many; said on stderr), so vectors of
    other dimensions (a model changed under its name) can be kept; 0 without it. The
    embedder is tried first: one out of reach left the store with no vector at all."""
    if not args.replace:
        return 0
    model = embedder.name
    tried = as_result(await embedder.embed([PROBE], "passage").awaitable())
    if isinstance(tried, Failure):
        raise CliError(f"nothing dropped: the embedder failed ({tried.failure().message()})")
    dropped = as_result(await vectors.drop_vectors(model).awaitable())
    if isinstance(dropped, Failure):
        raise CliError(dropped.failure().message())
    print(f"harkback: dropped {dropped.unwrap()} vector(s) of {model}; making them again",
          file=sys.stderr, flush=True)
    return dropped.unwrap()


def _again(args: argparse.Namespace, kept: str) -> str:
    """``kept`` (what a stopped run kept), and after ``--replace`` how to go on: the same
    command would drop the vectors made again."""
    if not args.replace:
        return kept
    return (f"{kept.split(': the same command')[0]}; harkback embed without --replace goes "
            "on from there (--replace would drop them again)")


def said(args: argparse.Namespace, payload: dict[str, Any], line: str,
         note: str | None = None) -> int:
    """Print ``payload`` under ``--json`` (with ``note``), else ``note`` or ``line``."""
    if args.json:
        print_json(noted(args, {**payload, **({"note": note} if note is not None else {})}))
    else:
        print(note if note is not None else line)
    return EXIT_OK


async def optimize(args: argparse.Namespace) -> int:
    """``harkback optimize``: merge the full-text index after large imports."""
    target = db_of(args)
    needs_file(target)
    note = in_memory_note(target, "optimise")
    if note is not None:
        return said(args, {"success": True, "db": target, "seconds": 0.0}, note, note)
    sqlite = wiring.store_kind(target) == "sqlite"
    # Said before it is known whether any index is in several pieces: no merge promised.
    work = ("reading and merging each full-text index in several pieces of" if sqlite
            else "vacuuming and analysing")
    store = open_store(target, readonly=False, args=args, existing=True)  # refused: one line
    if not args.json:
        print(f"{work} {line_of(shown_url(target))} (a million messages take about 20 s)...",
              file=sys.stderr, flush=True)
    started = time.monotonic()
    try:
        outcome = as_result(await store.optimize().awaitable())
    finally:
        store.close()
    merged = unwrap(outcome)
    seconds = round(time.monotonic() - started, 1)
    if args.json:
        print_json(noted(args, {"success": True, "db": shown_url(target), "seconds": seconds,
                                **({"merged": list(merged)} if merged is not None else {})}))
    elif merged == ():  # a second run: each index in one segment already
        print(f"the full-text indexes of {one_line(shown_url(target))} are merged already "
              f"(one segment each): nothing was written")
    else:
        print(f"{'merged the full-text index of' if sqlite else 'vacuumed and analysed'} "
              f"{one_line(shown_url(target))} in {seconds} s"
              + (f" ({', '.join(merged)})" if merged else ""))
    return EXIT_OK


async def migrate(args: argparse.Namespace) -> int:
    """``harkback migrate``: bring a store to this harkback's schema version."""
    target = db_of(args)
    needs_file(target)
    note = in_memory_note(target, "migrate")  # it keeps no schema
    if note is not None:
        return said(args, {"success": True, "db": target, "from": None, "to": None,
                           "applied": []}, note, note)
    migrated = unwrap(await _migrating(args, target))
    # A Ctrl-C only cancels this command (asyncio's way): the migration, one blocking call,
    # ran to its end, and the cancel comes at the next await. Met here, before the success
    # line is said, the line says the store was migrated (it said "1 -> 5", then
    # "interrupted", exit 130, and under --json printed two payloads).
    stopped_with(args, _migration_left(target, migrated))
    await asyncio.sleep(0)
    if migrated.unfinished is not None:  # migrated all the same: exit 0, the note said
        print(line_of(f"harkback: note: {migrated.unfinished}"), file=sys.stderr)
        args.store_notes = [migrated.unfinished]
    if args.json:
        print_json(noted(args, {"success": True, "db": shown_url(target),
                                "from": migrated.before, "to": migrated.after,
                                "applied": list(migrated.applied)}))
    else:
        print(migrated.describe(one_line(shown_url(target))))
    return EXIT_OK


async def _migrating(args: argparse.Namespace, target: str
                     ) -> Result[Migrated, StoreUnavailable]:
    """:func:`wiring.migrate_store` on a thread of its own, awaited: a Ctrl-C cancels the
    await at once (asyncio's way) and has a migration still waiting for the write lock give
    up; the line then says where the store is, once the thread is done."""
    stop = threading.Event()
    outcome: futures.Future[Result[Migrated, StoreUnavailable]] = futures.Future()

    def migrate() -> None:
        if outcome.set_running_or_notify_cancel():  # not called off before it began
            try:
                outcome.set_result(wiring.migrate_store(target, stop.is_set))
            except BaseException as error:  # the command's to say, on its own thread
                outcome.set_exception(error)
    try:
        # Started inside the try: a signal landing while the thread starts (SIGTERM with
        # Ctrl-C ignored) is met below like any other. It escaped when it landed in a
        # thread pool's submit, and the line said "not begun" of a store the thread went on
        # to migrate. A plain thread: a pool's shutdown waits in Thread.join, which a
        # signal can leave believing the thread ended.
        threading.Thread(target=migrate, name="harkback-migrate").start()
        return await asyncio.wrap_future(outcome)
    except (asyncio.CancelledError, KeyboardInterrupt):  # KeyboardInterrupt: raised in it,
        stop.set()  # or SIGTERM while Ctrl-C is ignored
        if not outcome.cancel():  # begun: it commits or rolls back whole, waited for
            _waited_out(outcome)
        ended = (None if outcome.cancelled() or outcome.exception() is not None
                 else outcome.result())
        # "interrupted" alone: migrated or not?
        stopped_with(args, _migration_left(
            target, ended.unwrap() if isinstance(ended, Success) else None))
        raise


def _waited_out(job: futures.Future[Any]) -> None:
    """Wait for ``job`` to end, through any further Ctrl-C or SIGTERM.

    The process cannot exit before the migration's thread ends anyway (its transaction
    commits or rolls back whole). A second signal used to escape this wait, and the line
    then said "the migration had not begun" about a store the thread went on to migrate.
    """
    while True:
        try:
            futures.wait([job])
            return
        except KeyboardInterrupt:
            continue


def _migration_left(target: str, schema: object = None) -> str:
    """What ``harkback migrate`` stopped on the way left: the store's version (``schema``
    when known, else read read-only; each step is one transaction: the store is at one
    version or the next)."""
    if schema is None:
        opened = wiring.open_store(target, readonly=True)
        if isinstance(opened, Failure):
            return "the store is whole, migrated or not: `harkback migrate` again says which"
        store = opened.unwrap()
        try:
            schema = getattr(store, "schema", None)
        finally:
            store.close()
    if not isinstance(schema, Migrated):
        return "the store is whole, migrated or not: `harkback migrate` again says which"
    if schema.behind:
        return (f"the store is still at schema version {schema.after}, not migrated to "
                f"{schema.latest}: the same command run again migrates it")
    return (f"the store was migrated: it is at schema version {schema.after}, this "
            "harkback's (`harkback migrate` again says it is up to date)")


async def redact(args: argparse.Namespace) -> int:
    """``harkback redact``: redact the secrets of a store built before (see redact_store)."""
    from harkback.pipeline.redact_store import run_redact
    target = db_of(args)
    needs_file(target)
    if not args.dry_run and Path(target).is_file() and not Path(target).stat().st_mode & 0o222:
        raise CliError(f"{target} is read-only; make it writable or use --dry-run")
    counts, line = await run_redact(open_store(target, readonly=args.dry_run, args=args,
                                               existing=True),
                                    shown_url(target), dry_run=args.dry_run)
    return said(args, counts, line, in_memory_note(target, "redact"))


async def sources(args: argparse.Namespace) -> int:
    """``harkback sources``: what was imported from where, and when."""
    from harkback.pipeline.sources_report import describe_sources, source_payload

    target = db_of(args)
    needs_file(target)  # no store there is what stats and show say, not "nothing imported"
    listed: tuple[Any, ...] = ()
    store = open_store(target, readonly=True)
    try:
        ledger = store.import_ledger()
        if ledger is not None:
            listed = unwrap(as_result(await ledger.sources().awaitable()))
    finally:
        store.close()
    if args.json:
        print_json({"success": True, "sources": [source_payload(s) for s in listed]})
    else:
        print(describe_sources(listed))
    return EXIT_OK


async def stats(args: argparse.Namespace) -> int:
    """``harkback stats``: how much the store holds (read-only)."""
    from harkback.pipeline.stats import count_store, format_stats

    target = db_of(args)
    needs_file(target)
    store = open_store(target, readonly=True)
    try:
        counted = await count_store(store)
    finally:
        store.close()
    payload = {"success": True, "db": shown_url(target), **unwrap(counted).to_payload()}
    return said(args, payload, format_stats(one_line(shown_url(target)), payload),
                in_memory_note(target, "count"))
