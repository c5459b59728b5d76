"""``recent`` on a store whose sessions name each other as parents in a loop (a damaged
store, or two sources numbering sessions alike), against the SQLite, PostgreSQL and
in-memory stores: each loop is listed once, by the session a search resolves it to."""

from __future__ import annotations

import time

from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline.facade import Harkback
from harkback.stages.ports import RecentQuery, SessionStore
from harkback.stages.records import Conversation, Message, Session
from tests.adapters.stores.store_contract import ok
from tests.support.new_stores import new_stores

PARENTS = {"a": "b", "b": "a",            # two sessions naming each other
           "e": "f", "f": "g", "g": "e",  # three in a ring
           "x": "a",                      # a sub-agent of a loop's member
           "d": None, "k": "d"}           # a plain lineage beside them


store = new_stores("sqlite", "postgres", "memory")
"""A fresh, empty store of each kind."""


def _chat(number: int, sid: str, parent: str | None) -> Conversation:
    return Conversation(
        Session(id=sid, parent_session_id=parent, started_at=1_770_000_000.0 + 60 * number),
        (Message(session_id=sid, position=0, role="user", content=f"zebrafish {sid}"),))


async def test_every_parent_loop_is_listed_once_by_its_root(store: SessionStore) -> None:
    """No member of a loop has an unstored parent, so none was a root: both loops (and
    the sub-agent of one) were missing from ``recent``, though a search found them."""
    await ok(store.ingest([_chat(n, sid, parent) for n, (sid, parent)
                           in enumerate(PARENTS.items())]))
    hb = Harkback(store=store)
    listed = (await hb.recent(limit=10)).outcome.unwrap().results
    found = (await hb.search("zebrafish", limit=10)).outcome.unwrap().results
    assert sorted(r.session_id for r in listed) == sorted(r.session_id for r in found)
    assert [r.session_id for r in listed] == ["d", "e", "a"]  # newest first
    mine = (await hb.recent(limit=10, current_session_id="b")).outcome.unwrap().results
    assert [r.session_id for r in mine] == ["d", "e"]  # the caller's loop left out


async def test_a_long_lineage_is_listed_without_walking_it_per_session() -> None:
    """The in-memory store walked every session's chain to its root to find the loops:
    a lineage of 8,000 continuations cost 32 million steps (~9 s of CPU) per listing.
    A continuation's parent started before it, so its test stops at once, as in SQL."""
    store = MemoryStore()
    chain = [_chat(n, f"s{n}", f"s{n - 1}" if n else None) for n in range(8000)]
    await ok(store.ingest(chain))
    started = time.process_time()
    listed = await ok(store.recent(RecentQuery(limit=10)))
    assert time.process_time() - started < 2.0
    assert [o.session.id for o in listed] == ["s0"]
