"""What the review after chaos29 left in the command line's words and exits (issue 20),
each through a real subprocess: argparse's errors echoing a 5,000-character value whole,
``HARKBACK_DEBUG=0`` turning debugging on, and an error line that cannot be written
(``2>/dev/full``) changing the exit status to 1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_FAILING_STATS = """
import asyncio, os, signal, sys
from harkback.pipeline import commands
async def failing(args):
    how = os.environ["HOW"]
    if how == "bug":
        raise ZeroDivisionError("a bug of ours")
    if how == "ctrl-c":
        raise KeyboardInterrupt
    os.kill(os.getpid(), signal.SIGTERM)
    await asyncio.sleep(60)
commands.COMMANDS["stats"] = lambda args: failing(args)
from harkback.pipeline.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(("value", "on"), [
    ("0", False), (" False ", False), ("no", False), ("OFF", False), ("", False),
    ("1", True), ("yes", True)])
def test_harkback_debug_is_off_for_0_false_no_off_and_empty(
        tmp_path: Path, value: str, on: bool) -> None:
    """``HARKBACK_DEBUG=0`` showed the traceback of an internal error: any non-empty value
    turned debugging on. ``0``, ``false``, ``no``, ``off`` and an empty value (any case,
    spaces around) are off; the line then says how to turn it on."""
    env = {k: v for k, v in os.environ.items() if k != "HARKBACK_DEBUG"}
    done = subprocess.run(
        [sys.executable, "-c", _FAILING_STATS, "stats", "--db", str(tmp_path / "h.db")],
        capture_output=True, text=True, timeout=120, check=False,
        env={**env, "HOW": "bug", "HARKBACK_DEBUG": value})
    assert done.returncode == 70, done.stderr
    assert ("Traceback" in done.stderr) is on, done.stderr
    assert done.stderr.endswith("ZeroDivisionError: a bug of ours"
                                f"{'' if on else ' (set HARKBACK_DEBUG=1 for details)'}\n")


