"""Commits still in a store's ``-wal`` are the store's, and a read-only command sees them
as a writable one does: in a store copied with its ``-wal`` but not its ``-shm`` (a backup
that skips the shared-memory file as temporary; in a folder this user may not write, where
the ``-shm`` cannot be made, too), and in a store reached through a symlink
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


def _as_this_user(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    """``harkback ARGS --db DB`` as root in CI is run: without the capability that lets
    root write any folder."""
    bound = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] \
        if os.geteuid() == 0 else []
    return subprocess.run([*bound, sys.executable, "-m", "harkback.pipeline.cli", *args,
                           "--db", str(db)],
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_wal_without_its_shm_in_a_folder_this_user_may_not_write_is_read_whole(
        tmp_path: Path) -> None:
    """The -shm cannot be made there: every read-only command still sees the commits in
    the -wal (they read the main file alone, and said nothing, so the session written
    last was missing), and neither file changes, nor does a -shm appear."""
    db = _copied_with_wal_only(tmp_path)
    files = {name: (db.parent / name).read_bytes() for name in ("h.db", "h.db-wal")}
    db.parent.chmod(0o555)
    try:
        counted = _as_this_user("stats", "--json", db=db)
        shown = _as_this_user("show", "in-wal", "--json", db=db)
        found = _as_this_user("search", "nginx cors", "--json", "--summarizer", "none", db=db)
        recent = _as_this_user("recent", "--json", db=db)
    finally:
        db.parent.chmod(0o755)
    assert json.loads(counted.stdout)["sessions"] == 2, counted.stderr
    assert shown.returncode == 0, shown.stderr
    assert [r["session_id"] for r in json.loads(found.stdout)["results"]] == ["in-wal"]
    assert "in-wal" in recent.stdout, recent.stderr
    assert {name: (db.parent / name).read_bytes() for name in files} == files
    assert sorted(p.name for p in db.parent.iterdir()) == ["h.db", "h.db-wal"]


def test_a_wal_this_user_may_not_read_leaves_the_main_file_readable(tmp_path: Path) -> None:
    """A -wal without its -shm that this user may not read, in a folder it may not write:
    the commits in it cannot be read, but the main file's can (the unlocked open failed on
    the -wal and a read-only command was told it "cannot write the database")."""
    db = _copied_with_wal_only(tmp_path)
    files = {name: (db.parent / name).read_bytes() for name in ("h.db", "h.db-wal")}
    (db.parent / "h.db-wal").chmod(0o000)
    db.parent.chmod(0o555)
    try:
        counted = _as_this_user("stats", "--json", db=db)
        shown = _as_this_user("show", "first", "--json", db=db)
    finally:
        db.parent.chmod(0o755)
        (db.parent / "h.db-wal").chmod(0o644)
    assert counted.returncode == 0, counted.stderr
    assert json.loads(counted.stdout)["sessions"] == 1
    assert shown.returncode == 0, shown.stderr
    assert {name: (db.parent / name).read_bytes() for name in files} == files


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
