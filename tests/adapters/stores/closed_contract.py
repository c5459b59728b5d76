"""What a closed store promises: every call fails as :class:`StoreUnavailable` saying so,
and closing it again (or leaving a ``with`` block) is harmless.

:class:`ClosedContract` is mixed into each store's contract test class, beside
:class:`~tests.adapters.stores.store_contract.StoreContract`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import ImportLedger, SourceKey
from harkback.stages.message_window import WindowQuery
from harkback.stages.ports import RecentQuery, SessionStore, SummaryCache, SummaryKey, VectorStore
from harkback.stages.records import Conversation, Summary
from harkback.stages.removal import SessionRemover
from harkback.stages.rewrite import TextRewriter
from tests.adapters.stores.store_contract import failed, match, ok

Make = Callable[..., Conversation]
KEY = SummaryKey(root_session_id="s1", content="c", query="q", model="m",
                 prompt_version="recall-1")


@attrs.frozen
class Parts:
    """A store's capabilities, as a caller holds them."""

    vectors: VectorStore
    cache: SummaryCache
    ledger: ImportLedger
    remover: SessionRemover
    rewriter: TextRewriter

    @classmethod
    def of(cls, store: SessionStore) -> Parts:
        """Every capability of ``store`` (each store of the suite has them all)."""
        vectors, cache, ledger = store.vector_store(), store.summary_cache(), store.import_ledger()
        remover, rewriter = store.session_remover(), store.text_rewriter()
        assert vectors and cache and ledger and remover and rewriter
        return cls(vectors, cache, ledger, remover, rewriter)


def _every_call(store: SessionStore, parts: Parts, talk: Conversation
                ) -> dict[str, FutureResult[Any, StoreUnavailable]]:
    """One of each call a store and its capabilities take, by name."""
    stats = store.stats()
    assert stats is not None
    return {
        "search": store.search(match("heron")), "titles": store.search_titles(match("heron")),
        "sessions": store.sessions(["s1"]), "children": store.children(["s1"]),
        "messages": store.messages(["s1"]), "recent": store.recent(RecentQuery(limit=5)),
        "window": store.message_window(WindowQuery(session_id="s1", limit=5)),
        "term_stats": store.term_stats(["heron"]), "stats": stats,
        "source_names": store.source_names(),
        "optimize": store.optimize(), "ingest": store.ingest([talk]),
        "remove": parts.remover.remove_sessions(["s1"]),
        "rewrite": parts.rewriter.rewrite_texts(str.upper, dry_run=True),
        "vector_count": parts.vectors.vector_count("m"),
        "unembedded": parts.vectors.unembedded("m", ("user",), 5),
        "cached_summary": parts.cache.cached_summary(KEY),
        "keep_summary": parts.cache.keep_summary(KEY, Summary(text="kept", kind="llm")),
        "ledger_sources": parts.ledger.sources(),
        "ledger_state": parts.ledger.state(SourceKey(kind="codex", location="/x")),
    }


class ClosedContract:
    """What every store promises once closed."""

    async def test_every_call_to_a_closed_store_fails_saying_it_is_closed(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Reads, writes and the capabilities taken before closing each give a
        StoreUnavailable naming the store closed; a second close raises nothing."""
        talk = make_conversation("s1", ("user", "heron at the pond"))
        await ok(store.ingest([talk]))
        parts = Parts.of(store)
        store.close()
        store.close()
        for name, call in _every_call(store, parts, talk).items():
            refused = await failed(call)
            assert "closed" in refused.reason, (name, refused.reason)

    async def test_a_with_block_closes_the_store(self, store: SessionStore) -> None:
        """``with store:`` gives the store itself and closes it on leaving."""
        with store as inside:  # type: ignore[attr-defined]
            assert inside is store
            assert await ok(store.sessions(["s1"])) == ()
        assert "closed" in (await failed(store.sessions(["s1"]))).reason
