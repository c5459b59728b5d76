"""The arguments of ``harkback sync``, and what ingest, import and sync share on the command
line: ``--verbose`` and the exit statuses they end with (3: done, with damaged input
met and named, or vectors not made).

Light like :mod:`~harkback.pipeline.cli`, which builds its parser from it before it knows
the command: it loads nothing but the standard library.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from harkback.pipeline.cli_edges import given_path

EXIT_STATUSES = ("exit status: 0 done; 1 failed; 2 usage error; 3 done, but ingest, import "
                 "or sync met damaged input, skipped or repaired (each piece named on stderr "
                 "with what became of it, every one with --verbose, and in --json), or "
                 "ingest, import or sync stored the sessions but the embedder could not "
                 "make all their vectors (harkback embed makes the rest); 70 "
                 "internal error (a bug: HARKBACK_DEBUG=1 shows its traceback); 130 "
                 "interrupted (Ctrl-C; what ingest, import, sync or embed stored is kept, "
                 "and the same command run again goes on from there); 143 terminated "
                 "(SIGTERM, taken as Ctrl-C); 141 the reader of the output went away")


def add_keep_secrets(sub: argparse.ArgumentParser) -> None:
    """Add ``--keep-secrets``: store text as it is (the ``redact`` setting turned off)."""
    sub.add_argument("--keep-secrets", action="store_true",
                     help="store secrets as they are (by default keys, tokens and passwords "
                          "become placeholders such as [secret:aws-access-key])")


def add_verbose(sub: argparse.ArgumentParser) -> None:
    """Add ``--verbose``: every piece of damaged input is named, not only the first ten."""
    sub.add_argument("--verbose", action="store_true",
                     help="name every damaged line or field (file:line, why, and whether it "
                          "was skipped, ignored or repaired) on stderr")


def add_sync_command(commands: Any,
                     with_db: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``harkback sync`` to ``commands`` (``with_db`` adds the store's flag)."""
    sync = commands.add_parser(
        "sync", help="import every agent history found on this machine (Hermes, Claude Code, "
                     "Codex); only what changed is read; sessions whose files the agents "
                     "deleted are kept (--prune removes them)",
        epilog="one sync writes to a store at a time: a second one (cron beside a --watch) "
               "says 'another sync or import is writing to STORE (pid N); the sync waits its "
               "turn' on stderr and waits (--watch takes the turn per round of re-syncs; "
               "import and ingest take it too); " + EXIT_STATUSES)
    with_db(sync)
    for flag, where in (("--hermes", "a Hermes state.db or home (default: $HERMES_HOME or "
                                     "~/.hermes)"),
                        ("--claude-code", "a Claude Code projects folder (default: "
                                          "$CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)"),
                        ("--codex", "a Codex sessions folder, read with the "
                                    "archived_sessions folder beside it (default: "
                                    "$CODEX_HOME/sessions or ~/.codex/sessions); or a Codex "
                                    "home, or any folder of rollouts")):
        sync.add_argument(flag, type=given_path, default=None, metavar="PATH", help=where)
    sync.add_argument("--archived", action="store_true",
                      help="also import sessions archived in Hermes (hidden ones never)")
    sync.add_argument("--prune", action="store_true",
                      help="remove the sessions whose transcript file or Hermes row is gone "
                           "from the source (kept by default: Claude Code deletes transcripts "
                           "after 30 days); a file moved within a source is not gone")
    sync.add_argument("--dry-run", action="store_true",
                      help="read the sources and say what would change (with --prune, what "
                           "would be removed); write nothing")
    sync.add_argument("--watch", action="store_true",
                      help="then keep the store current as the agents write, until Ctrl-C "
                           "(pip install 'harkback[watch]'); the store's sync lock is held "
                           "per round, so another sync gets its turn in between; Ctrl-C "
                           "ends it with status 1 while a source's last sync had failed")
    sync.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                      help="show progress bars (default: when stdout and stderr are terminals)")
    sync.add_argument("--json", action="store_true", help="print the counts as JSON")
    add_verbose(sync)
    add_keep_secrets(sync)
