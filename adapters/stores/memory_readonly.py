"""The in-memory store opened read-only (``open_store(":memory:", readonly=True)``): it
refuses every write, as the SQLite and PostgreSQL stores opened read-only do, with the
same :class:`~harkback.stages.errors.StoreUnavailable`; its summary cache keeps nothing.

>>> import asyncio
>>> from returns.unsafe import unsafe_perform_io
>>> from harkback.stages.records import Conversation, Session
>>> store = ReadOnlyMemoryStore()
>>> done = asyncio.run(store.ingest([Conversation(Session(id="s1"), ())]).awaitable())
>>> unsafe_perform_io(done.failure()).reason
'the store at :memory: was opened read-only; it cannot ingest'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from returns.future import FutureResult

from harkback.adapters.stores.import_ledger import MemoryImportLedger
from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.summary_cache import MemorySummaryCache
from harkback.stages import ports, records, rewrite
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import Mark, SourceKey
from harkback.stages.summary_port import SummaryKey
from harkback.stages.tails import Tail


def refused(what: str) -> FutureResult[Any, StoreUnavailable]:
    """The failure of a write to the read-only in-memory store."""
    return FutureResult.from_failure(StoreUnavailable(
        f"the store at :memory: was opened read-only; it cannot {what}"))


class ReadOnlyLedger(MemoryImportLedger):
    """The read-only store's ledger: it reads, and refuses every mark (as SQLite's)."""

    def keep(self, key: SourceKey, marks: Sequence[Mark], *, now: float
             ) -> FutureResult[None, StoreUnavailable]:
        """Refused."""
        return refused("import")

    def advance(self, key: SourceKey, cursor: str, *, now: float
                ) -> FutureResult[None, StoreUnavailable]:
        """Refused."""
        return refused("import")

    def forget(self, key: SourceKey, items: Sequence[str]
               ) -> FutureResult[None, StoreUnavailable]:
        """Refused."""
        return refused("import")

    def let_go(self, session_ids: Sequence[str]) -> FutureResult[None, StoreUnavailable]:
        """Refused."""
        return refused("import")


class ReadOnlyCache(MemorySummaryCache):
    """The read-only store's summary cache: it keeps nothing (the next lookup misses)."""

    def keep_summary(self, key: SummaryKey, summary: records.Summary
                     ) -> FutureResult[None, StoreUnavailable]:
        """Nothing is kept, as a read-only SQLite store's cache keeps nothing."""
        return FutureResult.from_value(None)


class ReadOnlyMemoryStore(MemoryStore):
    """An empty in-memory store that reads and refuses every write."""

    def __init__(self) -> None:
        """Start empty, for good."""
        super().__init__()
        self._cache = ReadOnlyCache(closed=self._is_closed)
        self._ledger = ReadOnlyLedger(stored=self._messages, closed=self._is_closed)

    def ingest(self, conversations: Sequence[records.Conversation]
               ) -> FutureResult[ports.IngestReport, StoreUnavailable]:
        """Refused."""
        return refused("ingest")

    def ingest_tails(self, tails: Sequence[Tail]
                     ) -> FutureResult[ports.IngestReport | None, StoreUnavailable]:
        """Refused."""
        return refused("ingest")

    def remove_sessions(self, ids: Sequence[str]) -> FutureResult[int, StoreUnavailable]:
        """Refused."""
        return refused("remove sessions")

    def rewrite_texts(self, edit: rewrite.Edit, *, dry_run: bool = False
                      ) -> FutureResult[rewrite.RewriteReport, StoreUnavailable]:
        """Counted on a dry run (nothing to count: the store is empty), else refused."""
        return super().rewrite_texts(edit, dry_run=True) if dry_run else refused(
            "be rewritten")

    def keep_vectors(self, model: str, vectors: Sequence[tuple[ports.MessageKey, ports.Vector]]
                     ) -> FutureResult[int, StoreUnavailable]:
        """Refused."""
        return refused("keep vectors")

    def drop_vectors(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """Refused."""
        return refused("drop vectors")
