"""Standard output as the command line writes it: any text under any locale, its write
errors one line (:class:`OutputLost`), a reader that stops reading (``harkback recent |
head -1``) a quiet end, and a process started with it closed (``>&-``).

Light on purpose, as :mod:`~harkback.pipeline.cli_edges`: the CLI calls it before it
knows the command, so it loads nothing but the standard library and the terminal writers.

>>> nowhere_to_print(["recent"], True)[:37]
'standard output is closed (>&-), and '
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TextIO, TypeVar, cast

from harkback.pipeline.cli_edges import wants_json
from harkback.pipeline.terminal import VisibleWriter, WrappedStream

EXIT_BROKEN_PIPE = 128 + 13
"""What a shell reports for a program ended by SIGPIPE: the reader went away."""

T = TypeVar("T")


class OutputLost(Exception):
    """Standard output cannot be written (a full disk, an I/O error): not a bug of ours, and
    no payload can be printed either."""


class GuardedWriter(WrappedStream):
    """Standard output whose write errors are :class:`OutputLost` (a reader that went away
    stays ``BrokenPipeError``): one line on stderr, not an internal error whose ``--json``
    payload fails again."""

    def write(self, text: str) -> int:
        """Write ``text``."""
        return self._guarded(lambda: self._target.write(text))

    def flush(self) -> None:
        """Flush the target."""
        self._guarded(self._target.flush)

    @staticmethod
    def _guarded(work: Callable[[], T]) -> T:
        try:
            return work()
        except BrokenPipeError:
            raise
        except OSError as error:
            raise OutputLost(f"cannot write to standard output: {error.strerror or error}"
                             ) from error


_JSON_ESCAPES = "harkback-json-escapes"


def _json_escapes(error: UnicodeError) -> tuple[str, int]:
    """A codec error handler writing what the encoding lacks as JSON's ``\\uXXXX``."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return json.dumps(error.object[error.start:error.end])[1:-1], error.end


codecs.register_error(_JSON_ESCAPES, _json_escapes)


def any_text_stdout(argv: Sequence[str]) -> None:
    """Standard output that takes any text whatever the locale's encoding. Under a locale
    of another encoding (``LC_ALL=en_US.ISO-8859-1``, a Windows code page) a Chinese title
    ended ``recent`` with an internal error: human output shows what the encoding lacks as
    ``\\u8d85`` (as Python's stderr does), ``--json`` is ASCII with JSON escapes, which
    every reader decodes alike. The MCP server writes UTF-8 itself.

    >>> print("超时 café".encode("ascii", _JSON_ESCAPES).decode())
    \\u8d85\\u65f6 caf\\u00e9
    """
    stream = sys.stdout
    encoding = getattr(stream, "encoding", None)
    reconfigure = getattr(stream, "reconfigure", None)
    if (reconfigure is None or not isinstance(encoding, str) or argv[:1] == ["mcp"]
            or codecs.lookup(encoding).name == "utf-8"):
        return
    if wants_json(argv):
        reconfigure(encoding="ascii", errors=_JSON_ESCAPES)
    else:
        reconfigure(errors="backslashreplace")


def open_closed_streams() -> bool:
    """A process started with standard output or error closed (``>&-``, ``2>&-``) still
    does its work; what it prints there goes nowhere (a progress bar looked for a terminal
    on a stderr of None, and an ingest ended in an internal error). True when standard
    output was the one closed (see :func:`nowhere_to_print`)."""
    closed = sys.stdout is None
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the process)
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (for the process)
    return closed


PRINTING_ONLY = frozenset({"search", "recent", "show", "stats", "sources", "config",
                           "completion"})
"""The commands whose only work is what they print: with standard output closed they did
nothing and said success (exit 0, no line), as ``cat >&-`` would not."""


_DRY_RUNS = frozenset({"redact", "sync"})
"""The commands whose ``--dry-run`` only reports what they would do."""


