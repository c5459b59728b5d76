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

import operator
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters.stores import search_plan
from harkback.adapters.stores.import_ledger import MemoryImportLedger
from harkback.adapters.stores.memory_match import (
    Indexed,
    admits,
    bm25,
    idf,
    occurrences,
    units_of,
    written_at,
)
from harkback.adapters.stores.memory_titles import search_titles
from harkback.adapters.stores.sql.rows import preview
from harkback.adapters.stores.sql.vectors import query_vector_problem, unit_vector, vector_problem
from harkback.adapters.stores.summary_cache import MemorySummaryCache
from harkback.stages import ports, records
from harkback.stages.embedding import BLANK
from harkback.stages.errors import StoreUnavailable
from harkback.stages.query import Node, evaluate
from harkback.stages.stats import StoreStats, count_sessions

T = TypeVar("T")


def _start_key(session: records.Session) -> tuple[bool, float, str]:
    return (session.started_at is None, session.started_at or 0.0, session.id)


def _newest_key(session: records.Session) -> tuple[bool, float, str]:
    return (session.started_at is None, -(session.started_at or 0.0), session.id)


class MemoryStore:
    """A :class:`~harkback.stages.ports.SessionStore` and
    :class:`~harkback.stages.ports.VectorStore` held in this process's memory."""

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
        self._starts: dict[tuple[str, tuple[records.Role, ...]], tuple[int, int]] = {}
        self._cache = MemorySummaryCache()
        self._ledger = MemoryImportLedger()

    def _run(self, work: Callable[[], T]) -> FutureResult[T, StoreUnavailable]:
        return self._run_checked(lambda: Success(work()))

    def _run_checked(self, work: Callable[[], Result[T, StoreUnavailable]]
                     ) -> FutureResult[T, StoreUnavailable]:
        # Lazy like the SQLite store: nothing happens until the result is awaited.
        async def call() -> Result[T, StoreUnavailable]:
            return work()
        awaitable: Awaitable[Result[T, StoreUnavailable]] = call()
        return FutureResult(awaitable)

    def close(self) -> None:
        """Nothing to release: the sessions stay until the store is garbage."""

    def vector_store(self) -> MemoryStore:
        """This store: it keeps vectors beside the messages."""
        return self

    def summary_cache(self) -> MemorySummaryCache:
        """A cache that lives as long as this store."""
        return self._cache

    def import_ledger(self) -> MemoryImportLedger:
        """A ledger that lives as long as this store."""
        return self._ledger

    def optimize(self) -> FutureResult[None, StoreUnavailable]:
        """Nothing to optimise in memory."""
        return FutureResult.from_value(None)

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

    def term_stats(self, terms: Sequence[str]) -> FutureResult[ports.TermStats, StoreUnavailable]:
        """Index statistics counted over every stored message, as FTS5 keeps them."""
        def work() -> ports.TermStats:
            every = [item for items in self._messages.values() for item in items]
            wanted = dict.fromkeys(terms)
            counts = Counter(t for item in every for t in item.counts if t in wanted)
            length = sum(len(item.tokens) for item in every)
            return ports.TermStats(documents=len(every),
                                   average_length=length / len(every) if every else 0.0,
                                   counts=tuple((t, counts[t]) for t in wanted if counts[t]))
        return self._run(work)

    def search(self, query: ports.MatchQuery
               ) -> FutureResult[tuple[records.MessageHit, ...], StoreUnavailable]:
        """Messages matching the query, best BM25 first, bounded as the SQLite store is."""
        return self._run(lambda: self._bounded(query))

    def search_titles(self, query: ports.MatchQuery
                      ) -> FutureResult[tuple[records.TitleHit, ...], StoreUnavailable]:
        """Sessions whose title or source matches, best BM25 first, as the SQLite store's."""
        return self._run(lambda: search_titles(self._sessions.values(), query))

    def _bounded(self, query: ports.MatchQuery) -> tuple[records.MessageHit, ...]:
        # The same plan as the SQLite store (adapters/stores/search_plan.py), so results agree.
        cap = query.max_scored
        every = [item for items in self._messages.values() for item in items]
        if cap is None:
            return tuple(hit for _, hit in self._scored(query, query.expression, every))
        common = frozenset(
            unit for unit in search_plan.selecting_units(query.expression)
            if sum(1 for item in every if evaluate(unit, item.tokens)) > cap)
        if not common:
            return tuple(hit for _, hit in self._scored(query, query.expression, every))
        hits: list[tuple[int, records.MessageHit]] = []
        narrowed = search_plan.narrow(query.expression, common)
        if narrowed is not None:
            within = None if search_plan.is_disjunction(query.expression) else query.expression
            hits = self._scored(query, narrowed, every, within=within)
        taken = {row_id for row_id, _ in hits}
        for item in sorted(every, key=lambda item: -item.row_id):
            if len(hits) >= query.limit:
                break
            if item.row_id not in taken and self._matches(query, query.expression, item):
                hits.append((item.row_id, self._hit(item, 0.0)))
        return tuple(hit for _, hit in hits)

    def _matches(self, query: ports.MatchQuery, expression: Node, item: Indexed) -> bool:
        message = item.message
        return (admits(query, message, self._sessions[message.session_id])
                and evaluate(expression, item.tokens))

    def _hit(self, item: Indexed, score: float) -> records.MessageHit:
        message = item.message
        session = self._sessions[message.session_id]
        return records.MessageHit(session_id=message.session_id, position=message.position,
                                  role=message.role, content=message.content, score=score,
                                  timestamp=written_at(message, session), source=session.source)

    def _scored(self, query: ports.MatchQuery, expression: Node, every: Sequence[Indexed], *,
                within: Node | None = None) -> list[tuple[int, records.MessageHit]]:
        """Row ids and hits matching ``expression`` (and ``within``), best BM25 first."""
        if not every:
            return []
        leaves = units_of(expression)
        frequencies = {item.row_id: [occurrences(u, item.tokens, item.counts) for u in leaves]
                       for item in every}
        idfs = [idf(len(every), sum(1 for f in frequencies.values() if f[i]))
                for i in range(len(leaves))]
        average = sum(len(item.tokens) for item in every) / len(every)
        scored: list[tuple[float, int, records.MessageHit]] = []
        for item in every:
            message = item.message
            session = self._sessions[message.session_id]
            if not admits(query, message, session):
                continue
            if not evaluate(expression, item.tokens):
                continue
            if within is not None and not evaluate(within, item.tokens):
                continue
            score = bm25(frequencies[item.row_id], idfs, len(item.tokens), average)
            scored.append((score, item.row_id, self._hit(item, score)))
        scored.sort(key=lambda entry: (-entry[0], entry[1]))
        return [(row_id, hit) for _, row_id, hit in scored[:max(query.limit, 0)]]

    def sessions(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """The sessions with these ids, in the order asked; unknown ids are left out."""
        return self._run(lambda: tuple(
            self._sessions[i] for i in dict.fromkeys(ids) if i in self._sessions))

    def children(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """Sessions whose parent is one of ``ids``, earliest first."""
        wanted = set(ids)
        return self._run(lambda: tuple(sorted(
            (s for s in self._sessions.values() if s.parent_session_id in wanted),
            key=_start_key)))

    def messages(self, session_ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Message, ...], StoreUnavailable]:
        """All messages of these sessions, in session start order then position."""
        def work() -> tuple[records.Message, ...]:
            found = sorted((self._sessions[i] for i in set(session_ids) if i in self._sessions),
                           key=_start_key)
            return tuple(item.message for session in found
                         for item in sorted(self._messages[session.id],
                                            key=lambda item: item.message.position))
        return self._run(work)

    def recent(self, query: ports.RecentQuery
               ) -> FutureResult[tuple[records.SessionOverview, ...], StoreUnavailable]:
        """Root sessions (no parent, or a parent not stored), newest first."""
        def work() -> tuple[records.SessionOverview, ...]:
            roots = sorted(
                (s for s in self._sessions.values()
                 if (s.parent_session_id is None or s.parent_session_id not in self._sessions)
                 and s.id not in query.exclude_roots and s.source not in query.hidden_sources
                 and query.admits(s.started_at)),
                key=_newest_key)
            return tuple(self._overview(s) for s in roots[:max(query.limit, 0)])
        return self._run(work)

    def _overview(self, session: records.Session) -> records.SessionOverview:
        items = sorted(self._messages[session.id], key=lambda item: item.message.position)
        first = next((i.message.content for i in items if i.message.role == "user"), "")
        return records.SessionOverview(session=session, message_count=len(items),
                                       preview=preview(first))

    def ingest(self, conversations: Sequence[records.Conversation]
               ) -> FutureResult[ports.IngestReport, StoreUnavailable]:
        """Store conversations all at once; a session id already stored is replaced."""
        batch = tuple({c.session.id: c for c in conversations}.values())
        return self._run(lambda: self._store(batch))

    def _store(self, batch: Sequence[records.Conversation]) -> ports.IngestReport:
        updated = sum(1 for c in batch if c.session.id in self._sessions)
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
        return ports.IngestReport(added=len(batch) - updated, updated=updated, messages=written)

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

    def unembedded(self, model: str, roles: tuple[records.Role, ...], limit: int
                   ) -> FutureResult[tuple[records.Message, ...], StoreUnavailable]:
        """Up to ``limit`` messages of ``roles`` with non-blank content and no vector of
        ``model``, in stored (ingest) order."""
        return self._run(lambda: self._unembedded(model, roles, limit))

    def _unembedded(self, model: str, roles: tuple[records.Role, ...], limit: int
                    ) -> tuple[records.Message, ...]:
        if limit < 1:
            return ()
        order = self._stored_order()
        have = self._vectors.get(model, {})
        # Messages before ``start`` had a vector or were not eligible at the last call;
        # only an ingest can change that (see the SQLite store).
        ingests, start = self._starts.get((model, roles), (-1, 0))
        found: list[records.Message] = []
        first = len(order)
        for index in range(start if ingests == self._ingests else 0, len(order)):
            message = order[index].message
            if (message.role in roles and message.content.strip(BLANK)
                    and (message.session_id, message.position) not in have):
                first = min(first, index)
                found.append(message)
                if len(found) >= limit:
                    break
        self._starts[(model, roles)] = (self._ingests, first)
        return tuple(found)

    def keep_vectors(self, model: str, vectors: Sequence[tuple[ports.MessageKey, ports.Vector]]
                     ) -> FutureResult[int, StoreUnavailable]:
        """Store vectors of ``model`` (replacing older ones), scaled to unit length; returns
        how many were kept. Keys of messages not stored are skipped; vectors of another
        length than the model's stored ones fail the whole batch."""
        pairs = tuple(vectors)

        def work() -> Result[int, StoreUnavailable]:
            kept = self._vectors.get(model, {})
            stored = len(next(iter(kept.values()))) if kept else None
            problem = vector_problem(model, [vector for _, vector in pairs], stored)
            if problem is not None:
                return Failure(StoreUnavailable(problem))
            sessions = {key.session_id for key, _ in pairs}
            present = {(item.message.session_id, item.message.position)
                       for session_id in sessions for item in self._messages.get(session_id, ())}
            latest = {(key.session_id, key.position): unit_vector(vector)
                      for key, vector in pairs
                      if (key.session_id, key.position) in present}
            if latest:
                self._vectors.setdefault(model, {}).update(latest)
            return Success(len(latest))
        return self._run_checked(work)

    def nearest(self, query: ports.NearestQuery
                ) -> FutureResult[tuple[records.MessageHit, ...], StoreUnavailable]:
        """Messages whose vectors of ``query.model`` are nearest the query's, best first
        (ties in stored order); ``score`` is the cosine similarity."""
        def work() -> Result[tuple[records.MessageHit, ...], StoreUnavailable]:
            kept = self._vectors.get(query.model, {})
            if not kept:
                return Success(())
            problem = query_vector_problem(query, len(next(iter(kept.values()))))
            if problem is not None:
                return Failure(StoreUnavailable(problem))
            target = unit_vector(query.vector)
            scored: list[tuple[float, int, records.MessageHit]] = []
            for item in self._stored_order():
                message = item.message
                vector = kept.get((message.session_id, message.position))
                if vector is None or not admits(query, message,
                                                self._sessions[message.session_id]):
                    continue
                score = sum(map(operator.mul, vector, target))
                scored.append((score, item.row_id, self._hit(item, score)))
            scored.sort(key=lambda entry: (-entry[0], entry[1]))
            return Success(tuple(hit for _, _, hit in scored[:query.limit]))
        return self._run_checked(work)

    def vector_count(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """How many messages have a vector of ``model``."""
        return self._run(lambda: len(self._vectors.get(model, {})))
