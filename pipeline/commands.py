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
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from returns.result import Failure, Result

from harkback.pipeline import wiring
from harkback.pipeline.embed import EmbedSummary, embed_missing
from harkback.pipeline.facade import Harkback, Response
from harkback.pipeline.model_flags import model_settings
from harkback.pipeline.output import format_page, format_payload, print_json
from harkback.pipeline.settings import Settings, effective, flags_of
from harkback.stages.errors import BadRecord, QueryRejected
from harkback.stages.ports import Embedder, SessionStore
from harkback.stages.stage import as_result
from harkback.stages.when import parse_as_of, parse_time_bound

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70

if TYPE_CHECKING:
    from harkback.adapters.sources.importing import Importer
    from harkback.pipeline.importing import ImportOutcome

T = TypeVar("T")


class CliError(Exception):
    """A failure to report as one line, with the exit status to use."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.status = status


def settings_of(args: argparse.Namespace) -> Settings:
    """The command's effective settings (flags > environment > config file > defaults),
    read once; a config file that cannot be used is a usage error."""
    found: Settings | None = getattr(args, "effective_settings", None)
    if found is None:
        made = effective(flags_of(args), os.environ)
        if isinstance(made, Failure):
            raise CliError(made.failure(), EXIT_USAGE)
        found = made.unwrap()
        args.effective_settings = found
    return found


def _db(args: argparse.Namespace) -> str:
    return settings_of(args).db


def _needs_file(target: str) -> None:
    if wiring.store_kind(target) == "sqlite" and not Path(target).is_file():
        raise CliError(f"no database at {target}: ingest or import sessions first")


def _unwrap(result: Result[T, Any], status: int = EXIT_FAILED) -> T:
    if isinstance(result, Failure):
        error = result.failure()
        usage = isinstance(error, QueryRejected)
        raise CliError(error.reason if usage else error.message(),
                       EXIT_USAGE if usage else status)
    return result.unwrap()


def open_store(target: str, *, readonly: bool) -> SessionStore:
    """Open the store ``target`` names or raise :class:`CliError` saying why not."""
    return _unwrap(wiring.open_store(target, readonly=readonly))


def _embedder(args: argparse.Namespace) -> Embedder | None:
    chosen = settings_of(args)
    return _unwrap(wiring.embedder_for(chosen.embedder, chosen.model_environment(os.environ)))


async def _embed_after(store: SessionStore, embedder: Embedder | None,
                       progress: bool | None) -> EmbedSummary | None:
    """Embed what an ingest or import added, when an embedder is configured."""
    if embedder is None:
        return None
    vectors = store.vector_store()
    if vectors is None:
        raise CliError("this store keeps no vectors; leave out --embedder")
    return await embed_missing(vectors, embedder, progress=progress)


async def _release(embedder: Embedder | None) -> None:
    if embedder is not None:
        await embedder.aclose()


async def ingest(args: argparse.Namespace) -> int:
    """``harkback ingest FILE``: store the sessions of a JSON-lines file (``import jsonl``'s
    path, reading the whole file)."""
    from harkback.adapters.sources.importing import resolved
    from harkback.pipeline.ingest import JsonlImporter

    if not args.file.is_file():
        raise CliError(f"no such file: {args.file}")
    bad: list[BadRecord] = []

    def report_bad(error: BadRecord) -> None:
        bad.append(error)
        print(f"harkback: {args.file}: {error.message()} (skipped)", file=sys.stderr)

    (outcome,), embedded = await _import(
        args, (JsonlImporter(resolved(args.file), report_bad),), full=True)
    ok = outcome.ok and not bad and (embedded is None or embedded.ok)
    if args.json:
        payload = {**outcome.to_payload(), "success": ok}
        if embedded is not None:
            payload["embedding"] = _embed_payload(embedded)
        print_json(payload)
        return EXIT_OK if ok else EXIT_FAILED
    if outcome.error is not None:
        raise CliError(f"{outcome.line()}; stopped: {outcome.error.message()}")
    print(outcome.line())
    if embedded is not None:
        print(embedded.describe())
    return EXIT_OK if ok else EXIT_FAILED


async def _import(args: argparse.Namespace, importers: Sequence[Importer], *, full: bool
                  ) -> tuple[list[ImportOutcome], EmbedSummary | None]:
    """Run ``importers`` into the store of ``args`` (``ingest`` and ``import`` alike), then
    embed what they added when an embedder is configured."""
    from harkback.adapters.stores.import_ledger import MemoryImportLedger
    from harkback.pipeline.importing import run_import

    embedder = _embedder(args)
    outcomes = []
    try:
        store = open_store(_db(args), readonly=False)
        try:
            # A store that keeps no ledger still imports; what was read is not remembered.
            ledger = store.import_ledger() or MemoryImportLedger()
            for importer in importers:
                outcomes.append(await run_import(importer, store, ledger, full=full,
                                                 progress=args.progress))
            embedded = await _embed_after(store, embedder, args.progress)
        finally:
            store.close()
    finally:
        await _release(embedder)
    return outcomes, embedded


def _check_times(args: argparse.Namespace) -> None:
    """An unreadable ``--since``/``--until`` is a usage error (exit 2), found before the
    store is opened."""
    for flag in ("since", "until"):
        value = getattr(args, flag)
        if value is not None:
            _unwrap(parse_time_bound(value, now=0.0, what=f"--{flag}"), EXIT_USAGE)


async def search(args: argparse.Namespace) -> int:
    """``harkback search QUERY``: recall the sessions about a question."""
    _check_times(args)
    as_of = None if args.as_of is None else _unwrap(parse_as_of(args.as_of))
    chosen = settings_of(args)
    settings = wiring.RecallSettings(
        db=chosen.db, ranker=args.ranker, summarizer=args.summarizer,
        chat=model_settings(args, chosen.model_environment()), deadline_s=args.deadline,
        rerank=args.rerank, embedder=chosen.embedder,
        environ=chosen.model_environment(os.environ))
    _unwrap(wiring.pipeline_for(settings))  # usage errors before the store is opened
    store = _unwrap(wiring.open_for_recall(settings))
    try:
        harkback = _unwrap(wiring.recall(settings, store))
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
    return _emit(response, as_json=args.json)


async def recent(args: argparse.Namespace) -> int:
    """``harkback recent``: list recent sessions, newest first."""
    _check_times(args)
    store = open_store(_db(args), readonly=True)
    try:
        response = await Harkback(store=store).recent(
            limit=args.limit, current_session_id=args.current_session, since=args.since,
            until=args.until, sources=tuple(args.source or ()),
            projects=tuple(args.project or ()))
    finally:
        store.close()
    return _emit(response, as_json=args.json)


async def show(args: argparse.Namespace) -> int:
    """``harkback show SESSION_ID``: a page of one session's transcript, with message ids."""
    target = _db(args)
    _needs_file(target)
    store = open_store(target, readonly=True)
    try:
        read = await Harkback(store=store).read_session(
            args.session_id, around=args.around, offset=args.offset, limit=args.limit)
    finally:
        store.close()
    payload = _unwrap(read).to_payload()
    if args.json:
        print_json(payload)
    else:
        print(format_page(payload))
    return EXIT_OK


