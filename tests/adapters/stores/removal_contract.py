"""The session-removal capability's contract: every store that offers it passes these.

:class:`RemovalContract` is mixed into each store's contract test class, beside
:class:`~tests.adapters.stores.store_contract.StoreContract`.
"""

from __future__ import annotations

from collections.abc import Callable

from harkback.stages.ports import MessageKey, RecentQuery, SessionStore, SummaryKey
from harkback.stages.records import Conversation, Summary
from harkback.stages.removal import SessionRemover
from tests.adapters.stores.store_contract import match, ok

Make = Callable[..., Conversation]


def _remover(store: SessionStore) -> SessionRemover:
    remover = store.session_remover()
    assert remover is not None
    return remover


class RemovalContract:
    """What a store's :class:`SessionRemover` promises."""

    async def test_a_removed_session_is_gone_from_every_read(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Search, titles, reads and recent no longer see a removed session; others stay."""
        await ok(store.ingest([
            make_conversation("gone", ("user", "walrus tusk polish"), title="walrus notes"),
            make_conversation("kept", ("user", "walrus feeding times"), title="zoo")]))
        assert await ok(_remover(store).remove_sessions(["gone", "never-stored"])) == 1
        assert [h.session_id for h in await ok(store.search(match("walrus")))] == ["kept"]
        assert await ok(store.search(match("tusk"))) == ()
        assert [h.session_id for h in await ok(store.search_titles(match("walrus notes")))
                ] == []
        assert await ok(store.sessions(["gone"])) == ()
        assert await ok(store.messages(["gone"])) == ()
        recent = await ok(store.recent(RecentQuery(limit=10)))
        assert [o.session.id for o in recent] == ["kept"]

    async def test_the_index_forgets_removed_messages(
            self, store: SessionStore, make_conversation: Make) -> None:
        """The full-text statistics count only the messages still stored."""
        await ok(store.ingest([make_conversation("a", ("user", "otter"), ("user", "otter")),
                               make_conversation("b", ("user", "otter"))]))
        await ok(_remover(store).remove_sessions(["a"]))
        stats = await ok(store.term_stats(["otter"]))
        assert (stats.documents, dict(stats.counts)) == (1, {"otter": 1})

    async def test_a_removed_session_can_be_stored_again(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Ingesting a removed id again stores only the new text, found once."""
        await ok(store.ingest([make_conversation("s", ("user", "heron old"))]))
        await ok(_remover(store).remove_sessions(["s"]))
        await ok(store.ingest([make_conversation("s", ("user", "heron new"))]))
        assert [h.content for h in await ok(store.search(match("heron")))] == ["heron new"]

    async def test_vectors_and_summaries_of_removed_sessions_go(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A removed session's vectors and the summaries cached for it are dropped."""
        await ok(store.ingest([make_conversation("s", ("user", "ibis")),
                               make_conversation("t", ("user", "ibis"))]))
        vectors, cache = store.vector_store(), store.summary_cache()
        assert vectors is not None and cache is not None
        await ok(vectors.keep_vectors("m", [(MessageKey(session_id="s", position=0), (1.0, 0.0)),
                                            (MessageKey(session_id="t", position=0), (0.0, 1.0))]))
        key = SummaryKey(root_session_id="s", content="c", query="ibis", model="m",
                         prompt_version="v")
        await ok(cache.keep_summary(key, Summary(text="About ibises.", kind="llm")))
        await ok(_remover(store).remove_sessions(["s"]))
        assert await ok(vectors.vector_count("m")) == 1
        assert await ok(cache.cached_summary(key)) is None

    async def test_the_child_of_a_removed_parent_becomes_a_root(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A child stays when its parent is removed, and is listed as a root."""
        await ok(store.ingest([make_conversation("p", ("user", "plan")),
                               make_conversation("c", ("user", "step"), parent="p")]))
        await ok(_remover(store).remove_sessions(["p"]))
        recent = await ok(store.recent(RecentQuery(limit=10)))
        assert [o.session.id for o in recent] == ["c"]

    async def test_removing_nothing_changes_nothing(
            self, store: SessionStore, make_conversation: Make) -> None:
        """No ids, or only unknown ones, remove nothing."""
        await ok(store.ingest([make_conversation("s", ("user", "egret"))]))
        assert await ok(_remover(store).remove_sessions([])) == 0
        assert await ok(_remover(store).remove_sessions(["x"])) == 0
        assert len(await ok(store.search(match("egret")))) == 1
