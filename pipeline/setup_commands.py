"""``harkback config`` and ``harkback completion``: commands about the command line itself,
which open no store and run no stage, so the entry point runs them without importing the
others (a completion script is made at every shell start).

>>> sorted(SETUP_COMMANDS)
['completion', 'config']
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from harkback.pipeline.command_basics import EXIT_OK, settings_of
from harkback.pipeline.output import print_json


def config(args: argparse.Namespace) -> int:
    """``harkback config``: each setting's effective value and where it came from."""
    chosen = settings_of(args)
    if args.json:
        print_json(chosen.to_payload())
    else:
        print(chosen.describe())
    return EXIT_OK


def completion(args: argparse.Namespace) -> int:
    """``harkback completion bash|zsh``: the shell's completion script, from the parser."""
    from harkback.pipeline.cli import build_parser
    from harkback.pipeline.completion import script
    print(script(args.shell, build_parser()), end="")
    return EXIT_OK


SETUP_COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "config": config, "completion": completion}
