"""Sessions another process removed while an import compared them, stored again.

A ``sync`` of another folder holding the same sessions (another machine's, a second path)
may remove them between an import unit's comparison and its marks (it read the ledger
before they were there). Once kept, the marks say "imported, unchanged": the sessions would
stay gone for good (until ``--full``). A removal after the marks sees them and keeps them.

Stored anew, they have no vectors: their ids join what the unit stored
(``Delta.stored``), which a sync, an ingest or an import then embeds.

>>> import asyncio
>>> from harkback.adapters.stores.memory import MemoryStore
>>> from harkback.stages.records import Conversation, Session
>>> store = MemoryStore()
>>> sorted(asyncio.run(restore_removed([Conversation(Session(id="s"), ())], store)).unwrap())
['s']
"""

from __future__ import annotations

from collections.abc import Sequence

from returns.result import Failure, Result, Success

from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation
from harkback.stages.stage import as_result


async def restore_removed(batch: Sequence[Conversation], store: SessionStore
                          ) -> Result[frozenset[str], StoreUnavailable]:
    """Store again what of ``batch`` the store no longer holds; the ids of those sessions."""
    ids = [c.session.id for c in batch]
    found = as_result(await store.sessions(ids).awaitable())
    if isinstance(found, Failure):
        return Failure(found.failure())
    stored = {s.id for s in found.unwrap()}
    missing = [c for c in batch if c.session.id not in stored]
    if not missing:
        return Success(frozenset())
    again = frozenset(c.session.id for c in missing)
    return as_result(await store.ingest(missing).awaitable()).map(lambda _: again)
