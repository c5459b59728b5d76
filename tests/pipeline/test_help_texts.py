"""Every option of every command says what it does in ``--help`` (``recent --limit``,
``--current-session`` and several ``--json`` were listed bare)."""

from __future__ import annotations

import argparse

from harkback.pipeline.cli import build_parser


def _commands(parser: argparse.ArgumentParser, prefix: str = "harkback"
              ) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(prefix, parser)]
    for action in parser._actions:  # argparse keeps its sub-commands only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, f"{prefix} {name}")
    return found


def test_every_option_has_a_help_text() -> None:
    bare = [f"{name} {action.option_strings[-1]}"
            for name, parser in _commands(build_parser()) for action in parser._actions
            if action.option_strings and action.help is None]
    assert bare == []
