"""What a sync's removals leave in the marks other sources keep of gone items, and what
``harkback sources`` counts as kept gone: in memory, on a SQLite file and on PostgreSQL,
with a second connection to the same store standing for another harkback process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from returns.future import FutureResult

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.sync_gone import settle_gone
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import ImportLedger, Mark, SourceKey, SourceState
from harkback.stages.ports import SessionStore
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation
from tests.support.postgres_server import emptied, waits_for_a_lock

A, B = SourceKey("claude-code", "/a/projects"), SourceKey("claude-code", "/b/projects")
S = conversation("S", ("user", "walrus tusks"), ("assistant", "ivory"), ("user", "how long"))
T = conversation("T", ("user", "narwhal horn"))


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def stores(request: pytest.FixtureRequest, tmp_path: Path
           ) -> Iterator[tuple[SessionStore, SessionStore]]:
    """Two stores open on one database (two connections; in memory, the same store twice)."""
    if request.param == "memory":
        store = MemoryStore()
        yield store, store
    elif request.param == "sqlite":
        with SqliteStore.open(tmp_path / "h.db").unwrap() as one, \
                SqliteStore.open(tmp_path / "h.db").unwrap() as two:
            yield one, two
    else:
        url = request.getfixturevalue("postgres_database")
        with PostgresStore.open(url).unwrap() as one, PostgresStore.open(url).unwrap() as two:
            emptied(url)
            yield one, two


def ledger_of(store: SessionStore) -> ImportLedger:
    """``store``'s import ledger."""
    ledger = store.import_ledger()
    assert ledger is not None
    return ledger


async def state(store: SessionStore, key: SourceKey) -> SourceState:
    """What the ledger remembers of ``key``, and what ``harkback sources`` lists of it."""
    ledger = ledger_of(store)
    (listed,) = [s for s in await ok(ledger.sources()) if s.key == key]
    return SourceState(key=key, marks=(await ok(ledger.state(key))).marks,
                       last_imported_at=listed.last_imported_at, sessions=listed.sessions,
                       messages=listed.messages, kept_gone=listed.kept_gone)


async def _two_sources(store: SessionStore) -> None:
    """S and T stored; B keeps a gone file of both, A a live file of S (A synced last)."""
    await ok(store.ingest([S, T]))
    ledger = ledger_of(store)
    await ok(ledger.keep(B, [Mark(item="b.jsonl", fingerprint="1:1", sessions=2,
                                  messages=len(S.messages) + len(T.messages),
                                  session_ids=("S", "T")).went()], now=5.0))
    await ok(ledger.keep(A, [Mark(item="a.jsonl", fingerprint="1:1", sessions=1,
                                  messages=len(S.messages), session_ids=("S",))], now=6.0))


async def test_a_narrowed_gone_mark_counts_the_messages_it_still_holds(
        stores: tuple[SessionStore, SessionStore]) -> None:
    """A's file of S is gone and pruned: B's gone mark keeps T alone, and ``sources`` counts
    T's messages for B (it went on counting S's too, which are no longer stored)."""
    store, _ = stores
    await _two_sources(store)
    gone = (await settle_gone(A, ["a.jsonl"], store, ledger_of(store), prune=True,
                              now=9.0)).unwrap()
    assert gone.removed == 1
    b = await state(store, B)
    (mark,) = b.marks
    assert (mark.session_ids, mark.sessions, mark.messages) == (("T",), 1, len(T.messages))
    assert (b.sessions, b.messages, b.kept_gone) == (1, len(T.messages), 1)


async def test_a_sync_of_the_other_source_meanwhile_is_not_rolled_back(
        stores: tuple[SessionStore, SessionStore], monkeypatch: pytest.MonkeyPatch) -> None:
    """A's prune removes S. While it removes, another process syncs B: its file came back
    holding T alone (a live mark, stamped 20). A's sync read B's gone mark before; it wrote
    that mark back (narrowed to T, still gone) and B's old time over the newer ones."""
    store, other = stores
    await _two_sources(store)
    ledger = ledger_of(store)
    came_back = Mark(item="b.jsonl", fingerprint="2:2", sessions=1, messages=len(T.messages),
                     session_ids=("T",))
    forget = type(ledger).forget
    synced: list[SourceKey] = []

    def other_sync_first(self: Any, key: SourceKey, items: Any
                         ) -> FutureResult[None, StoreUnavailable]:
        # A forgets its gone file once it removed S, and before it lets go of S elsewhere.
        if synced:
            return forget(self, key, items)
        synced.append(B)
        return ledger_of(other).keep(B, [came_back], now=20.0).bind(
            lambda _: forget(self, key, items))

    monkeypatch.setattr(type(ledger), "forget", other_sync_first)
    gone = (await settle_gone(A, ["a.jsonl"], store, ledger, prune=True, now=9.0)).unwrap()
    assert (gone.removed, synced) == (1, [B])
    b = await state(other, B)
    assert (b.marks, b.last_imported_at, b.kept_gone) == ((came_back,), 20.0, 0)


async def test_kept_gone_counts_each_session_only_gone_marks_keep(
        stores: tuple[SessionStore, SessionStore]) -> None:
    """B's files x (S, T) and z (T, U) are deleted; its live file y holds S, A's live file
    holds U. Sync keeps T alone for them; ``sources`` summed the gone marks' sessions (4)."""
    store, _ = stores
    ledger = ledger_of(store)
    await ok(store.ingest([S, T, conversation("U", ("user", "beluga"))]))
    await ok(ledger.keep(B, [Mark(item="x", fingerprint="1", sessions=2, session_ids=("S", "T")),
                             Mark(item="y", fingerprint="1", sessions=1, session_ids=("S",)),
                             Mark(item="z", fingerprint="1", sessions=2, session_ids=("T", "U"))],
                         now=1.0))
    await ok(ledger.keep(A, [Mark(item="w", fingerprint="1", sessions=1, session_ids=("U",))],
                         now=2.0))
    gone = (await settle_gone(B, ["x", "z"], store, ledger, now=3.0)).unwrap()
    b = await state(store, B)
    assert sorted(m.item for m in b.marks if m.gone) == ["x", "z"]
    assert b.kept_gone == gone.kept == 1


async def test_a_mark_another_process_is_writing_is_waited_for(postgres_database: str) -> None:
    """On PostgreSQL another harkback keeps B's mark (its file came back, holding T alone)
    in a transaction still open when A's prune lets go of S: the let-go waits for it, then
    leaves the live mark alone. Read before the other commits, the gone mark of S and T was
    narrowed and written over the newer mark once its row was free."""
    url = postgres_database
    with PostgresStore.open(url).unwrap() as store, psycopg.connect(url) as writer:
        emptied(url)
        await _two_sources(store)
        writer.execute("UPDATE import_marks SET fingerprint = '2:2', sessions = 1, "
                       "messages = %s WHERE location = %s", (len(T.messages), B.location))
        writer.execute("DELETE FROM import_mark_sessions WHERE location = %s "
                       "AND session_id = 'S'", (B.location,))
        pruning = asyncio.ensure_future(settle_gone(A, ["a.jsonl"], store, ledger_of(store),
                                                    prune=True, now=9.0))
        deadline = time.monotonic() + 20
        while not waits_for_a_lock(url) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not pruning.done()
        writer.commit()
        assert (await pruning).unwrap().removed == 1
        (mark,) = (await state(store, B)).marks
    assert (mark.fingerprint, mark.session_ids, mark.messages) == ("2:2", ("T",), len(T.messages))
