"""Commits still in a store's ``-wal`` are the store's, and a read-only command sees them
as a writable one does: in a store copied with its ``-wal`` but not its ``-shm`` (a backup
that skips the shared-memory file as temporary), and in a store reached through a symlink
while a writer has it open (SQLite keeps the ``-wal`` beside the real file). The main file
is never written."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from harkback.adapters.stores.sqlite import SqliteStore
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run


def _copied_with_wal_only(folder: Path) -> Path:
    """A store of one session, then a second session committed to its ``-wal`` and the
    two files copied while the writer still has them open (so nothing is checkpointed)."""
    db = ingested(folder, [conversation("first", ("user", "the docker bridge lost its dns"))])
    copy = folder / "copy"
    copy.mkdir()

    async def write_and_copy() -> None:
        with SqliteStore.open(db).unwrap() as store:
            added = conversation("in-wal", ("user", "the nginx cors header went missing"))
            (await store.ingest([added])).unwrap()
            for name in ("h.db", "h.db-wal"):
                shutil.copy(folder / name, copy / name)
    asyncio.run(write_and_copy())
    assert (copy / "h.db-wal").stat().st_size > 0  # the fault is there to meet
    return copy / "h.db"


def test_read_only_commands_see_the_commits_of_a_wal_without_its_shm(tmp_path: Path) -> None:
    """stats counts both sessions, show and search find the one still in the -wal, and
    the main file keeps its bytes."""
    db = _copied_with_wal_only(tmp_path)
    before = db.read_bytes()
    counted = run("stats", "--json", db=db)
    assert json.loads(counted.stdout)["sessions"] == 2, counted.stderr
    shown = run("show", "in-wal", "--json", db=db)
    assert shown.returncode == 0, shown.stderr
    found = json.loads(run("search", "nginx cors", "--json", "--summarizer", "none",
                           db=db).stdout)
    assert [r["session_id"] for r in found["results"]] == ["in-wal"]
    assert db.read_bytes() == before


def test_a_wal_without_its_shm_in_a_folder_this_user_may_not_write_still_opens(
        tmp_path: Path) -> None:
    """The -shm cannot be made there, so reading the -wal would fail the open: the main
    file is read as it is (its commits only), as before the -wal was read."""
    db = _copied_with_wal_only(tmp_path)
    db.parent.chmod(0o555)
    try:
        # As root (CI), without the capability that lets root write any folder.
        bound = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] \
            if os.geteuid() == 0 else []
        counted = subprocess.run(
            [*bound, sys.executable, "-m", "harkback.pipeline.cli", "stats", "--json", "--db",
             str(db)], capture_output=True, text=True, timeout=120, check=False)
    finally:
        db.parent.chmod(0o755)
    assert counted.returncode == 0, counted.stderr
    assert json.loads(counted.stdout)["sessions"] == 1
    assert not (db.parent / "h.db-shm").exists()


def test_a_store_reached_through_a_symlink_shows_the_commits_of_a_running_writer(
        tmp_path: Path) -> None:
    """--db naming a symlink to the store while a writer has it open: SQLite keeps the
    -wal beside the real file, and read-only commands see what the writer committed
    (they looked for the -wal beside the link, found none and read the file immutable)."""
    db = ingested(tmp_path, [conversation("first", ("user", "the docker bridge lost its dns"))])
    (tmp_path / "elsewhere").mkdir()
    link = tmp_path / "elsewhere" / "link.db"
    link.symlink_to(db)

    async def write_then_read() -> tuple[int, int]:
        with SqliteStore.open(db).unwrap() as store:
            added = conversation("in-wal", ("user", "the nginx cors header went missing"))
            (await store.ingest([added])).unwrap()
            counted = run("stats", "--json", db=link)
            shown = run("show", "in-wal", db=link)
            return json.loads(counted.stdout)["sessions"], shown.returncode
    assert asyncio.run(write_then_read()) == (2, 0)
