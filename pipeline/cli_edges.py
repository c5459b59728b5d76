"""The command line's edges: usage errors (as JSON too when ``--json`` is asked for), the
arguments' own types, and the database driver's logs (standard output's edges, a reader
that stops reading among them, are :mod:`~harkback.pipeline.cli_stdout`'s).

Light on purpose: the CLI imports it before it knows the command, so it loads nothing
but the standard library.

>>> wants_json(["search", "docker", "--json"]), wants_json(["search", "--", "--json"])
(True, False)
>>> dash_hint(["search", "-docker"])
"a query that begins with '-' goes after '--': harkback search -- -docker"
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import io
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from harkback.pipeline.terminal import json_text, line_of
from harkback.stages.shell_words import shell_joined, shell_quoted
from harkback.stages.shown_number import TEXT_CHARS, cut_text, shown_text

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

EXIT_USAGE = 2


class UsageError(Exception):
    """A command line argparse could not read, with the parser that said so."""

    def __init__(self, message: str, parser: argparse.ArgumentParser) -> None:
        super().__init__(message)
        self.parser = parser


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are raised, for :func:`report_usage` to print
    (argparse's own prints and exits before the command line's ``--json`` is known)."""

    def error(self, message: str) -> NoReturn:
        """Raise :class:`UsageError` instead of printing and exiting."""
        raise UsageError(message, self)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse drops a failed write: `--help > /dev/full` ended 0 with nothing written.
        # Raised (then flushed, so the error comes before the exit), main says "cannot write
        # to standard output" as for every command; on stderr it is dropped as before.
        if not message:
            return
        stream = file or sys.stderr
        try:
            stream.write(message)
            getattr(stream, "flush", lambda: None)()
        except OSError:
            if stream is sys.stdout:
                raise


def text_argument(text: str) -> str:
    """An argument as text a store can hold: bytes that are not UTF-8 (Python reads them
    as lone surrogates, which no store can encode) as U+FFFD; never for a path, which needs
    its bytes.

    >>> text_argument(os.fsdecode(b"caf\\xe9"))
    'caf\ufffd'
    """
    return text if text.isascii() else text.encode("utf-8", "surrogateescape").decode(
        "utf-8", "replace")


def given_path(text: str) -> Path:
    """A file or folder named on the command line. An empty one (``"$DIR"`` with DIR unset)
    is refused: as ``Path("")`` it was the current folder, which ``import claude-code ""``
    then walked whole, reading every ``*.jsonl`` below it as a transcript.

    >>> given_path("")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: is empty (an unset shell variable?): name a file or folder
    """
    if not text:
        raise argparse.ArgumentTypeError("is empty (an unset shell variable?): name a file "
                                         "or folder")
    return Path(text)


def role_list(text: str) -> tuple[str, ...]:
    """``--role``: a comma list of roles."""
    return tuple(r.strip() for r in text_argument(text).split(",") if r.strip())


def name_list(text: str) -> list[str]:
    """``--source``, ``--project``: a comma list of names (the option is repeatable); a
    value naming nothing (``''``, ``','``) stays one empty name, which the request refuses.

    >>> name_list("codex, cli,"), name_list("")
    (['codex', 'cli'], [''])
    """
    return [n.strip() for n in text_argument(text).split(",") if n.strip()] or [""]


def wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asks for ``--json`` (before any ``--``)."""
    for arg in argv:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


_DASHED = {"search": "a query", "show": "a SESSION_ID"}
"""The commands whose argument may begin with ``-``, and what it is called."""


def dash_hint(argv: Sequence[str], parser: argparse.ArgumentParser | None = None) -> str | None:
    """A hint when a search's query or a session id to show looks like an option (it
    begins with ``-``). ``parser``, the whole CLI's, names the command's own options, so
    a query such as ``--no-cache`` is told apart from them too (it got no hint)."""
    if not argv or argv[0] not in _DASHED or "--" in argv:
        return None
    known = {"--json", "--rerank", "-h", "--help"}
    command = _commands(parser).get(argv[0]) if parser else None
    # argparse takes any unambiguous start of an option (--js for --json)
    options = [o for o in command._option_string_actions if o.startswith("--")] \
        if command else []
    suspects = [a for a in argv[1:] if a.startswith("-") and len(a) > 1 and a not in known
                and (not a.startswith("--") if command is None else
                     not any(o.startswith(a.split("=", 1)[0]) for o in options))]
    if not suspects:
        return None
    return (f"{_DASHED[argv[0]]} that begins with '-' goes after '--': harkback {argv[0]} -- "
            f"{shell_quoted(suspects[0])}")


def words_hint(argv: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """A hint when a search's question of several words was typed without quotes
    (``harkback search docker network``: argparse took ``docker`` and refused the rest)."""
    if not argv or argv[0] != "search":
        return None
    try:
        namespace, extras = parser.parse_known_args(argv)
    except UsageError:
        return None
    query = getattr(namespace, "query", None)
    if not extras or not isinstance(query, str) or any(e.startswith("-") for e in extras):
        return None
    words = " ".join(text_argument(w) for w in (query, *extras))
    return f"a question of several words goes in quotes: harkback search {shell_quoted(words)}"


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The commands ``parser`` hands the rest of a command line to (none: {})."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def order_hint(argv: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """A hint when options come before the command they belong to, as git takes its own
    (``harkback --db h.db search docker``, ``harkback import --json codex``): the command
    line with them moved after it, when that one reads (``parser`` is the whole CLI's)."""
    if {"-h", "--help", "--version"} & set(argv):
        return None  # reading those prints and exits
    head, rest, commands = [], list(argv), _commands(parser)
    while rest and rest[0] in commands:  # the commands in their places
        head.append(rest[0])
        commands = _commands(commands[rest.pop(0)])
    if not commands or not rest or not rest[0].startswith("-"):
        return None
    for at in (i for i, word in enumerate(rest) if word in commands):
        tail = rest[at:]
        cut = tail.index("--") if "--" in tail else len(tail)
        moved = [*head, *tail[:cut], *rest[:at], *tail[cut:]]
        try:
            _, extras = parser.parse_known_args(moved)
        except UsageError:
            continue
        if not extras:
            return f"options go after the command: harkback {shell_joined(moved)}"
    return None


def choice_hint(argv: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """A hint when a command or an import's kind is misspelt or cut short (``harkback serch
    docker``, ``harkback import claude``): the command line with the one choice near it,
    when that line reads (``parser`` is the whole CLI's)."""
    head, rest, commands = [], list(argv), _commands(parser)
    while rest and rest[0] in commands:
        head.append(rest[0])
        commands = _commands(commands[rest.pop(0)])
    if not commands or not rest or rest[0].startswith("-"):
        return None
    near = ([c for c in commands if c.startswith(rest[0])]
            or difflib.get_close_matches(rest[0], list(commands), n=1, cutoff=0.6))
    if len(near) != 1:  # "s": search, show, stats, sources or sync
        return None
    fixed = [*head, near[0], *rest[1:]]
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # a --help in it prints and exits
            _, extras = parser.parse_known_args(fixed)
    except (UsageError, SystemExit):
        return None
    return None if extras else f"did you mean: harkback {shell_joined(fixed)}"


def after_dash_hint(argv: Sequence[str], parser: argparse.ArgumentParser) -> str | None:
    """A hint when options follow ``--`` (``harkback search -- --no-cache --db h.db``):
    every word after it is an argument, so they were refused; the line with them moved
    before it, when that one reads (``parser`` is the whole CLI's)."""
    at = argv.index("--") if "--" in argv else len(argv)
    if len(argv) - at < 3:
        return None
    moved = [*argv[:at], *argv[at + 2:], "--", argv[at + 1]]
    try:
        # A moved --help (or --he) would print help and exit 0 for a line in error.
        with contextlib.redirect_stdout(io.StringIO()):
            _, extras = parser.parse_known_args(moved)
    except (UsageError, SystemExit):
        return None
    return None if extras else f"options go before '--': harkback {shell_joined(moved)}"


def report_usage(error: UsageError, argv: Sequence[str],
                 parser: argparse.ArgumentParser | None = None) -> int:
    """Print a usage error (usage line, message, hint) on stderr, and as a JSON payload on
    stdout when ``--json`` was asked for; the exit status. ``parser``: the whole CLI's, for
    :func:`order_hint`."""
    message = cut_echoes(str(error), argv, TEXT_CHARS)
    # "argument --timeout: ..." is about an option's value (-1), not a query
    hint = (parser and (order_hint(argv, parser) or after_dash_hint(argv, parser)
                        or choice_hint(argv, parser))) or (
        None if message.startswith("argument ") else (
            dash_hint(argv, parser) or words_hint(argv, error.parser)))
    if hint:  # a command to paste: its paths stay whole
        message = f"{message} ({cut_echoes(hint, argv, PATH_MAX)})"
    if wants_json(argv):
        print(json_text(failure_payload(message, EXIT_USAGE)))
    sys.stderr.write(error.parser.format_usage())
    print(f"{error.parser.prog}: error: {line_of(message)}", file=sys.stderr)
    return EXIT_USAGE


PATH_MAX = 4096
"""The longest path Linux takes: a hint's command keeps a word up to it whole, to be pasted
(a temporary folder's path is longer than an echo's 60 characters), one longer is no path."""


def cut_echoes(message: str, argv: Sequence[str], longest: int) -> str:
    """``message`` with each word of ``argv`` longer than ``longest`` that it echoes cut by
    the rule of every echo of what someone gave
    (:func:`~harkback.stages.shown_number.shown_text`): argparse echoes them whole ("invalid
    choice: 'aaa'", "unrecognized arguments: aaa", "ambiguous option: --r=aaa could match
    ...", "ignored explicit argument 'aaa'"), 10 kB on one line. An echo argparse quotes is
    cut quoted, one it does not (or a hint's) cut in place.

    >>> cut_echoes("invalid choice: '" + "a" * 99 + "'", ["search", "--ranker", "a" * 99], 60)
    "invalid choice: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…'"
    """
    words = {w for w in argv if len(w) > longest}
    # --json=VALUE, --r=VALUE: argparse echoes the VALUE alone, or the whole word
    words |= {w.partition("=")[2] for w in words if w.startswith("-")}
    for word in sorted((w for w in words if len(w) > longest), key=len, reverse=True):
        for said in {repr(word), repr(text_argument(word))}:  # as typed, or as text_argument
            message = message.replace(said, shown_text(word))
        if (quoted := shell_quoted(word)) != word:  # a hint's: 'it'"'"'s', $'caf\xe9'
            message = message.replace(quoted, shell_quoted(cut_text(word)))
        message = message.replace(word, cut_text(word))
    return message


def failure_payload(message: str, status: int) -> dict[str, object]:
    """The ``--json`` payload of a failure ending with ``status``: a usage error (exit
    status 2) says so, whichever part found it (argparse, the settings, a command).

    >>> failure_payload("unknown role(s) x", EXIT_USAGE)
    {'success': False, 'error': 'unknown role(s) x', 'usage': True}
    """
    return {"success": False, "error": message, **({"usage": True} if status == EXIT_USAGE
                                                   else {})}


def internal_error_json(argv: Sequence[str], description: str) -> None:
    """Keep ``--json``'s promise of a payload on stdout when a bug ends the command."""
    if wants_json(argv):
        print(json_text({"success": False, "error": f"internal error: {description}"}))


_OFF = ("", "0", "false", "no", "off")


def debugging(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``HARKBACK_DEBUG`` asks for tracebacks: any value but ``0``, ``false``,
    ``no``, ``off`` or none (any case, spaces around); ``HARKBACK_DEBUG=0`` turned them on.

    >>> [debugging({"HARKBACK_DEBUG": v}) for v in ("1", "yes", " Off ", "0", "")], debugging({})
    ([True, True, False, False, False], False)
    """
    return environ.get("HARKBACK_DEBUG", "").strip().lower() not in _OFF


def quiet_driver_logs() -> None:
    """Drop what the database driver logs to no one: with no logging set up, Python printed
    psycopg's "error ignored terminating <psycopg.Pipeline [BAD] at 0x...>: the connection
    is lost" on stderr beside the command's own line, which already says what happened
    (a server gone mid-write). ``HARKBACK_DEBUG=1`` keeps it, with the tracebacks."""
    if not debugging():
        logging.getLogger("psycopg").addHandler(logging.NullHandler())
