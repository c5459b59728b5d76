"""What the review after chaos29 left in the command line's words and exits (issue 20),
each through a real subprocess: argparse's errors echoing a 5,000-character value whole,
``HARKBACK_DEBUG=0`` turning debugging on, and an error line that cannot be written
(``2>/dev/full``) changing the exit status to 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TextIO

import pytest

from tests.pipeline.test_import_cli import harkback

LONG = "a" * 5000
UNDECODED = os.fsdecode(b"caf\xe9" * 30)


@pytest.mark.parametrize("args", [
    ["search", "x", "--ranker", LONG],  # invalid choice
    ["completion", LONG],  # invalid choice of a positional
    ["--db", LONG, "search", "x"],  # invalid command, with a hint that echoes the line
    ["search", "x", LONG + "a" * 5000],  # unrecognized arguments, a 10 kB one
    ["search", "x", "--r=" + LONG],  # ambiguous abbreviation
    ["search", "x", "--json=" + LONG],  # ignored explicit argument
    ["search", "x", "--timeout", LONG],  # not a number
    ["search", "-" + LONG],  # a query that looks like an option: its hint
    # the hint quotes a word for a shell ('"'"', $'\xe9'): past 4,096 characters it is cut
    ["search", "-" + LONG + "'s"],
    ["--db", "/tmp/" + LONG + UNDECODED, "search", "x"],
], ids=["choice", "positional choice", "command", "unrecognized", "ambiguous", "explicit",
        "number", "dash hint", "dash hint with a quote", "command hint with undecodable bytes"])
def test_a_usage_error_cuts_a_long_value_it_echoes(tmp_path: Path, args: list[str]) -> None:
    """argparse echoed a 5,000-character value whole, on one line of 5 or 10 kB: it is cut
    as every echo of what someone gave is (60 characters and "…"), still one line, exit 2."""
    done = harkback(*args, env={"HOME": str(tmp_path)})
    said = done.stderr.splitlines()[-1]
    assert done.returncode == 2, done.stderr[-300:]
    assert "a" * 50 in said and "a" * 61 not in said and "…" in said and len(said) < 1000, said


def test_a_usage_error_under_json_cuts_the_value_and_shows_undecodable_bytes(
        tmp_path: Path) -> None:
    """The ``--json`` payload of a usage error carries the same cut line; bytes of the value
    that are not UTF-8 are U+FFFD, as in every echo."""
    done = harkback("search", "x", "--json", "--ranker", UNDECODED,
                    env={"HOME": str(tmp_path)})
    error = json.loads(done.stdout)["error"]
    assert done.returncode == 2
    assert "invalid choice: '" + "caf\ufffd" * 15 + "…'" in error, error
    assert error in done.stderr


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


def _failing_stats(tmp_path: Path, how: str, *flags: str, stderr: int | TextIO = subprocess.PIPE,
                   env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``harkback stats`` whose command fails as ``how`` says (a bug, Ctrl-C, SIGTERM)."""
    return subprocess.run(
        [sys.executable, "-c", _FAILING_STATS, "stats", "--db", str(tmp_path / "h.db"), *flags],
        stdout=subprocess.PIPE, stderr=stderr, text=True, timeout=120, check=False,
        env={**os.environ, "HOW": how, **(env or {})})


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


@pytest.mark.parametrize(("how", "status"), [("bug", 70), ("ctrl-c", 130), ("sigterm", 143)])
@pytest.mark.parametrize("debug", ["", "1"])
def test_an_error_line_that_cannot_be_written_keeps_the_exit_status(
        tmp_path: Path, how: str, status: int, debug: str) -> None:
    """With ``2>/dev/full`` the line could not be written, and its OSError was taken for
    standard output failing: an internal error, Ctrl-C or SIGTERM all ended 1. The status
    is the documented one, and nothing else is tried (a traceback, a line on stdout)."""
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = _failing_stats(tmp_path, how, stderr=full, env={"HARKBACK_DEBUG": debug})
    assert (done.returncode, done.stdout) == (status, "")


def test_an_error_line_that_cannot_be_written_keeps_the_json_payload(tmp_path: Path) -> None:
    """Under ``--json`` the payload still comes on stdout, with the internal error's 70."""
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = _failing_stats(tmp_path, "bug", "--json", stderr=full)
    assert done.returncode == 70
    assert json.loads(done.stdout) == {"success": False,
                                       "error": "internal error: ZeroDivisionError: a bug of ours"}


def test_a_usage_error_that_cannot_be_written_exits_2(tmp_path: Path) -> None:
    """A usage error with stderr full ended 1 (taken for standard output failing)."""
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "search", "x",
                               "--ranker", "nosuch"], stdout=subprocess.PIPE, stderr=full,
                              text=True, timeout=120, check=False,
                              env={**os.environ, "HOME": str(tmp_path)})
    assert (done.returncode, done.stdout) == (2, "")


def test_an_ingest_whose_stderr_reader_went_away_stores_all_and_exits_3(tmp_path: Path) -> None:
    """Standard error a pipe no one reads (``2> >(head -0)``): the damaged line it would name
    is lost, but the ingest stores every session it can and its status still says damaged
    input was met (3), its report on standard output. Before, naming the line raised
    BrokenPipeError, taken for standard output's reader gone: exit 141 and no report."""
    source = tmp_path / "s.jsonl"
    source.write_text("{broken\n" + "".join(
        json.dumps({"id": f"s{n}", "messages": [{"role": "user", "content": f"heron {n}"}]})
        + "\n" for n in range(3)), encoding="utf-8")
    db = str(tmp_path / "h.db")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written
    try:
        done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "ingest",
                               str(source), "--db", db], stdout=subprocess.PIPE,
                              stderr=write_end, text=True, timeout=120, check=False,
                              env={**os.environ, "HOME": str(tmp_path)})
    finally:
        os.close(write_end)
    assert done.returncode == 3, done.stdout
    assert done.stdout.startswith("ingested 3 session(s)"), done.stdout
    recent = json.loads(harkback("recent", "--json", "--db", db).stdout)
    assert sorted(r["session_id"] for r in recent["results"]) == ["s0", "s1", "s2"]
