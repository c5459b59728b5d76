"""The arguments of ``harkback check`` (the command: :mod:`~harkback.pipeline.check_command`),
kept apart from it so that parsing loads no store code.

>>> parser = argparse.ArgumentParser()
>>> add_check_command(parser.add_subparsers(), lambda sub: None)
>>> parser.parse_args(["check", "--repair"]).repair
True
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

HELP = ("check the store for damage (read-only): SQLite's integrity_check, the full-text "
        "indexes read whole, every message indexed, the schema version; says what is "
        "fine, what is damaged and the next step")
EPILOG = ("exit status: 0 the store is fine (after --repair: mended); 1 damage found (or "
          "left), or the store cannot be opened; 2 usage error. --repair rebuilds only what "
          "harkback derives from the stored messages (the full-text and titles' indexes, "
          "the B-tree indexes), in one transaction; damaged sessions or messages are never "
          "written over: the next step names the ways out (a backup, sqlite3 .recover, "
          "harkback sync)")


def add_check_command(commands: Any,
                      with_db: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``check`` to the subcommands ``commands``."""
    check = commands.add_parser("check", help=HELP, description=HELP, epilog=EPILOG)
    with_db(check)
    check.add_argument("--repair", action="store_true",
                       help="rebuild the damaged indexes from the stored messages (SQLite; "
                            "writes the file, in one transaction), then check again")
    check.add_argument("--json", action="store_true", help="print the findings as JSON")
