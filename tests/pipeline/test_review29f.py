"""What the review of fix29d found: a demo whose temporary folder a /tmp cleaner took
ended on an error after its recalls; a value cut between a letter and its accent; options
written short (``--dry``, ``--d``) read otherwise with standard output closed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.pipeline.demo import _scratch_folder
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested
from tests.pipeline.test_import_cli import harkback


def test_a_demo_folder_removed_by_someone_else_is_no_error() -> None:
    """``TemporaryDirectory`` took a folder already gone (systemd-tmpfiles, ``rm -rf
    /tmp/harkback-*``) as removed; the by-name fallback then raised FileNotFoundError,
    so a demo that had printed its recalls ended on "No such file or directory"."""
    with _scratch_folder() as folder:
        (folder / "demo.db").write_bytes(b"")
        shutil.rmtree(folder)  # what the cleaner does while the demo runs
    assert not folder.exists()


def test_a_long_value_is_not_cut_between_a_letter_and_its_accent(tmp_path: Path) -> None:
    """The one echo rule cut at 60 characters, so a ``--since`` whose 60th letter was an
    ``é`` written as ``e`` and a combining accent was echoed with a bare ``e``: a letter
    the user never wrote. The letter goes with its accent now."""
    db = ingested(tmp_path, [conversation("s1", ("user", "docker"))])
    given = "x" * 59 + "e\u0301" + "y" * 100
    done = harkback("search", "docker", "--since", given, "--db", str(db), "--json")
    assert done.returncode == 2, done.stderr
    error = json.loads(done.stdout)["error"]
    assert "'" + "x" * 59 + "…'" in error, error


def _closed(command: str, db: Path, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", f'exec "$0" -m harkback.pipeline.cli {command} >&-', sys.executable,
         str(db)], capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "HOME": str(home), "TMPDIR": str(home)})


def test_a_demo_keeping_its_store_under_a_short_db_runs_with_standard_output_closed(
        tmp_path: Path) -> None:
    """``demo --d kept.db >&-`` is ``demo --db kept.db`` to argparse, a store the user
    keeps, but the refusal looked for ``--db`` whole: refused (exit 2), no store made."""
    db = tmp_path / "kept.db"
    done = _closed('demo --d "$1"', db, tmp_path)
    assert done.returncode == 0, done.stderr
    assert db.stat().st_size > 0


@pytest.mark.parametrize("command", ['redact --dry --db "$1"', "--vers", "--he",
                                     'ingest "$1" --help'])
def test_an_option_written_short_is_refused_as_written_whole(
        tmp_path: Path, command: str) -> None:
    """argparse takes ``--dry`` for ``--dry-run`` and ``--vers`` for ``--version``, and a
    command's ``--help`` prints and does nothing else; with standard output closed these
    printed to no one and said success (exit 0), as ``redact --dry-run >&-`` did."""
    db = ingested(tmp_path, [conversation("s1", ("user", "token sk-abcdefghijklmnopqrstuvwx"))])
    before = db.read_bytes()
    done = _closed(command, db, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("harkback: standard output is closed (>&-)"), done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert db.read_bytes() == before


def test_a_config_file_with_a_number_of_thousands_of_digits_is_one_line(
        tmp_path: Path) -> None:
    """``$HARKBACK_LIMIT`` of 5,000 digits became one short line in fix29d, but the same
    ``limit = 999…`` in the config file raised from tomllib's int() ("Exceeds the limit
    (4300 digits)"), a ValueError no TOMLDecodeError: internal error, exit 70."""
    db = ingested(tmp_path, [conversation("s1", ("user", "docker"))])
    config = tmp_path / "config.toml"
    config.write_text("limit = " + "9" * 5000 + "\n", encoding="utf-8")
    done = harkback("search", "docker", "--db", str(db), env={"HARKBACK_CONFIG": str(config)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"harkback: config file {config}: "), done.stderr
    assert len(done.stderr) < 300 and "internal error" not in done.stderr, done.stderr
