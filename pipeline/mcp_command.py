"""``harkback mcp``: the command that starts the MCP server, apart from the other commands.

The command line reaches it without :mod:`~harkback.pipeline.commands`, which brings the
stages, the stores and the wiring: an agent's client waits for the server's first answer
(Codex 10 s by default), and those load at the first tool call instead
(:mod:`~harkback.pipeline.mcp_server`).
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from harkback.pipeline.cli_edges import EXIT_USAGE
from harkback.pipeline.command_basics import EXIT_OK, CliError, settings_of
from harkback.pipeline.command_loop import short_of
from harkback.pipeline.in_memory import in_memory
from harkback.pipeline.terminal import line_of

MCP_EXTRA = "the MCP server needs the mcp extra: pip install 'harkback[mcp]'"
MCP_ON_A_TERMINAL = ("harkback: this is an MCP server for an agent to start (claude mcp add "
                     "harkback -- harkback mcp); it reads JSON-RPC on stdin: Ctrl-C stops it")


@contextmanager
def _uncollected() -> Iterator[None]:
    """Within: the cyclic garbage collector off; after: what was made kept out of its scans
    for good (:func:`gc.freeze`), and the collector as it was.

    The SDK's import makes objects that live as long as the server (its types, ~0.5 s of
    CPU); the collector scanned them again and again, during it (0.05 s) and then during
    the first call's imports (0.04 s more).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


async def mcp(args: argparse.Namespace) -> int:
    """``harkback mcp``: serve the recall tools over MCP on stdio (the SDK loads only here)."""
    with _uncollected():
        try:
            import mcp  # noqa: F401  (only to learn whether the extra is installed)
        except ImportError as error:
            if short_of(error) is not None:  # installed, and past ulimit -v: the limit says
                raise
            raise CliError(MCP_EXTRA) from None
        from harkback.pipeline.mcp_server import serve
    from harkback.pipeline.model_flags import model_limits
    if sys.stdin is None:  # started with stdin closed (<&-): an internal error before
        raise CliError("standard input is closed, and the MCP server reads JSON-RPC there: "
                       "an agent starts it with a pipe (claude mcp add harkback -- harkback "
                       "mcp)", EXIT_USAGE)
    if sys.stdin.isatty():  # a person trying the command saw nothing: it waits for JSON
        print(MCP_ON_A_TERMINAL, file=sys.stderr, flush=True)
    empty = in_memory(settings_of(args).db)
    if empty is not None:  # as search and recent say it; stdout is the protocol's
        print(line_of(f"harkback: note: {empty}: every call of this server finds nothing"),
              file=sys.stderr, flush=True)
    await serve(settings_of(args), model_limits(args))
    return EXIT_OK
