"""A rewrite (``harkback redact``) of a SQLite store against another writer of the same file:
what it reads and what it writes are one transaction, so no other commit comes between;
and a run killed between its chunks, then run again."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from harkback.adapters.stores import sqlite_rewrite
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_rewrite import rewrite_all
from harkback.adapters.stores.sqlite_writes import write
from harkback.adapters.stores.write_turns import is_busy
from harkback.stages.batching import Budget
from harkback.stages.records import Summary
from harkback.stages.redact.scrub import redact
from tests.adapters.stores.rewrite_contract import PARAPHRASE, summary_key
from tests.adapters.stores.rewrite_turns import (
    BIG_SESSIONS,
    redact_kiwi,
    rewrite_beside_an_ingest,
    two_rewrites_at_once,
    watching_the_first,
)
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation


def _busy(error: Exception) -> bool:
    return isinstance(error, sqlite3.OperationalError) and is_busy(error)


def _other(path: Path) -> sqlite3.Connection:
    """Another writer of the file, which does not wait for its lock."""
    return sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)


async def test_an_ingest_during_a_rewrite_keeps_its_update(tmp_path: Path) -> None:
    """An ingest of new text for a session the rewrite is editing is not reverted to the
    old (redacted) text, and lands at once: the rewrite reads and edits a chunk without
    the write lock (holding it for that, a redact kept every other writer waiting from
    its first chunk to its last), then reads it again under the lock, the ingest's text
    holding nothing to change."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store, closing(_other(path)) as other:
        stored, report, waited = await rewrite_beside_an_ingest(
            store, lambda updated: write(other, [updated]), _busy)
    assert stored == ["UPDATED text"]
    assert (report.sessions, report.messages, waited) == (0, 0, [])


async def test_two_rewrites_at_once_count_each_change_once(tmp_path: Path) -> None:
    """A second redact run while the first holds a chunk finds that chunk already
    rewritten once its turn comes: the two reports together count each change once."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store, closing(_other(path)) as other:
        stored, changes, _ = await two_rewrites_at_once(
            store, lambda: rewrite_all(other, redact_kiwi, dry_run=False), _busy)
    assert stored == ["[secret]", "[secret]"]
    assert changes == 2


async def test_big_sessions_are_written_a_few_at_a_time_cut_by_bytes(tmp_path: Path) -> None:
    """Sessions larger than the byte budget go in several write transactions, not one of
    the chunk's 200 sessions: the first are committed (another connection reads them
    redacted) before the last is read, and every one is redacted in the end."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(BIG_SESSIONS))
    with closing(sqlite3.connect(path)) as reader, closing(
            sqlite3.connect(path, isolation_level=None)) as rewriting:
        edit, first_when_last_read = watching_the_first(lambda: str(reader.execute(
            "SELECT content FROM messages WHERE session_id = 's0'").fetchone()[0]))
        report = rewrite_all(rewriting, edit, dry_run=False, budget=Budget(size=100_000))
        stored = [row[0][:10] for row in reader.execute(
            "SELECT content FROM messages ORDER BY session_id")]
    assert first_when_last_read == ["[secret] 0"]
    assert stored == [f"[secret] {i}" for i in range(4)]
    assert (report.sessions, report.messages) == (4, 4)


async def test_a_stop_during_a_rewrite_starts_no_other_chunk(tmp_path: Path) -> None:
    """Ctrl-C or SIGTERM (``stop()``: the store is closing) during a redact ends it once
    the chunk under way is written, which keeps its placeholders: only the waits for the
    lock looked at it, so a redact of a large store went on to its last chunk. Run again,
    it finishes the job."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(BIG_SESSIONS))
    edited: list[str] = []

    def edit(text: str) -> str:
        edited.append(text[:6])  # stopped as the first chunk is edited
        return redact_kiwi(text)
    with closing(sqlite3.connect(path, isolation_level=None)) as rewriting:
        with pytest.raises(sqlite3.OperationalError, match="interrupted"):
            rewrite_all(rewriting, edit, dry_run=False, stop=lambda: bool(edited),
                        budget=Budget(count=1))
        stored = [row[0][:10] for row in rewriting.execute(
            "SELECT content FROM messages ORDER BY session_id")]
        again = rewrite_all(rewriting, redact_kiwi, dry_run=False)
    assert stored == ["[secret] 0", "kiwi 1 lor", "kiwi 2 lor", "kiwi 3 lor"]
    assert again.messages == 3


class _Killed(Exception):
    """The process dying between two chunks, as far as the rewrite can tell."""


async def test_a_run_killed_between_chunks_and_run_again_leaves_no_summary_of_a_secret(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The summaries of a chunk's changed sessions go in that chunk's transaction: the
    second run finds those sessions already redacted, and would never drop them."""
    monkeypatch.setattr(sqlite_rewrite, "CHUNK", 1)
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([conversation("a", ("user", "PASSWORD=hunter2")),
                               conversation("b", ("user", "PASSWORD=swordfish"))]))
        cache = store.summary_cache()
        for root in ("a", "b"):
            await ok(cache.keep_summary(summary_key(root), Summary(
                text=PARAPHRASE, kind="llm")))

    def dies_at_b(text: str) -> str:
        if "swordfish" in text:
            raise _Killed
        return redact(text)[0]
    killed = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(_Killed):
        rewrite_all(killed, dies_at_b, dry_run=False)
    killed.close()
    with SqliteStore.open(path).unwrap() as store:
        again = await ok(store.rewrite_texts(lambda text: redact(text)[0]))
        cache = store.summary_cache()
        left = [root for root in ("a", "b")
                if await ok(cache.cached_summary(summary_key(root))) is not None]
    assert (again.sessions, again.summaries_dropped) == (1, 1)
    assert left == []

