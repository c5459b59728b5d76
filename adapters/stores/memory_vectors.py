"""The memory store's vectors: what the hybrid ranker embeds and searches, in this process.

:class:`MemoryVectors` is the :class:`~harkback.stages.ports.VectorStore` half of
:class:`~harkback.adapters.stores.memory.MemoryStore`, kept apart so that each module holds
one concept; it works on the store's own dictionaries, which the store declares.

>>> import asyncio
>>> from harkback.adapters.stores.memory import MemoryStore
>>> asyncio.run(MemoryStore().vector_store().vector_count("e5").awaitable())
<IOResult: <Success: 0>>
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import TypeVar

from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters.stores.memory_match import Indexed, admits
from harkback.adapters.stores.sql.vectors import (
    StartKey,
    query_vector_problem,
    start_key,
    unit_vector,
    vector_problem,
)
from harkback.stages import ports, records
from harkback.stages.embedding import BLANK
from harkback.stages.errors import StoreUnavailable

T = TypeVar("T")


class MemoryVectors:
    """Message vectors by model, kept beside the memory store's messages."""

    _sessions: dict[str, records.Session]
    _messages: dict[str, tuple[Indexed, ...]]
    _vectors: dict[str, dict[tuple[str, int], ports.Vector]]
    _ingests: int
    _starts: dict[StartKey, tuple[int, int]]

    def _run(self, work: Callable[[], T]) -> FutureResult[T, StoreUnavailable]:
        raise NotImplementedError

    def _run_checked(self, work: Callable[[], Result[T, StoreUnavailable]]
                     ) -> FutureResult[T, StoreUnavailable]:
        raise NotImplementedError

    def _stored_order(self) -> list[Indexed]:
        raise NotImplementedError

    def _hit(self, item: Indexed, score: float) -> records.MessageHit:
        raise NotImplementedError

    def unembedded(self, model: str, roles: tuple[records.Role, ...], limit: int, *,
                   sessions: Sequence[str] | None = None
                   ) -> FutureResult[tuple[records.Message, ...], StoreUnavailable]:
        """Up to ``limit`` messages of ``roles`` (of ``sessions`` only, when given) with
        non-blank content and no vector of ``model``, in stored (ingest) order."""
        wanted = None if sessions is None else frozenset(sessions)
        return self._run(lambda: self._unembedded(model, roles, limit, wanted))

    def _unembedded(self, model: str, roles: tuple[records.Role, ...], limit: int,
                    sessions: frozenset[str] | None) -> tuple[records.Message, ...]:
        if limit < 1:
            return ()
        order = self._stored_order()
        have = self._vectors.get(model, {})
        # Messages before ``start`` had a vector or were not eligible at the last call;
        # only an ingest can change that (see the SQLite store). One hint for a set of
        # sessions at a time: a watch asks for another set each round.
        key = start_key(model, roles, sessions, self._starts)
        ingests, start = self._starts.get(key, (-1, 0))
        found: list[records.Message] = []
        first = len(order)
        for index in range(start if ingests == self._ingests else 0, len(order)):
            message = order[index].message
            if (message.role in roles and message.content.strip(BLANK)
                    and (sessions is None or message.session_id in sessions)
                    and (message.session_id, message.position) not in have):
                first = min(first, index)
                found.append(message)
                if len(found) >= limit:
                    break
        self._starts[key] = (self._ingests, first)
        return tuple(found)

    def keep_vectors(self, model: str, vectors: Sequence[tuple[ports.MessageKey, ports.Vector]]
                     ) -> FutureResult[int, StoreUnavailable]:
        """Store vectors of ``model`` (replacing older ones), scaled to unit length; returns
        how many messages gained one (a replaced vector is not counted again). Keys of
        messages not stored are skipped; vectors of another length than the model's stored
        ones fail the whole batch."""
        pairs = tuple(vectors)

        def work() -> Result[int, StoreUnavailable]:
            kept = self._vectors.get(model, {})
            stored = len(next(iter(kept.values()))) if kept else None
            problem = vector_problem(model, [vector for _, vector in pairs], stored)
            if problem is not None:
                return Failure(StoreUnavailable(problem))
            sessions = {key.session_id for key, _ in pairs}
            present = {(item.message.session_id, item.message.position): item.message.content
                       for session_id in sessions for item in self._messages.get(session_id, ())}
            # A key's content, when given, must still be the message's (see MessageKey).
            latest = {(key.session_id, key.position): unit_vector(vector)
                      for key, vector in pairs
                      if (key.session_id, key.position) in present
                      and key.content in (None, present[key.session_id, key.position])}
            gained = sum(1 for place in latest if place not in kept)
            if latest:
                self._vectors.setdefault(model, {}).update(latest)
            return Success(gained)
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

    def drop_vectors(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """Remove every vector of ``model``; how many there were."""
        return self._run(lambda: len(self._vectors.pop(model, {})))

    def holds_vectors(self, model: str) -> FutureResult[bool, StoreUnavailable]:
        """Whether any message has a vector of ``model``."""
        return self._run(lambda: bool(self._vectors.get(model)))
