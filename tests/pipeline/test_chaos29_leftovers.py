"""What chaos29 found and left (issue 20), each through a real subprocess and a real
SQLite file: a report written to no one, a demo's store left in /tmp, a debug run that
misnamed its error, arguments and values echoed too long or three ways, blank homes."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested
from tests.pipeline.test_import_cli import FIXTURES, harkback, hermes_home


@pytest.mark.parametrize("command", ["redact --dry-run --db \"$1\"", "sync --dry-run",
                                     "--version", "--help"])
def test_a_dry_run_or_version_refuses_a_closed_standard_output(
        tmp_path: Path, command: str) -> None:
    """``redact --dry-run >&-`` and ``--version >&-`` printed their report to no one and
    said success (exit 0); ``sync --dry-run >&-`` printed its table to no one. Their only
    work is what they print: refused in one line, as ``search >&-`` is; nothing written."""
    db = ingested(tmp_path, [conversation("s1", ("user", "token sk-abcdefghijklmnopqrstuvwx"))])
    before = db.read_bytes()
    done = subprocess.run(
        ["sh", "-c", f'exec "$0" -m harkback.pipeline.cli {command} >&-', sys.executable,
         str(db)], capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "HOME": str(tmp_path), "HARKBACK_DB": str(db)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("harkback: standard output is closed (>&-), and "
                                  f"{command.split(' --db')[0]} prints"), done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert db.read_bytes() == before


def test_a_demo_out_of_descriptors_leaves_no_folder_behind(tmp_path: Path) -> None:
    """``ulimit -n 7; harkback demo``: the store could not be opened, nor then its
    temporary folder listed to be removed, so the folder and its ``demo.db`` stayed in
    /tmp after a line naming it. Each limit now leaves the temporary folder empty."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    failed = []
    for limit in range(5, 13):
        done = subprocess.run(
            [sys.executable, "-m", "harkback.pipeline.cli", "demo"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
            check=False, env={**os.environ, "TMPDIR": str(scratch)},
            preexec_fn=partial(resource.setrlimit, resource.RLIMIT_NOFILE, (limit, limit)))
        assert "Traceback" not in done.stderr, done.stderr
        assert list(scratch.iterdir()) == [], (limit, done.stderr)
        failed += [limit] if done.returncode else []
    assert failed, "no limit was low enough to fail"


_FAILING_STATS = """
import sys
from harkback.pipeline import commands
async def failing(args):
    raise ConnectionResetError(104, "Connection reset by peer")
commands.COMMANDS["stats"] = lambda args: failing(args)
from harkback.pipeline.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_debug_run_shows_the_traceback_of_an_os_error_not_an_output_failure(
        tmp_path: Path) -> None:
    """With ``HARKBACK_DEBUG=1`` a command's OSError (here a bug's, raised by the command)
    was re-raised for its traceback, and ``main`` took it for standard output failing:
    "cannot write to standard output: Connection reset by peer", no traceback. It is the
    internal error it is, with the traceback DEBUG promises; output that cannot be written
    is still said so."""
    db = ingested(tmp_path, [conversation("s1", ("user", "docker"))])
    debug = {**os.environ, "HARKBACK_DEBUG": "1"}
    done = subprocess.run([sys.executable, "-c", _FAILING_STATS, "stats", "--db", str(db)],
                          capture_output=True, text=True, timeout=120, check=False, env=debug)
    assert done.returncode == 70, done.stderr
    assert "standard output" not in done.stderr, done.stderr
    assert done.stderr.startswith("Traceback"), done.stderr
    assert done.stderr.endswith("harkback: internal error: ConnectionResetError: [Errno 104] "
                                "Connection reset by peer\n"), done.stderr
    with open("/dev/full", "w", encoding="utf-8") as full:
        lost = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "stats", "--db",
                               str(db)], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=120, check=False, env=debug)
    assert (lost.returncode, lost.stderr) == (
        1, "harkback: cannot write to standard output: No space left on device\n")


def test_the_mcp_server_at_its_descriptor_limit_names_the_limit_not_a_module(
        tmp_path: Path) -> None:
    """``ulimit -n 7; harkback mcp`` said ``harkback: .../anyio/_core/_streams.py: Too many
    open files``: a module imported late, named as if the user's file were at fault. Each
    limit now runs or gives the descriptor-limit line."""
    db = ingested(tmp_path, [conversation("s1", ("user", "docker"))])
    said = []
    for limit in range(5, 13):
        done = subprocess.run(
            [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120,
            check=False, preexec_fn=partial(
                resource.setrlimit, resource.RLIMIT_NOFILE, (limit, limit)))
        assert done.returncode in (0, 1), (limit, done.stderr)
        if done.returncode:
            assert done.stderr == (
                f"harkback: too many files are open (Too many open files; this process may "
                f"have {limit}); close some, or raise the limit (ulimit -n)\n"), done.stderr
            said.append(limit)
    assert said and said[-1] < 12, said


@pytest.mark.parametrize("kind", ["hermes", "claude-code", "codex"])
def test_a_blank_agent_home_counts_as_unset(tmp_path: Path, kind: str) -> None:
    """``HERMES_HOME=' '`` looked for histories in the folder " " below the current one
    ("looked in   for hermes"), ``CLAUDE_CONFIG_DIR=' '`` in " /projects": blank, as
    empty, is unset, and the histories are found in the home's ``.hermes``, ``.claude``,
    ``.codex``."""
    home = tmp_path / "home"
    shutil.copytree(hermes_home(tmp_path), home / ".hermes")
    shutil.copytree(FIXTURES / "claude-code" / "projects", home / ".claude" / "projects")
    shutil.copytree(FIXTURES / "codex" / "sessions", home / ".codex" / "sessions")
    blank = {"HOME": str(home), "HERMES_HOME": " ", "CLAUDE_CONFIG_DIR": " ",
             "CODEX_HOME": " "}
    done = harkback("import", kind, "--db", str(tmp_path / "h.db"), "--json", env=blank)
    assert done.returncode in (0, 3), done.stderr
    [first, *_] = json.loads(done.stdout)["sources"]
    assert first["location"].startswith(str(home / f".{kind.split('-')[0]}")), first
    assert first["sessions"]["added"] > 0, first


_LONG = "9" * 5000


@pytest.mark.parametrize(("flags", "env", "said"), [
    (("search", "docker", "--limit", _LONG), {},
     "argument --limit: must be between 1 and 10, got a number of more than 30 digits"),
    (("show", "s1", "--offset", _LONG), {},
     "argument --offset: must have at most 30 digits, got a number of more than 30 digits"),
    (("search", "docker"), {"HARKBACK_LIMIT": _LONG},
     "$HARKBACK_LIMIT: limit must be between 1 and 10, got a number of more than 30 digits"),
    (("search", "docker"), {"HARKBACK_REDACT": _LONG},
     "$HARKBACK_REDACT: redact must be true or false (1/0, yes/no), got a number of more "
     "than 30 digits"),
    (("search", "docker"), {"HARKBACK_EMBEDDER": _LONG}, "embedder spec '999"),
    (("search", "docker"), {"HARKBACK_EMBEDDER": f"openai:m#batch={_LONG}"}, "batch=a number"),
    (("search", "docker", "--since", _LONG), {}, "--since a number of more than 30 digits"),
    (("search", "docker", "--since", "x" * 5000), {}, "cannot read --since 'xxx"),
    (("search", "docker", "--since", _LONG + "M"), {}, "9…' is not a moment"),
])
def test_a_value_thousands_of_characters_long_is_echoed_short(
        tmp_path: Path, flags: tuple[str, ...], env: dict[str, str], said: str) -> None:
    """``--limit`` of 5,000 digits was "not a whole number" (Python's int() refuses more than
    4,300 digits) and echoed all 5,000; ``$HARKBACK_LIMIT``, ``$HARKBACK_REDACT`` and
    ``$HARKBACK_EMBEDDER`` gave lines of 5 KB. A long number is said in words, as the MCP
    server says it, and a long value is cut: one short line."""
    db = ingested(tmp_path, [conversation("s1", ("user", "docker"))])
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *flags, "--db",
                           str(db)], capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, **env})
    assert done.returncode in (1, 2), done.stderr
    last = done.stderr.splitlines()[-1]
    assert said in last and len(last) < 400, last[:400]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("flags", [("--since", "\udcff\udcfe"), ("--as-of", "\udcff\udcfe"),
                                   ("--until", "\udcff\udcfe"), ("--limit", "\udcff\udcfe"),
                                   ("--ranker", "\udcff\udcfe")])
@pytest.mark.parametrize("as_json", [False, True])
def test_an_argument_of_bytes_not_utf_8_is_echoed_one_way(
        tmp_path: Path, flags: tuple[str, str], as_json: bool) -> None:
    """Bytes of an argument that are not UTF-8 were echoed three ways: ``--since``,
    ``--as-of``, ``--limit`` and ``--ranker`` as ``'\\udcff\\udcfe'`` (the repr of Python's
    surrogate escapes), ``--source`` and ``show``'s id as U+FFFD. Every one is now U+FFFD,
    as the README promises for JSON, in human lines too."""
    db = ingested(tmp_path, [conversation("s1", ("user", "docker"))])
    command = [sys.executable, "-m", "harkback.pipeline.cli", "search", "docker", *flags,
               "--db", str(db), *(["--json"] if as_json else [])]
    done = subprocess.run([os.fsencode(word) for word in command], capture_output=True,
                          timeout=120, check=False)
    said = (done.stdout + done.stderr).decode("utf-8")  # --source: a note, on stdout
    assert "\ufffd\ufffd" in said, said
    assert "udc" not in said and "\\xff" not in said, said