def nowhere_to_print(argv: Sequence[str], stdout_closed: bool) -> str | None:
    """Why the command of ``argv`` cannot run with standard output closed (``>&-``), or None
    (an ingest or sync still stores: only its report is lost).

    >>> nowhere_to_print(["search", "docker"], True)[:73]
    'standard output is closed (>&-), and search prints its results there, to '
    >>> nowhere_to_print(["ingest", "a.jsonl"], True), nowhere_to_print(["search"], False)
    (None, None)
    >>> nowhere_to_print(["demo"], True)[:45], nowhere_to_print(["demo", "--db", "d.db"], True)
    ('standard output is closed (>&-), and demo pri', None)
    >>> nowhere_to_print(["redact", "--dry-run"], True)[31:67], nowhere_to_print(["redact"], True)
    (', and redact --dry-run prints its re', None)
    >>> nowhere_to_print(["--version"], True)[31:60], nowhere_to_print(["demo", "--d", "d"], True)
    (', and --version prints its re', None)
    """
    command = argv[0] if argv else ""
    if not stdout_closed:
        return None
    if command == "mcp":
        return ("standard output is closed (>&-), and the MCP server answers JSON-RPC there: "
                "an agent starts it with a pipe (claude mcp add harkback -- harkback mcp)")
    # A demo without --db builds a store it removes again: what it prints is all it leaves.
    # A dry run (redact, sync) changes nothing: its report is its work. --version and
    # --help only print.
    options = argv[1:argv.index("--")] if "--" in argv else argv[1:]
    kept = _given(options, "--db", 3)
    dry = command in _DRY_RUNS and _given(options, "--dry-run", 4)
    helped = "-h" in options or "--help" in options  # argparse prints it and does nothing
    flag = command == "-h" or any(_given([command], f, 3) for f in ("--version", "--help"))
    if not (command in PRINTING_ONLY or flag or (command == "demo" and not kept) or dry
            or helped):
        return None
    what = f"{command} --dry-run" if dry else f"{command} --help" if helped else command
    return (f"standard output is closed (>&-), and {what} prints its results there, "
            "to no one: give it a terminal, a file or a pipe")


def _given(options: Sequence[str], flag: str, least: int) -> bool:
    """Whether ``flag`` is among ``options`` as argparse reads them: whole or cut to at
    least ``least`` characters (``--dry`` is ``--dry-run``, ``--d x.db`` is ``--db``),
    with its value after ``=`` or not.

    >>> _given(["--d=x.db"], "--db", 3), _given(["--dry"], "--dry-run", 4)
    (True, True)
    >>> _given(["--"], "--db", 3), _given(["--dump"], "--db", 3)
    (False, False)
    """
    return any(len(name) >= least and flag.startswith(name)
               for name in (option.partition("=")[0] for option in options))


def command_stdout(stdout: TextIO, command: str, as_json: bool) -> TextIO:
    """Standard output as a command writes it: its write errors are :class:`OutputLost`,
    and human output shows stored escape sequences instead of obeying them. The MCP server
    speaks JSON-RPC on it as it is."""
    if command == "mcp":
        return stdout
    guarded = cast(TextIO, GuardedWriter(stdout))  # the part of TextIO print needs
    return guarded if as_json else cast(TextIO, VisibleWriter(guarded))


def output_lost(error: BaseException) -> int:
    """Standard output failed (:class:`OutputLost`, or the last flush): say so in one line
    on stderr; nothing more is written to it, at exit either. The status of a failure."""
    from harkback.pipeline.command_basics import EXIT_FAILED  # not loaded before the command
    message = str(error) if isinstance(error, OutputLost) else (
        f"cannot write to standard output: {getattr(error, 'strerror', None) or error}")
    print(f"harkback: {message}", file=sys.stderr)
    reader_gone()  # stdout to the null device: the flush at exit must not fail again
    return EXIT_FAILED


def reader_gone() -> int:
    """The reader of stdout closed it: end quietly with the shell's SIGPIPE status.

    Python flushes stdout once more on exit; pointing it at the null device keeps that
    flush from failing again (the recipe of Python's ``signal`` documentation).
    """
    _to_null(sys.stdout)
    return EXIT_BROKEN_PIPE


def _to_null(stream: TextIO) -> None:
    """Point the file descriptor of ``stream`` at the null device."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError):
        pass  # not a file descriptor (captured): nothing more will be flushed


class LosableErrors(WrappedStream):
    """Standard error whose write errors are dropped (``2>/dev/full``): a line no one can be
    told has no one to tell that it failed, and it must not change the exit status (an
    internal error ended 1, not 70, a usage error or Ctrl-C 1 too) nor set off a traceback
    that fails again. After a failure it points at the null device, so what is left in its
    buffer cannot fail Python's flush at exit either.

    >>> import io
    >>> LosableErrors(cast(TextIO, io.StringIO())).write("said")
    4
    """

    def write(self, text: str) -> int:
        """Write ``text``, or drop it."""
        try:
            return self._target.write(text)
        except OSError:
            self._lost()
            return len(text)

    def flush(self) -> None:
        """Flush the target, or drop what it holds."""
        try:
            self._target.flush()
        except OSError:
            self._lost()

    def _lost(self) -> None:
        _to_null(self._target)
        with contextlib.suppress(OSError):
            self._target.flush()  # now to the null device: the buffer is empty at exit
