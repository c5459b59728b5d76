"""What the review of fix29d found: a demo whose temporary folder a /tmp cleaner took
ended on an error after its recalls, ..."""

from __future__ import annotations

import shutil

from harkback.pipeline.demo import _scratch_folder


def test_a_demo_folder_removed_by_someone_else_is_no_error() -> None:
    """``TemporaryDirectory`` took a folder already gone (systemd-tmpfiles, ``rm -rf
    /tmp/harkback-*``) as removed; the by-name fallback then raised FileNotFoundError,
    so a demo that had printed its recalls ended on "No such file or directory"."""
    with _scratch_folder() as folder:
        (folder / "demo.db").write_bytes(b"")
        shutil.rmtree(folder)  # what the cleaner does while the demo runs
    assert not folder.exists()