def _emit(response: Response, *, as_json: bool) -> int:
    payload = response.to_payload()
    if as_json:
        print_json(payload)
        return EXIT_OK if payload["success"] else EXIT_FAILED
    if not payload["success"]:
        raise CliError(payload["error"])
    print(format_payload(payload))
    return EXIT_OK


async def demo(args: argparse.Namespace) -> int:
    """``harkback demo``: build a sample store and ask it questions."""
    from harkback.pipeline.demo import run_demo
    return await run_demo(args.db)


MCP_EXTRA = "the MCP server needs the mcp extra: pip install 'harkback[mcp]'"


async def mcp(args: argparse.Namespace) -> int:
    """``harkback mcp``: serve the recall tools over MCP on stdio (the SDK loads only here)."""
    try:
        import mcp  # noqa: F401  (only to learn whether the extra is installed)
    except ImportError:
        raise CliError(MCP_EXTRA) from None
    from harkback.pipeline.mcp_server import serve
    await serve(settings_of(args))
    return EXIT_OK


async def config(args: argparse.Namespace) -> int:
    """``harkback config``: each setting's effective value and where it came from."""
    chosen = settings_of(args)
    if args.json:
        print_json(chosen.to_payload())
    else:
        print(chosen.describe())
    return EXIT_OK


