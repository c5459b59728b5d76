"""What the review of fix29d found: a demo whose temporary folder a /tmp cleaner took
ended on an error after its recalls; a value cut between a letter and its accent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

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
