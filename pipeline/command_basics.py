"""What every ``harkback`` command needs before its own work: the exit statuses, the
one-line failure and the effective settings.

Light on purpose (the standard library, ``returns`` and the settings): the entry point
imports it for every command, and ``config`` and ``completion`` need nothing more, so
``eval "$(harkback completion bash)"`` in a shell's start-up file stays quick.

>>> CliError("no database at x.db").status == EXIT_FAILED
True
"""

from __future__ import annotations

import argparse
import os

from returns.result import Failure

from harkback.pipeline.cli_edges import EXIT_USAGE
from harkback.pipeline.settings import Settings, effective, flags_of
from harkback.stages.errors import ModelFailed, NotFound, QueryRejected, StoreUnavailable

EXIT_OK, EXIT_FAILED, EXIT_SKIPPED, EXIT_INTERNAL = 0, 1, 3, 70
"""EXIT_SKIPPED: an ingest, import or sync ran to its end but left damaged input out
(named on stderr and in --json)."""


class CliError(Exception):
    """A failure to report as one line, with the exit status to use."""

    def __init__(self, message: str, status: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.status = status


class BadStore(CliError):
    """The store the ``db`` value names cannot be opened or used: said with where the value
    came from when the environment or the config file gave it
    (:func:`~harkback.pipeline.command_kit.named_origin`)."""


def error_line(error: QueryRejected | StoreUnavailable | ModelFailed | NotFound) -> str:
    """The one line the command line prints for a failure value, and the MCP server's tool
    error: a rejected request is a usage error, said by its reason alone; any other failure
    by its message, which names its kind.

    >>> error_line(QueryRejected("unknown role(s) x")), error_line(NotFound("no session"))
    ('unknown role(s) x', 'not found: no session')
    """
    return error.reason if isinstance(error, QueryRejected) else error.message()


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
