"""Merging the SQLite store's full-text index (``harkback optimize``): fewer pages, the same
hits, and no write where none was asked for."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from harkback.adapters.stores.sql import fulltext
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Conversation
from tests.adapters.stores.store_contract import failed, match, ok
from tests.conftest import conversation

WORDS = ("bridge network docker dns resolver port conflict cron backup rsync nginx "
         "certificate renew postgres vacuum index kernel panic wifi driver").split()
QUERIES = ("bridge", "dns resolver", "postgres OR nginx", "kernel panic", '"port conflict"')


def _batch(number: int) -> list[Conversation]:
    # Each session says a different mix of the words, so the rankings are not all ties.
    return [conversation(f"s{number}-{i}",
                         ("user", " ".join(WORDS[(number * 7 + i * j) % len(WORDS)]
                                           for j in range(1, 12))),
                         ("assistant", f"answer {number} {i} " + WORDS[(number + i) % 20]))
            for i in range(10)]


def index_pages(path: Path) -> int:
    """How many pages the store's full-text index holds (fewer once merged)."""
    with sqlite3.connect(path) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM messages_fts_data").fetchone()[0])


async def _hits(store: SqliteStore) -> list[list[tuple[str, int, float]]]:
    found = []
    for query in QUERIES:
        hits = await ok(store.search(match(query, limit=20)))
        found.append([(h.session_id, h.position, round(h.score, 9)) for h in hits])
    return found


async def test_merging_keeps_every_hit_and_shrinks_the_index(tmp_path: Path) -> None:
    """Thirty separate ingests leave many segments; merged, the index has fewer pages,
    passes FTS5's own integrity check, and every search returns the same hits and scores."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        for number in range(30):
            await ok(store.ingest(_batch(number)))
        before = await _hits(store)
        pages = index_pages(path)
        await ok(store.merge_index())
        after = await _hits(store)
    assert all(before), "every query should find something"
    assert after == before
    assert index_pages(path) < pages
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO messages_fts(messages_fts, rank) "
                           "VALUES('integrity-check', 0)")


async def test_a_read_only_store_does_not_merge(tmp_path: Path) -> None:
    """Opened read-only, the store refuses and the file is not touched."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(_batch(0)))
    before = path.read_bytes(), path.stat().st_mtime_ns
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        error = await failed(reader.merge_index())
    assert "read-only" in error.reason
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


async def test_a_locked_database_fails_as_a_value(tmp_path: Path) -> None:
    """Another connection holding the write lock: the merge reports the lock, no exception."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(_batch(0)))
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with SqliteStore.open(path, busy_timeout=0.05).unwrap() as store:
            error = await failed(store.merge_index())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "locked" in error.reason


async def test_the_file_is_checked_once_while_the_merge_waits_its_turn(tmp_path: Path) -> None:
    """Another writer holds the lock for a second: the merge waits and then runs, and the
    whole-file check before it ran once; each try (a few a second) ran it again."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        for number in range(3):
            await ok(store.ingest(_batch(number)))
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(1.0, lambda: holder.execute("ROLLBACK"))
    said: list[str] = []
    with SqliteStore.open(path, busy_timeout=0.05, write_patience=30).unwrap() as store:
        await ok(store.run(lambda connection: connection.set_trace_callback(said.append)))
        release.start()
        await ok(store.merge_index())
    release.join()
    holder.close()
    assert [s for s in said if "quick_check" in s] == ["PRAGMA quick_check(2)"]
    assert fulltext.MERGE_INDEX in said


async def test_a_store_closed_during_the_check_merges_nothing(tmp_path: Path) -> None:
    """Ctrl-C closes the store: the whole-file check in flight stops there (on a big file it
    went on to its end, then the merge ran, before the command could end)."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        for number in range(30):
            await ok(store.ingest(_batch(number)))
    pages = index_pages(path)
    with SqliteStore.open(path).unwrap() as store:
        closer = threading.Thread(target=store.close)

        def closed_as_the_check_starts(statement: str) -> None:
            if "quick_check" in statement:  # on the store's thread: close from another
                closer.start()
                deadline = time.monotonic() + 10
                while not store._closed and time.monotonic() < deadline:
                    time.sleep(0.01)
        await ok(store.run(lambda connection: connection.set_trace_callback(
            closed_as_the_check_starts)))
        error = await failed(store.merge_index())
        closer.join()
    assert "interrupted" in error.reason
    assert index_pages(path) == pages
