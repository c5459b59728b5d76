"""The in-memory session store: the SQLite store's contract in plain Python.

For embedding harkback without a file and for tests. Matching uses the same
query evaluator over the same index tokens as SQLite's FTS5 index, and scoring
is BM25 computed the way FTS5's ``bm25()`` does, so rankings agree.

>>> import asyncio
>>> from harkback.stages.ports import MatchQuery
>>> from harkback.stages.query import parse_query
>>> from harkback.stages.records import Conversation, Message, Session
>>> store = MemoryStore()
>>> chat = Conversation(Session(id="s1"), (
...     Message(session_id="s1", position=0, role="user", content="docker bridge down"),))
>>> _ = asyncio.run(store.ingest([chat]).awaitable())
>>> query = MatchQuery(expression=parse_query("bridge").expression, roles=("user",))
>>> asyncio.run(store.search(query).map(lambda hits: [h.content for h in hits]).awaitable())
<IOResult: <Success: ['docker bridge down']>>
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import attrs
from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters.stores.closing import Closing, memory_closed
from harkback.adapters.stores.import_ledger import MemoryImportLedger
from harkback.adapters.stores.memory_match import Indexed
from harkback.adapters.stores.memory_messages import MemoryMessages, by_start
from harkback.adapters.stores.memory_search import MemorySearch
from harkback.adapters.stores.memory_vectors import MemoryVectors
from harkback.adapters.stores.sql.vectors import StartKey
from harkback.adapters.stores.summary_cache import MemorySummaryCache
from harkback.stages import ports, records, rewrite
from harkback.stages.errors import StoreUnavailable
from harkback.stages.first_request import first_request
from harkback.stages.lineage import is_root, with_ancestors
from harkback.stages.scope import in_scope
from harkback.stages.stats import StoreStats, count_sessions
from harkback.stages.storable import storable
from harkback.stages.summary_port import RANKINGS
from harkback.stages.tails import Tail, mended_tails

T = TypeVar("T")


def _newest_key(session: records.Session) -> tuple[bool, float, str]:
    return (session.started_at is None, -(session.started_at or 0.0), session.id)


class MemoryStore(Closing, MemoryMessages, MemorySearch, MemoryVectors):
    """A :class:`~harkback.stages.ports.SessionStore` and
    :class:`~harkback.stages.ports.VectorStore` held in this process's memory; usable in
    a ``with`` block, and once closed every call fails as a closed SQLite store's does."""

    def __init__(self) -> None:
        """Start empty."""
        self._sessions: dict[str, records.Session] = {}
        self._messages: dict[str, tuple[Indexed, ...]] = {}
        self._next_row_id = 1
        # Vectors by model, then by (session id, position); an ingest drops those of
        # messages that vanished or whose content changed.
        self._vectors: dict[str, dict[tuple[str, int], ports.Vector]] = {}
        self._ingests = 0
        self._order: list[Indexed] | None = None
        self._starts: dict[StartKey, tuple[int, int]] = {}
        self._closed = False
        # One call at a time: a search from a worker thread (search_sync) while another
        # thread ingests raised "dictionary changed size during iteration".
        self._lock = threading.RLock()
        # The cache and ledger take it too: they are called from the same threads.
        self._cache = MemorySummaryCache(closed=self._is_closed, lock=self._lock)
        self._ledger = MemoryImportLedger(stored=self._messages, closed=self._is_closed,
                                          lock=self._lock)

    def _is_closed(self) -> bool:
        return self._closed

    def _run(self, work: Callable[[], T]) -> FutureResult[T, StoreUnavailable]:
        return self._run_checked(lambda: Success(work()))

    def _run_checked(self, work: Callable[[], Result[T, StoreUnavailable]]
                     ) -> FutureResult[T, StoreUnavailable]:
        # Lazy like the SQLite store: nothing happens until the result is awaited.
        async def call() -> Result[T, StoreUnavailable]:
            with self._lock:
                return Failure(memory_closed()) if self._closed else work()
        awaitable: Awaitable[Result[T, StoreUnavailable]] = call()
        return FutureResult(awaitable)

    def close(self) -> None:
        """Refuse every later call, as the other stores do once closed (a store used after
        its ``with`` block is a bug to hear of, not an in-memory quirk); closing twice is
        harmless. The sessions stay until the store is garbage."""
        self._closed = True

    def vector_store(self) -> MemoryStore:
        """This store: it keeps vectors beside the messages."""
        return self

    def summary_cache(self) -> MemorySummaryCache:
        """A cache that lives as long as this store."""
        return self._cache

    def import_ledger(self) -> MemoryImportLedger:
        """A ledger that lives as long as this store."""
        return self._ledger

    def session_remover(self) -> MemoryStore:
        """This store: it removes whole sessions (:meth:`remove_sessions`)."""
        return self

    def remove_sessions(self, ids: Sequence[str]) -> FutureResult[int, StoreUnavailable]:
        """Remove these sessions with their messages, vectors and cached summaries."""
        def work() -> int:
            found = [i for i in dict.fromkeys(ids) if i in self._sessions]
            for session_id in found:
                del self._sessions[session_id]
                gone = {(session_id, item.message.position)
                        for item in self._messages.pop(session_id, ())}
                for kept in self._vectors.values():
                    for key in gone:
                        kept.pop(key, None)
            if found:
                self._ingests += 1  # what unembedded() remembered is stale
                self._order = None
                self._cache.forget(found)
            return len(found)
        return self._run(work)

    def text_rewriter(self) -> MemoryStore:
        """This store: its texts are rewritten in place (:meth:`rewrite_texts`)."""
        return self

    def rewrite_texts(self, edit: rewrite.Edit, *, dry_run: bool = False
                      ) -> FutureResult[rewrite.RewriteReport, StoreUnavailable]:
        """Apply ``edit`` to every title, message and cached summary (see
        :mod:`harkback.stages.rewrite`); changed sessions are stored again as by ingest."""
        def work() -> rewrite.RewriteReport:
            report, changed = rewrite.RewriteReport(), []
            for session in list(self._sessions.values()):
                old = records.Conversation(session, tuple(
                    i.message for i in self._messages.get(session.id, ())))
                new, counts = rewrite.rewrite_conversation(old, edit)
                report = rewrite.added(report, counts)
                if new is not old:
                    changed.append(new)
            # A summary of a changed session's lineage, or any rerank answer, may paraphrase
            # what was changed (harkback.adapters.stores.sql.lineage_cache): it goes too.
            lineages = with_ancestors((c.session.id for c in changed), self._sessions)
            stale = [key for key, kept in self._cache.entries.items()
                     if key.root_session_id in lineages
                     or (lineages and key.prompt_version.startswith(RANKINGS))
                     or rewrite.changes_summary(edit, key.query, kept.text, kept.note)]
            if not dry_run:
                self._store(changed)
                for key in stale:
                    del self._cache.entries[key]
            return attrs.evolve(report, summaries_dropped=len(stale))
        return self._run(work)

    def optimize(self) -> FutureResult[None, StoreUnavailable]:
        """Nothing to optimise in memory."""
        return self._run(lambda: None)

    def stats(self) -> FutureResult[StoreStats, StoreUnavailable]:
        """What the store holds; nothing on disk and no schema version."""
        def work() -> StoreStats:
            sessions, messages, sources, oldest, newest = count_sessions(
                self._sessions.values(), {k: len(v) for k, v in self._messages.items()})
            return StoreStats(sessions=sessions, messages=messages, sources=sources,
                              oldest=oldest, newest=newest, bytes_on_disk=None,
                              vectors=tuple(sorted((m, len(v)) for m, v in self._vectors.items()
                                                   if v)),
                              cached_summaries=len(self._cache.entries), schema_version=None)
        return self._run(work)

    def source_names(self) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """The sources held, sorted."""
        return self._run(lambda: tuple(sorted({s.source for s in self._sessions.values()})))

    def sessions(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """The sessions with these ids, in the order asked; unknown ids are left out."""
        return self._run(lambda: tuple(
            self._sessions[i] for i in dict.fromkeys(ids) if i in self._sessions))

    def session_links(self, ids: Sequence[str]
                      ) -> FutureResult[tuple[records.SessionLink, ...], StoreUnavailable]:
        """The links of the sessions with these ids, in the order asked (unknown left out)."""
        return self._run(lambda: tuple(records.SessionLink.of(self._sessions[i])
                                       for i in dict.fromkeys(ids) if i in self._sessions))

    def children(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """Sessions whose parent is one of ``ids``, earliest first."""
        wanted = set(ids)
        return self._run(lambda: tuple(sorted(
            (s for s in self._sessions.values() if s.parent_session_id in wanted),
            key=by_start)))

    def recent(self, query: ports.RecentQuery
               ) -> FutureResult[tuple[records.SessionOverview, ...], StoreUnavailable]:
        """Root sessions (no parent, a parent not stored, or the first of a loop of
        parents), newest first; the other sessions instead for ``query.parts``."""
        def work() -> tuple[records.SessionOverview, ...]:
            roots = sorted(
                (s for s in self._sessions.values()
                 if is_root(s, self._sessions) != query.parts
                 and s.id not in query.exclude_roots and in_scope(query, s.source, s.project)
                 and query.admits(s.started_at)),
                key=_newest_key)
            return tuple(self._overview(s) for s in roots[:max(query.limit, 0)])
        return self._run(work)

    def _overview(self, session: records.Session) -> records.SessionOverview:
        items = self._messages[session.id]
        return records.SessionOverview(session=session, message_count=len(items),
                                       preview=first_request((i.message for i in items),
                                                             session.id))

    def ingest(self, conversations: Sequence[records.Conversation]
               ) -> FutureResult[ports.IngestReport, StoreUnavailable]:
        """Store conversations all at once; a session id already stored is replaced."""
        batch = storable(conversations)
        return self._run(lambda: self._store(batch))

    def _store(self, batch: Sequence[records.Conversation]) -> ports.IngestReport:
        replaced = frozenset(c.session.id for c in batch if c.session.id in self._sessions)
        updated = len(replaced)
        written = 0
        self._ingests += 1
        self._order = None
        for conversation in batch:
            session = conversation.session
            self._drop_stale_vectors(conversation)
            self._sessions[session.id] = session
            indexed = []
            for message in conversation.messages:
                indexed.append(Indexed.of(self._next_row_id, message))
                self._next_row_id += 1
            self._messages[session.id] = tuple(indexed)
            written += len(indexed)
        return ports.IngestReport(added=len(batch) - updated, updated=updated, messages=written,
                                  replaced=replaced)

    def ingest_tails(self, tails: Sequence[Tail]
                     ) -> FutureResult[ports.IngestReport | None, StoreUnavailable]:
        """Store the tails of sessions that grew (:class:`~harkback.stages.tails.TailWriter`);
        the messages below a tail keep their row ids, as in the SQLite store."""
        batch = mended_tails(tails)
        return self._run(lambda: self._store_tails(batch))

    def _store_tails(self, tails: Sequence[Tail]) -> ports.IngestReport | None:
        below = {t.conversation.session.id: tuple(sorted((i for i in self._messages.get(
            t.conversation.session.id, ()) if i.message.position < t.since),
            key=lambda i: i.message.position)) for t in tails}
        if any(t.conversation.session.id not in self._sessions
               or tuple(i.message for i in below[t.conversation.session.id]) != t.below
               for t in tails):
            return None
        self._ingests += 1
        self._order = None
        for session, messages in ((t.conversation.session, t.conversation.messages)
                                  for t in tails):
            kept = below[session.id]
            self._drop_stale_vectors(records.Conversation(
                session, (*(i.message for i in kept), *messages)))
            self._sessions[session.id] = session
            self._messages[session.id] = (*kept, *(
                Indexed.of(self._next_row_id + n, m) for n, m in enumerate(messages)))
            self._next_row_id += len(messages)
        return ports.IngestReport(updated=len(tails), replaced=frozenset(below), messages=sum(
            len(t.conversation.messages) for t in tails))

    def _drop_stale_vectors(self, conversation: records.Conversation) -> None:
        # A vector describes its message's content: it goes when the message does or
        # when the content changes (as the SQLite store's triggers do).
        session_id = conversation.session.id
        new = {m.position: m.content for m in conversation.messages}
        stale = [(session_id, item.message.position)
                 for item in self._messages.get(session_id, ())
                 if new.get(item.message.position) != item.message.content]
        for kept in self._vectors.values():
            for key in stale:
                kept.pop(key, None)

    def _stored_order(self) -> list[Indexed]:
        if self._order is None:
            self._order = sorted((item for items in self._messages.values() for item in items),
                                 key=lambda item: item.row_id)
        return self._order
