"""What chaos29 found and left (issue 20), each through a real subprocess and a real
SQLite file: a report written to no one, a demo's store left in /tmp, a debug run that
misnamed its error, arguments and values echoed too long or three ways, blank homes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested


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
