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
from harkback.pipeline.config import default_db_path
from harkback.pipeline.embed import EmbedSummary, embed_missing
from harkback.pipeline.facade import Harkback, Response
from harkback.pipeline.model_flags import model_settings
from harkback.pipeline.output import format_page, format_payload, print_json
from harkback.stages.errors import BadRecord, QueryRejected
from harkback.stages.ports import Embedder, SessionStore
from harkback.stages.stage import as_result
from harkback.stages.when import parse_as_of

if TYPE_CHECKING:
    from harkback.pipeline.importing import ImportOutcome

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIPPED, EXIT_INTERNAL = 0, 1, 2, 3, 70
"""EXIT_SKIPPED: an ingest or import ran to its end but left damaged input out (named)."""

NAMED_SKIPS = 10
"""Without --verbose, an import names this many damaged lines on stderr, then counts."""

T = TypeVar("T")


class CliError(Exception):
    """A failure to report as one line, with the exit status to use."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.status = status


def _db(args: argparse.Namespace) -> str:
    return os.fspath(args.db) if args.db else os.fspath(default_db_path())


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
    return _unwrap(wiring.embedder_for(args.embedder or os.environ.get("HARKBACK_EMBEDDER")))


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
    """``harkback ingest FILE``: store the sessions of a JSON-lines file."""
    from harkback.pipeline.ingest import ingest_file

    if not args.file.is_file():
        raise CliError(f"no such file: {args.file}")
    embedder = _embedder(args)

    def report_bad(error: BadRecord) -> None:
        print(f"harkback: {args.file}: {error.message()} (skipped)", file=sys.stderr)

    try:
        store = open_store(_db(args), readonly=False)
        try:
            summary = await ingest_file(args.file, store, on_bad=report_bad,
                                        progress=args.progress)
            if summary.read_error:
                raise CliError(f"{summary.describe()}; stopped: {summary.read_error}")
            if summary.store_error is not None:
                raise CliError(f"{summary.describe()}; stopped: "
                               f"{summary.store_error.message()}")
            embedded = await _embed_after(store, embedder, args.progress)
        finally:
            store.close()
    finally:
        await _release(embedder)
    print(summary.describe())
    if embedded is not None:
        print(embedded.describe())
    if embedded is not None and not embedded.ok:
        return EXIT_FAILED
    return EXIT_OK if summary.ok else EXIT_SKIPPED


async def search(args: argparse.Namespace) -> int:
    """``harkback search QUERY``: recall the sessions about a question."""
    as_of = None if args.as_of is None else _unwrap(parse_as_of(args.as_of))
    settings = wiring.RecallSettings(
        db=_db(args), ranker=args.ranker, summarizer=args.summarizer,
        chat=model_settings(args, os.environ), deadline_s=args.deadline, rerank=args.rerank,
        embedder=args.embedder or os.environ.get("HARKBACK_EMBEDDER"))
    _unwrap(wiring.pipeline_for(settings))  # usage errors before the store is opened
    store = _unwrap(wiring.open_for_recall(settings))
    try:
        harkback = _unwrap(wiring.recall(settings, store))
        try:
            response = await harkback.search(
                args.query, limit=args.limit, roles=args.role,
                current_session_id=args.current_session, since=args.since, until=args.until,
                as_of=as_of)
        finally:
            await harkback.aclose()
    finally:
        store.close()
    return _emit(response, as_json=args.json)


async def recent(args: argparse.Namespace) -> int:
    """``harkback recent``: list recent sessions, newest first."""
    store = open_store(_db(args), readonly=True)
    try:
        response = await Harkback(store=store).recent(
            limit=args.limit, current_session_id=args.current_session, since=args.since,
            until=args.until)
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
    await serve(_db(args))
    return EXIT_OK


async def import_history(args: argparse.Namespace) -> int:
    """``harkback import KIND [PATH]``: import another agent's transcripts incrementally."""
    from harkback.pipeline.importing import importers_for, run_import

    found = importers_for(args.kind, args.path)
    if isinstance(found, Failure):
        raise CliError(found.failure().reason)
    embedder = _embedder(args)
    outcomes = []
    try:
        store = open_store(_db(args), readonly=False)
        try:
            ledger = store.import_ledger()
            if ledger is None:
                raise CliError("this store does not remember imports; import into a file")
            for importer in found.unwrap():
                outcomes.append(await run_import(importer, store, ledger, full=args.full,
                                                 progress=args.progress))
            embedded = await _embed_after(store, embedder, args.progress)
        finally:
            store.close()
    finally:
        await _release(embedder)
    ok = all(o.ok for o in outcomes) and (embedded is None or embedded.ok)
    skips = sum(o.skips for o in outcomes)
    _name_skips(outcomes, verbose=args.verbose)
    for outcome in outcomes:
        if outcome.error is not None:
            print(f"harkback: import of {outcome.key.location} stopped: "
                  f"{outcome.error.message()}", file=sys.stderr)
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
    return EXIT_FAILED if not ok else EXIT_SKIPPED if skips else EXIT_OK


def _name_skips(outcomes: Sequence[ImportOutcome], *, verbose: bool) -> None:
    """Name damaged input on stderr: all of it with --verbose, else the first few."""
    named = [skip for o in outcomes for skip in o.skipped]
    shown = named if verbose else named[:NAMED_SKIPS]
    for skip in shown:
        print(f"harkback: {skip.describe()} (skipped)", file=sys.stderr)
    rest = sum(o.skips for o in outcomes) - len(shown)
    if rest > 0:
        more = "" if verbose else " (--verbose names them)"
        print(f"harkback: {rest} more damaged line(s) skipped{more}", file=sys.stderr)


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
    "mcp": mcp, "show": show}
"""Each command's coroutine by name."""
