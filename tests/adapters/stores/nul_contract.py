"""The NUL contract: what a library or MCP caller asks holding a NUL character (which argv
cannot carry) gets one clear refusal from every store, the same, before the store reads
it. SQLite's JSON lists end a text at a NUL, so there it read as its start: the session
``s`` shown for ``s\\0x``, the cli sessions hidden for ``cli\\0x``.

:class:`NulContract` is mixed into each store's contract test class, beside
:class:`~tests.adapters.stores.store_contract.StoreContract`.
"""

from __future__ import annotations

from harkback.pipeline import Harkback
from harkback.stages.errors import QueryRejected
from harkback.stages.ports import SessionStore
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation


async def _stored(store: SessionStore) -> Harkback:
    await ok(store.ingest([conversation("s", ("user", "docker bridge"), started_at=1.0),
                           conversation("u", ("user", "docker swarm"), started_at=2.0)]))
    return Harkback(store=store)


class NulContract:
    """What every store answers to a NUL in a session id or a hidden source."""

    async def test_a_session_id_holding_a_nul_is_refused_never_its_start_shown(
            self, store: SessionStore) -> None:
        """``s\\0x`` (the id, or a message id of it to centre on) is one refusal naming
        it, and session ``s`` is not shown."""
        hb = await _stored(store)
        for asked, around in (("s\x00x", None), ("s", "s\x00x:0")):
            page = await hb.read_session(asked, around=around)
            assert page.failure() == QueryRejected(
                "a session id cannot hold a NUL character, got 's\\x00x'"), page

    async def test_a_hidden_source_holding_a_nul_is_refused(self, store: SessionStore) -> None:
        """``cli\\0x`` hidden is one refusal naming it, for a search and a browse alike."""
        hb = await _stored(store)
        for query in ("docker", ""):
            found = (await hb.search(query, hidden_sources=("cli\x00x",))).to_payload()
            assert (found["success"], found["error"]) == (
                False, "query rejected: hidden source names cannot hold a NUL character, "
                       "got 'cli\\x00x'"), found
