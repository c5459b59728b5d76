"""A repair killed midway leaves the file as it was: the rebuild is one transaction. A file
too large to copy into memory for FTS5's own check has its indexes read whole instead."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from harkback.adapters.stores import sqlite_check
from harkback.adapters.stores.sqlite_check import check
from harkback.adapters.stores.sqlite_repair import repair
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested
from tests.pipeline.test_cli_check import SESSIONS, _text_as_bytes, _unindexed, _wrong_shadow_row

KILLED = """
import os, signal, sys
from pathlib import Path
from harkback.adapters.stores import sqlite_repair

calls = 0
def index_body(text):
    global calls
    calls += 1
    if calls == 30:  # the index emptied and partly filled again: die there
        os.kill(os.getpid(), signal.SIGKILL)
    return text
sqlite_repair.index_body = index_body
sqlite_repair.repair(Path(sys.argv[1]))
"""


def test_a_repair_killed_midway_leaves_the_old_state(tmp_path: Path) -> None:
    db = ingested(tmp_path, [conversation(f"s{i}", ("user", f"docker {i}"), title=f"t {i}")
                             for i in range(40)]
                  + [conversation("needle", ("user", "kubernetes"), title="quokka")])
    _unindexed(db)
    before = check(db)
    killed = subprocess.run([sys.executable, "-c", KILLED, str(db)], check=False, timeout=120)
    assert killed.returncode == -9
    after = check(db)  # a read-only open reads past the killed writer's uncommitted pages
    assert (after.damaged, after.fine) == (before.damaged, before.fine)
    assert "1 of 41 messages are missing" in " ".join(after.damaged)


def test_a_large_files_broken_index_is_found_by_reading_it_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ingested(tmp_path, SESSIONS)
    _wrong_shadow_row(db)
    own = check(db)
    monkeypatch.setattr(sqlite_check, "OWN_CHECK_BYTES", 0)
    read = check(db)
    assert [line.split(" (")[0] for line in own.damaged + read.damaged] == [
        "the full-text index messages_fts fails FTS5's integrity-check",
        "the full-text index messages_fts cannot be read whole"]
    assert read.rebuildable


def test_a_name_starting_file_is_repaired_itself_not_the_file_it_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--db file:h.db`` repairs ./file:h.db: SQLite would take the name for a URI and
    rebuild the index of another store, ./h.db."""
    other = ingested(tmp_path, SESSIONS)
    named = tmp_path / "file:h.db"
    named.write_bytes(other.read_bytes())
    _unindexed(named)
    before = other.read_bytes()
    monkeypatch.chdir(tmp_path)
    mended = repair(Path("file:h.db"))
    assert mended.after.healthy, mended.after.damaged
    assert other.read_bytes() == before


def test_a_repair_waits_its_turn_as_any_writer_does(tmp_path: Path) -> None:
    """A sync holding the write lock longer than one busy timeout: the repair waits for
    it (a writer's patience, twelve busy timeouts), not fails after the first."""
    db = ingested(tmp_path, SESSIONS)
    _unindexed(db)
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Timer(2.5, holder.rollback)
    released.start()
    try:
        mended = repair(db, busy_timeout=1.0)
    finally:
        released.join()
        holder.close()
    assert (mended.failed, mended.after.healthy) == (None, True)


def test_a_damaged_row_the_check_did_not_see_still_stops_the_rebuild(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rebuild's own guard, behind the check's look at the rows: with that look off (as
    a check before it was), a text stored as bytes beside an unindexed message is called
    rebuildable; the rebuild meets the row, stops, says so, and the file is as it was."""
    db = ingested(tmp_path, SESSIONS)
    _unindexed(db)
    _text_as_bytes(db)
    monkeypatch.setattr(sqlite_check, "rows_whole", lambda connection, damaged: True)
    before = db.read_bytes()
    mended = repair(db)
    assert mended.before.rebuildable and mended.done == ()
    assert mended.failed is not None and mended.failed.startswith(
        "the rebuild stopped and changed nothing: a stored message is damaged"), mended.failed
    assert db.read_bytes() == before
