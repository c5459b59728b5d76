"""The ``harkback`` command line: ingest, search, recent, demo.

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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from returns.result import Failure

from harkback.adapters.sqlite_store import SqliteStore
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.config import default_db_path
from harkback.pipeline.facade import Harkback, Response
from harkback.pipeline.ingest import ingest_file
from harkback.stages.errors import BadRecord
from harkback.stages.flow import Loaded, SummarizedSet
from harkback.stages.request import MAX_LIMIT
from harkback.stages.stage import Stage
from harkback.stages.summarize import ExtractiveSummarize, NoSummarize, RawSummarize

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
    search.add_argument("--summarizer", choices=sorted(SUMMARIZERS), default="extractive")
    search.add_argument("--json", action="store_true", help="print the JSON payload only")

    recent = commands.add_parser("recent", help="list recent sessions")
    with_db(recent)
    recent.add_argument("--limit", type=_limit, default=10)
    recent.add_argument("--current-session", default=None)
    recent.add_argument("--json", action="store_true")

    demo = commands.add_parser("demo", help="build a sample store and ask it questions")
    demo.add_argument("--db", type=Path, default=None,
                      help="where to build the demo database (default: a temporary folder)")
    return parser


def _db(args: argparse.Namespace) -> Path:
    return Path(args.db) if args.db else default_db_path()


def open_store(path: Path, *, readonly: bool) -> SqliteStore:
    opened = SqliteStore.open(path, readonly=readonly)
    if isinstance(opened, Failure):
        raise CliError(opened.failure().message())
    return opened.unwrap()


async def _ingest(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        raise CliError(f"no such file: {args.file}")
    store = open_store(_db(args), readonly=False)

    def report_bad(error: BadRecord) -> None:
        print(f"harkback: {args.file}: {error.message()} (skipped)", file=sys.stderr)

    try:
        summary = await ingest_file(args.file, store, on_bad=report_bad, progress=args.progress)
    finally:
        store.close()
    if summary.store_error is not None:
        raise CliError(f"{summary.describe()}; stopped: {summary.store_error.message()}")
    print(summary.describe())
    return EXIT_OK if summary.ok else EXIT_FAILED


async def _search(args: argparse.Namespace) -> int:
    store = open_store(_db(args), readonly=True)
    pipeline = attrs.evolve(Pipeline(), summarize=SUMMARIZERS[args.summarizer])
    try:
        response = await Harkback(store=store, pipeline=pipeline).search(
            args.query, limit=args.limit, roles=args.role,
            current_session_id=args.current_session, since=args.since, until=args.until)
    finally:
        store.close()
    return _emit(response, as_json=args.json)


async def _recent(args: argparse.Namespace) -> int:
    store = open_store(_db(args), readonly=True)
    try:
        response = await Harkback(store=store).recent(
            limit=args.limit, current_session_id=args.current_session)
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


COMMANDS = {"ingest": _ingest, "search": _search, "recent": _recent, "demo": _demo}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``harkback`` command; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(COMMANDS[args.command](args))
    except CliError as error:
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
