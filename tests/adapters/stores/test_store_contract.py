"""The store contracts (SessionStore and VectorStore) as one suite, run against every store:
in memory, a SQLite file, and a real PostgreSQL server (tests/support/postgres_server.py)."""

from __future__ import annotations

from harkback.stages.records import Conversation, Message, Session
from tests.adapters.stores.alike_contract import AlikeContract
from tests.adapters.stores.closed_contract import ClosedContract
from tests.adapters.stores.filter_contract import FilterContract
from tests.adapters.stores.links_contract import LinksContract
from tests.adapters.stores.nul_contract import NulContract
from tests.adapters.stores.removal_contract import RemovalContract
from tests.adapters.stores.rewrite_contract import RewriteContract
from tests.adapters.stores.store_contract import StoreContract, ok
from tests.adapters.stores.tail_contract import TailContract
from tests.adapters.stores.vector_contract import Store, VectorContract, axis, key, places
from tests.adapters.stores.window_contract import WindowContract
from tests.support.new_stores import KINDS, new_stores

store = new_stores(*KINDS)
"""A fresh, empty store of each kind."""


class TestSessionStores(StoreContract, RemovalContract, FilterContract, TailContract,
                        WindowContract, ClosedContract, AlikeContract, NulContract,
                        RewriteContract, LinksContract):
    """The SessionStore contract (with session removal, filters, tail writes, message
    windows, what a closed store does, ids alike, NULs asked, the summaries a rewrite
    drops and sessions' links), run against every store."""


class TestVectorStores(VectorContract):
    """The VectorStore contract, run against every store."""

    async def test_new_content_behind_the_same_search_text_drops_the_vector(
            self, store: Store) -> None:
        """Content that changes while the indexed text stays the same (content and tool name
        are indexed together) still loses its vector: the vector describes the content."""
        def chat(message: Message) -> Conversation:
            return Conversation(Session(id="s1"), (message,))
        await ok(store.ingest([chat(Message(session_id="s1", position=0, role="tool",
                                            content="ls\nbash"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0))]))
        await ok(store.ingest([chat(Message(session_id="s1", position=0, role="tool",
                                            content="ls", tool_name="bash"))]))
        assert await ok(store.vector_count("m")) == 0
        assert places(await ok(store.unembedded("m", ("tool",), 5))) == [("s1", 0)]
