"""A SQLite store's large writes are checkpointed on a thread of their own, the log stays
as bounded as SQLite's own checkpoints keep it, and nothing is created or left running."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from harkback.adapters.stores.sql import fulltext
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_checkpoints import AUTOCHECKPOINT_PAGES, Checkpoints
from harkback.stages.records import Conversation
from tests.adapters.stores.store_contract import match, ok
from tests.conftest import conversation

PAGE = 4096
FRAME = PAGE + 24
"""A page in the log, with its frame header."""


def _large(batch: int) -> list[Conversation]:
    words = " ".join(f"w{batch}x{n}" for n in range(40))  # new terms: index pages each batch
    return [conversation(f"b{batch}s{i}", *[("user", f"{words} {i} {j}") for j in range(10)])
            for i in range(fulltext.BULK_ROWS // 10)]


def _checkpoint_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("harkback-checkpoint")]


async def test_a_large_write_is_checkpointed_on_a_thread_the_close_ends(tmp_path: Path) -> None:
    """A small write leaves its checkpoint to SQLite; a large one starts a thread for it,
    and closing the store ends that thread and leaves every message readable."""
    path = tmp_path / "h.db"
    before = set(_checkpoint_threads())
    store = SqliteStore.open(path).unwrap()
    await ok(store.ingest([conversation("small", ("user", "docker bridge"))]))
    assert set(_checkpoint_threads()) == before
    await ok(store.ingest(_large(0)))
    assert len(set(_checkpoint_threads()) - before) == 1
    store.close()
    assert set(_checkpoint_threads()) == before
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        found = await ok(reader.search(match("w0x7", limit=5000)))
    assert len(found) == fulltext.BULK_ROWS


async def test_the_log_is_copied_after_each_large_write(tmp_path: Path) -> None:
    """Each large write's pages are copied and the next large write starts the log over,
    so over many of them it never reaches SQLite's own threshold (with SQLite's own
    checkpoints it grew to the threshold and a batch: 5.5 MB here)."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        for batch in range(16):
            await ok(store.ingest(_large(batch)))
            assert Path(f"{path}-wal").stat().st_size < AUTOCHECKPOINT_PAGES * FRAME
        assert Path(f"{path}-wal").stat().st_size > 100 * PAGE  # a batch went through it


@pytest.mark.parametrize("replaced", [False, True], ids=["moved", "moved-and-replaced"])
async def test_the_log_stays_bounded_once_the_file_cannot_be_checkpointed(
        tmp_path: Path, replaced: bool) -> None:
    """A store moved after its open (and maybe another store made at its old name) cannot
    be checkpointed by name: its large writes go back to SQLite's own checkpoints, which
    keep the log under the threshold and a batch, instead of each leaving its pages in it."""
    path, moved = tmp_path / "h.db", tmp_path / "moved"
    moved.mkdir()
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(_large(0)[:1]))  # small: no checkpoint connection yet
        for suffix in ("", "-wal", "-shm"):
            os.rename(f"{path}{suffix}", moved / f"h.db{suffix}")
        if replaced:
            SqliteStore.open(path).unwrap().close()
        for batch in range(1, 25):
            await ok(store.ingest(_large(batch)))
        assert (moved / "h.db-wal").stat().st_size < 2 * AUTOCHECKPOINT_PAGES * FRAME


def _refuse_checkpoint_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    start = threading.Thread.start

    def refusing(thread: threading.Thread) -> None:
        if thread.name.startswith("harkback-checkpoint"):
            raise RuntimeError("can't start new thread")
        start(thread)
    monkeypatch.setattr(threading.Thread, "start", refusing)


async def test_a_checkpoint_thread_that_cannot_start_fails_no_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No thread can be started for the checkpoint (a thread limit reached): each large
    write that committed still succeeds, later ones keep SQLite's own checkpoints (the log
    stays bounded), and the store closes with every message kept."""
    path = tmp_path / "h.db"
    before = set(_checkpoint_threads())
    with SqliteStore.open(path).unwrap() as store:
        _refuse_checkpoint_threads(monkeypatch)
        for batch in range(12):
            report = await ok(store.ingest(_large(batch)))
            assert report.messages == fulltext.BULK_ROWS
        assert Path(f"{path}-wal").stat().st_size < 2 * AUTOCHECKPOINT_PAGES * FRAME
    assert set(_checkpoint_threads()) == before
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert len(await ok(reader.search(match("w11x7", limit=5000)))) == fulltext.BULK_ROWS


def test_checkpoints_whose_thread_cannot_start_close_and_leave_sqlites_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The write after the refused thread keeps SQLite's threshold, and the close (which
    has no thread to close a connection on) ends without an error."""
    writer = sqlite3.connect(tmp_path / "h.db", isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    checkpoints = Checkpoints(tmp_path / "h.db")
    _refuse_checkpoint_threads(monkeypatch)
    try:
        with checkpoints.large_write(writer):
            writer.execute("CREATE TABLE t (x)")
        with checkpoints.large_write(writer):
            threshold = writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        checkpoints.close()
    finally:
        writer.close()
    assert threshold == AUTOCHECKPOINT_PAGES


def test_a_checkpoint_never_creates_a_file_removed_meanwhile(tmp_path: Path) -> None:
    """The checkpointing connection opens the file as it is (``mode=rw``), never a new one."""
    path = tmp_path / "h.db"
    writer = sqlite3.connect(tmp_path / "other.db", isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    checkpoints = Checkpoints(path)  # a file that is not there
    try:
        with checkpoints.large_write(writer):
            writer.execute("CREATE TABLE t (x)")
        checkpoints.wait()
    finally:
        checkpoints.close()
        writer.close()
    assert not path.exists()


def test_after_close_large_writes_keep_sqlites_own_checkpoints(tmp_path: Path) -> None:
    """A write after the close starts no thread and leaves SQLite's threshold in place."""
    writer = sqlite3.connect(tmp_path / "h.db", isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    before = set(_checkpoint_threads())
    checkpoints = Checkpoints(tmp_path / "h.db")
    checkpoints.close()
    try:
        with checkpoints.large_write(writer):
            writer.execute("CREATE TABLE t (x)")
        assert set(_checkpoint_threads()) == before
        assert writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == AUTOCHECKPOINT_PAGES
    finally:
        writer.close()


async def test_a_rewrite_right_after_a_large_write_still_empties_the_log(tmp_path: Path
                                                                        ) -> None:
    """A rewrite (``harkback redact``) ends by emptying the log, so that no old text stays
    in it: a large write's checkpoint just before does not leave it busy."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(_large(0)))
        report = await ok(store.rewrite_texts(lambda text: text.replace("w0x7", "gone")))
        assert report.messages == fulltext.BULK_ROWS
        assert Path(f"{path}-wal").stat().st_size == 0
        assert await ok(store.search(match("w0x7"))) == ()
