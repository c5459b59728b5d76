"""A rewrite (``harkback redact``) of a SQLite store against another writer of the same file:
what it reads and what it writes are one transaction, so no other commit comes between;
and a run killed between its chunks, then run again."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
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
from harkback.stages.rewrite import RewriteReport
from tests.adapters.stores.rewrite_contract import PARAPHRASE, summary_key
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation


def _redact(text: str) -> str:
    return text.replace("kiwi", "[secret]")


def _meanwhile(other: Callable[[], object]) -> tuple[Callable[[str], str], list[str]]:
    """An edit that, on its first call (the rewrite has read a chunk, not yet written it),
    has ``other`` write the file from another connection; a writer that finds the file
    locked is noted in the list, and waits its turn (the test runs it again later)."""
    waited: list[str] = []
    tried: list[bool] = []

    def edit(text: str) -> str:
        if not tried:
            tried.append(True)
            try:
                other()
            except sqlite3.OperationalError as locked:
                assert is_busy(locked)
                waited.append(str(locked))
        return _redact(text)
    return edit, waited


async def test_an_ingest_during_a_rewrite_keeps_its_update(tmp_path: Path) -> None:
    """An ingest of new text for a session the rewrite is editing is not reverted to the
    old (redacted) text, and lands at once: the rewrite reads and edits a chunk without
    the write lock (holding it for that, a redact kept every other writer waiting from
    its first chunk to its last), then reads it again under the lock, the ingest's text
    holding nothing to change."""
    path = tmp_path / "h.db"
    other = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([conversation("s1", ("user", "the key is kiwi"))]))

        def update() -> object:
            return write(other, [conversation("s1", ("user", "UPDATED text"))])
        edit, waited = _meanwhile(update)
        report = await ok(store.rewrite_texts(edit))
        if waited:
            update()  # the ingest's turn, once the rewrite has committed
        stored = await ok(store.messages(["s1"]))
    other.close()
    assert [m.content for m in stored] == ["UPDATED text"]
    assert (report.sessions, report.messages, waited) == (0, 0, [])


async def test_two_rewrites_at_once_count_each_change_once(tmp_path: Path) -> None:
    """A second redact run while the first holds a chunk finds that chunk already
    rewritten once its turn comes: the two reports together count each change once."""
    path = tmp_path / "h.db"
    other = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([conversation("s1", ("user", "kiwi"), ("assistant", "kiwi"))]))
        seconds: list[RewriteReport] = []

        def second() -> object:
            seconds.append(rewrite_all(other, _redact, dry_run=False))
            return None
        edit, waited = _meanwhile(second)
        first = await ok(store.rewrite_texts(edit))
        if waited:
            second()
        stored = await ok(store.messages(["s1"]))
    other.close()
    assert [m.content for m in stored] == ["[secret]", "[secret]"]
    assert first.messages + sum(s.messages for s in seconds) == 2


async def test_big_sessions_are_written_a_few_at_a_time_cut_by_bytes(tmp_path: Path) -> None:
    """Sessions larger than the byte budget go in several write transactions, not one of
    the chunk's 200 sessions: the first are committed (another connection reads them
    redacted) before the last is read, and every one is redacted in the end."""
    path = tmp_path / "h.db"
    filler = " lorem" * 10_000  # 60 KB a session
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([conversation(f"s{i}", ("user", f"kiwi {i}{filler}"))
                               for i in range(4)]))
    other = sqlite3.connect(path)
    first_when_last_read: list[str] = []

    def edit(text: str) -> str:
        if text.startswith("kiwi 3"):
            (first,) = other.execute(
                "SELECT content FROM messages WHERE session_id = 's0'").fetchone()
            first_when_last_read.append(first[:10])
        return _redact(text)
    rewriting = sqlite3.connect(path, isolation_level=None)
    report = rewrite_all(rewriting, edit, dry_run=False, budget=Budget(size=100_000))
    rewriting.close()
    stored = [row[0][:10] for row in other.execute(
        "SELECT content FROM messages ORDER BY session_id")]
    other.close()
    assert first_when_last_read == ["[secret] 0"]
    assert stored == [f"[secret] {i}" for i in range(4)]
    assert (report.sessions, report.messages) == (4, 4)


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

