"""Every option of every command says what it does in ``--help`` (``recent --limit``,
``--current-session`` and several ``--json`` were listed bare)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.pipeline.cli import build_parser
from harkback.pipeline.settings import KEYS

README = Path(__file__).parents[2] / "README.md"


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


def test_the_source_filter_offers_no_name_that_matches_nothing() -> None:
    """``--source hermes`` found nothing: a Hermes session keeps its platform (cli,
    telegram, ...) as its source; the help, the MCP tool and the README offered it."""
    from harkback.pipeline.mcp_specs import _SOURCE
    offered = [str(action.help) for _, parser in _commands(build_parser())
               for action in parser._actions if "--source" in action.option_strings]
    offered += [_SOURCE["description"], README.read_text(encoding="utf-8")]
    assert len(offered) == 4
    dead = re.compile(r"`hermes`,|codex,hermes|claude-code, hermes")
    assert [text for text in offered if dead.search(text)] == []


@pytest.mark.parametrize("flags", [("--help",), ("search", "--help"), ("import", "jsonl", "-h")])
def test_help_to_a_full_disk_is_one_line_and_status_1(flags: tuple[str, ...]) -> None:
    """``--help > /dev/full`` ended 0 with nothing written (argparse drops the write
    error); every other command (``--version`` too) says it cannot write, status 1, and
    help does too."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *flags],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False)
    assert (done.returncode, done.stderr) == (
        1, "harkback: cannot write to standard output: No space left on device\n")


@pytest.mark.parametrize("setting", ["db", "model", "base_url", "embedder", "limit"])
def test_an_options_default_names_each_setting_that_gives_it(setting: str) -> None:
    """An option whose default a setting gives names the setting's environment variable
    and the config file (``search --limit`` said "limit in the config file, else 3", but
    ``$HARKBACK_LIMIT`` sets it too, and beats the file; ``--db``, ``--embedder``,
    ``--model`` and ``--base-url`` named only the environment, older than the file)."""
    key = next(key for key in KEYS if key.name == setting)
    variable = f"${key.variable}"
    helps = [str(action.help) for _, parser in _commands(build_parser())
             for action in parser._actions if key.flag in action.option_strings]
    # Only where the setting applies: ``recent --limit`` has a default of its own.
    told = [text for text in helps if variable in text or "config file" in text]
    assert told
    assert [text for text in told if variable not in text or "config file" not in text] == []


def test_the_limits_default_is_told_alike_everywhere() -> None:
    """The MCP tool and the README name ``$HARKBACK_LIMIT`` beside the config file's
    ``limit`` as what changes a search's default of 3 (the server honours both)."""
    from harkback.pipeline.mcp_specs import TOOLS
    tool = str(TOOLS["session_search"].properties["limit"]["description"])
    assert "$HARKBACK_LIMIT" in tool and "config file" in tool
    readme = " ".join(README.read_text(encoding="utf-8").split())
    assert "3 unless `$HARKBACK_LIMIT` or `limit` in the config file" in readme


def test_help_names_every_exit_status_the_command_line_ends_with() -> None:
    """``harkback --help`` lists each status a command ends with: 70 (an internal error),
    130 (Ctrl-C) and 141 (the reader went away) were in neither the help nor the README."""
    from harkback.pipeline.cli_edges import EXIT_USAGE
    from harkback.pipeline.cli_stdout import EXIT_BROKEN_PIPE
    from harkback.pipeline.command_basics import (
        EXIT_FAILED,
        EXIT_INTERNAL,
        EXIT_OK,
        EXIT_SKIPPED,
    )
    from harkback.pipeline.termination import EXIT_INTERRUPTED, EXIT_TERMINATED
    statuses = {EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_SKIPPED, EXIT_INTERNAL, EXIT_INTERRUPTED,
                EXIT_TERMINATED, EXIT_BROKEN_PIPE}
    epilog = " ".join(str(build_parser().epilog).split())
    readme = " ".join(README.read_text(encoding="utf-8").split())
    for told in (epilog, readme[readme.index("Exit statuses: "):]):
        assert {int(n) for n in re.findall(r"\b(\d+) [a-z]", told.split(".")[0])} >= statuses