async def completion(args: argparse.Namespace) -> int:
    """``harkback completion bash|zsh``: the shell's completion script, from the parser."""
    from harkback.pipeline.cli import build_parser
    from harkback.pipeline.completion import script
    print(script(args.shell, build_parser()), end="")
    return EXIT_OK


async def import_history(args: argparse.Namespace) -> int:
    """``harkback import KIND [PATH]``: import another agent's transcripts incrementally."""
    from harkback.pipeline.importing import importers_for

    bad: list[BadRecord] = []

    def report_bad(error: BadRecord) -> None:
        bad.append(error)
        print(f"harkback: {args.path}: {error.message()} (skipped)", file=sys.stderr)

    found = importers_for(args.kind, args.path, on_bad=report_bad)
    if isinstance(found, Failure):
        raise CliError(found.failure().reason)
    outcomes, embedded = await _import(args, found.unwrap(), full=args.full)
    ok = all(o.ok for o in outcomes) and not bad and (embedded is None or embedded.ok)
    if args.json:
        payload: dict[str, Any] = {"success": ok,
                                   "sources": [o.to_payload() for o in outcomes]}
        if embedded is not None:
            payload["embedding"] = _embed_payload(embedded)
        print_json(payload)
    else:
        print("\n".join(o.describe() for o in outcomes))
        if embedded is not None:
            print(embedded.describe())
    return EXIT_OK if ok else EXIT_FAILED


def _embed_payload(summary: EmbedSummary) -> dict[str, Any]:
    return {"model": summary.model, "embedded": summary.embedded, "complete": summary.ok,
            "error": summary.error.message() if summary.error is not None else None}


async def embed(args: argparse.Namespace) -> int:
    """``harkback embed``: give stored messages their vectors (resumable)."""
    embedder = _embedder(args)
    if embedder is None:
        raise CliError("embed needs an embedding model: --embedder SPEC or HARKBACK_EMBEDDER",
                       EXIT_USAGE)
    target = _db(args)
    try:
        _needs_file(target)
        store = open_store(target, readonly=False)
        try:
            vectors = store.vector_store()
            if vectors is None:
                raise CliError(f"the store at {target} keeps no vectors")
            summary = await embed_missing(vectors, embedder, roles=args.role,
                                          progress=args.progress)
        finally:
            store.close()
    finally:
        await _release(embedder)
    if args.json:
        print_json({"success": summary.ok, **_embed_payload(summary)})
    else:
        print(summary.describe())
    return EXIT_OK if summary.ok else EXIT_FAILED


async def optimize(args: argparse.Namespace) -> int:
    """``harkback optimize``: merge the full-text index after large imports."""
    target = _db(args)
    _needs_file(target)
    if not args.json:
        print(f"merging the full-text index of {target} (a million messages take about "
              "20 s)...", file=sys.stderr, flush=True)
    store = open_store(target, readonly=False)
    started = time.monotonic()
    try:
        outcome = as_result(await store.optimize().awaitable())
    finally:
        store.close()
    _unwrap(outcome)
    seconds = round(time.monotonic() - started, 1)
    if args.json:
        print_json({"success": True, "db": target, "seconds": seconds})
    else:
        print(f"merged the full-text index of {target} in {seconds} s")
    return EXIT_OK


async def sources(args: argparse.Namespace) -> int:
    """``harkback sources``: what was imported from where, and when."""
    from harkback.pipeline.importing import describe_sources, source_payload

    target = _db(args)
    listed: tuple[Any, ...] = ()
    if wiring.store_kind(target) != "sqlite" or Path(target).is_file():
        store = open_store(target, readonly=True)
        try:
            ledger = store.import_ledger()
            if ledger is not None:
                listed = _unwrap(as_result(await ledger.sources().awaitable()))
        finally:
            store.close()
    if args.json:
        print_json({"success": True, "sources": [source_payload(s) for s in listed]})
    else:
        print(describe_sources(listed))
    return EXIT_OK


COMMANDS: dict[str, Callable[[argparse.Namespace], Coroutine[Any, Any, int]]] = {
    "ingest": ingest, "search": search, "recent": recent, "demo": demo,
    "import": import_history, "sources": sources, "embed": embed, "optimize": optimize,
    "mcp": mcp, "show": show, "config": config, "completion": completion}
"""Each command's coroutine by name."""
