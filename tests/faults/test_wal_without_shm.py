"""A store copied with its ``-wal`` but not its ``-shm`` (a backup that skips the
shared-memory file as temporary): the commits still in the ``-wal`` are the store's, and a
read-only command sees them as a writable one does; the main file is never written."""

from __future__ import annotations

import asyncio
import json
import shutil
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
