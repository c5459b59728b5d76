"""A SQLite store that loaded a bulk batch finishes FTS5's pending merges when it closes;
one that only wrote small batches leaves them to later writes."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from harkback.adapters.stores.sql import fulltext
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Conversation
from tests.adapters.stores.store_contract import match, ok
from tests.conftest import conversation


def _segments(path: Path) -> int:
    raw = sqlite3.connect(path)
    try:
        found: int = raw.execute(
            "SELECT COUNT(DISTINCT segid) FROM messages_fts_idx").fetchone()[0]
        return found
    finally:
        raw.close()


def _no_automerge(path: Path) -> None:
    # FTS5 then merges nothing by itself: every small write leaves one more segment.
    raw = sqlite3.connect(path, isolation_level=None)
    try:
        raw.execute("INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0)")
    finally:
        raw.close()


def _small(i: int) -> list[Conversation]:
    return [conversation(f"small{i}", ("user", f"docker bridge number {i}"))]


def _bulk() -> list[Conversation]:
    return [conversation(f"bulk{i}", *[("user", f"dns cache {i} {j}") for j in range(10)])
            for i in range(fulltext.BULK_ROWS // 10)]


async def _with_segments(path: Path) -> None:
    SqliteStore.open(path).unwrap().close()
    _no_automerge(path)
    with SqliteStore.open(path).unwrap() as store:
        for i in range(12):
            await ok(store.ingest(_small(i)))


async def test_a_bulk_load_leaves_no_merge_pending(tmp_path: Path) -> None:
    """Twelve small writes leave twelve segments; a bulk batch's store merges them all
    when it closes, and finds the same messages."""
    path = tmp_path / "h.db"
    await _with_segments(path)
    assert _segments(path) == 12
    store = SqliteStore.open(path).unwrap()
    await ok(store.ingest(_bulk()))
    before = [h.session_id for h in await ok(store.search(match("docker OR dns", limit=2000)))]
    assert _segments(path) == 13
    store.close()
    assert _segments(path) < 13
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        after = [h.session_id for h in await ok(reader.search(match("docker OR dns",
                                                                      limit=2000)))]
    assert after == before
    assert len(after) == 12 + len(_bulk()) * 10


async def test_a_bulk_batch_still_queued_when_the_store_closes_is_merged_too(
        tmp_path: Path) -> None:
    """close() is called while the bulk batch waits its turn on the store's thread (as
    after Ctrl-C): the batch is stored, and the close still merges what it left pending."""
    path = tmp_path / "h.db"
    await _with_segments(path)
    store = SqliteStore.open(path).unwrap()
    # The store's thread is busy for a moment, so the bulk batch is still queued at close.
    held = asyncio.ensure_future(ok(store.run(lambda _: time.sleep(0.3))))
    bulk = asyncio.ensure_future(ok(store.ingest(_bulk())))
    await asyncio.sleep(0.05)
    store.close()
    await held
    assert (await bulk).messages == fulltext.BULK_ROWS
    assert _segments(path) < 13
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert len(await ok(reader.search(match("dns", limit=2000)))) == len(_bulk()) * 10


def test_a_close_interrupted_while_queued_work_finishes_still_closes_the_file(
        tmp_path: Path) -> None:
    """Ctrl-C (or SIGTERM, taken as one) while close() waits for the work still queued on
    the store's thread: the interrupt goes up at once, and the thread still closes the
    connection after that work (SQLite then removes the write-ahead log), as it did before
    the close decided the merge on the thread; it was left open, the close never queued."""
    path = tmp_path / "h.db"
    store = SqliteStore.open(path).unwrap()
    asyncio.run(ok(store.ingest(_small(0))))
    started = threading.Event()
    main = threading.main_thread().ident
    assert main is not None

    def busy(_: sqlite3.Connection) -> None:
        started.set()
        time.sleep(1.0)  # close() is waiting by then (called as this began): interrupt it
        signal.pthread_kill(main, signal.SIGINT)
        time.sleep(0.3)

    held = threading.Thread(target=lambda: asyncio.run(ok(store.run(busy))))
    held.start()
    started.wait()
    with pytest.raises(KeyboardInterrupt):
        store.close()
    held.join()
    log = Path(f"{path}-wal")
    deadline = time.monotonic() + 10
    while log.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not log.exists()


async def test_few_small_writes_leave_the_merging_to_later(tmp_path: Path) -> None:
    """A store that wrote fewer messages than a bulk batch closes without merging."""
    path = tmp_path / "h.db"
    await _with_segments(path)
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(_small(99)))
    assert _segments(path) == 13


async def test_a_locked_file_at_close_is_left_for_later(tmp_path: Path) -> None:
    """Another writer holds the file when the bulk store closes: the close still ends,
    without merging, and the store's data is kept."""
    path = tmp_path / "h.db"
    await _with_segments(path)
    store = SqliteStore.open(path, busy_timeout=0.1).unwrap()
    await ok(store.ingest(_bulk()))
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        store.close()
        other.execute("ROLLBACK")
    finally:
        other.close()
    assert _segments(path) == 13
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert len(await ok(reader.search(match("dns", limit=2000)))) == len(_bulk()) * 10
