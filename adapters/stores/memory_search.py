"""The memory store's full-text search: messages by BM25 (bounded as the SQLite store's
search is, :mod:`~harkback.adapters.stores.search_plan`), titles and sources, and the
index statistics the ranker reads.

:class:`MemorySearch` is that part of :class:`~harkback.adapters.stores.memory.MemoryStore`,
kept apart so that each module holds one concept; it reads the store's own dictionaries,
which the store declares.

>>> import asyncio
>>> from harkback.adapters.stores.memory import MemoryStore
>>> asyncio.run(MemoryStore().term_stats(["bridge"]).awaitable())
<IOResult: <Success: TermStats(documents=0, average_length=0.0, counts=(), prefix_counts=())>>
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TypeVar

from returns.future import FutureResult

from harkback.adapters.stores import search_plan
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
from harkback.stages import long_text, ports, records
from harkback.stages.errors import StoreUnavailable
from harkback.stages.query import Node, evaluate

T = TypeVar("T")


class MemorySearch:
    """Searches of the memory store's messages and titles, scored as FTS5 scores them."""

    _sessions: dict[str, records.Session]
    _messages: dict[str, tuple[Indexed, ...]]

    def _run(self, work: Callable[[], T]) -> FutureResult[T, StoreUnavailable]:
        raise NotImplementedError

    def term_stats(self, terms: Sequence[str], prefixes: Sequence[str] = ()
                   ) -> FutureResult[ports.TermStats, StoreUnavailable]:
        """Index statistics counted over every stored message, as FTS5 keeps them; a
        prefix counts the messages holding a token that starts with it."""
        def work() -> ports.TermStats:
            every = [item for items in self._messages.values() for item in items]
            wanted = dict.fromkeys(terms)
            counts = Counter(t for item in every for t in item.counts if t in wanted)
            starts = dict.fromkeys(p for p in prefixes if p)
            prefixed = Counter(p for item in every for p in starts
                               if any(t.startswith(p) for t in item.counts))
            length = sum(len(item.tokens) for item in every)
            return ports.TermStats(documents=len(every),
                                   average_length=length / len(every) if every else 0.0,
                                   counts=tuple((t, counts[t]) for t in wanted if counts[t]),
                                   prefix_counts=tuple((p, prefixed[p]) for p in starts
                                                       if prefixed[p]))
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
        barred = self._excluded(query, every)
        if cap is None:
            return tuple(hit for _, hit in self._scored(query, query.expression, every, barred))
        common = frozenset(
            unit for unit in search_plan.selecting_units(query.expression)
            if sum(1 for item in every if evaluate(unit, item.tokens)) > cap)
        if not common:
            return tuple(hit for _, hit in self._scored(query, query.expression, every, barred))
        hits: list[tuple[int, records.MessageHit]] = []
        narrowed = search_plan.narrow(query.expression, common)
        if narrowed is not None:
            within = None if search_plan.is_disjunction(query.expression) else query.expression
            hits = self._scored(query, narrowed, every, barred, within=within)
        taken = {row_id for row_id, _ in hits}
        for item in sorted(every, key=lambda item: -item.row_id):
            if len(hits) >= query.limit:
                break
            if (item.row_id not in taken and item.message.session_id not in barred
                    and self._matches(query, query.expression, item)):
                hits.append((item.row_id, self._hit(item, 0.0)))
        return tuple(hit for _, hit in hits)

    @staticmethod
    def _excluded(query: ports.MatchQuery, every: Sequence[Indexed]) -> frozenset[str]:
        """The sessions the query's ``excluded`` part leaves out (a message of its roles
        matches it, whenever written), and those it names (``exclude_sessions``)."""
        if query.excluded is None:
            return frozenset(query.exclude_sessions)
        return frozenset(query.exclude_sessions).union(
            item.message.session_id for item in every
            if item.message.role in query.roles and evaluate(query.excluded, item.tokens))

    def _matches(self, query: ports.MatchQuery, expression: Node, item: Indexed) -> bool:
        message = item.message
        return (admits(query, message, self._sessions[message.session_id])
                and evaluate(expression, item.tokens))

    def _hit(self, item: Indexed, score: float) -> records.MessageHit:
        message = item.message
        session = self._sessions[message.session_id]
        # As the other stores read it: the start of a huge text, and its whole length.
        text, cut = long_text.read_start(message.text_for_search(), long_text.LONGEST_READ)
        return records.MessageHit(session_id=message.session_id, position=message.position,
                                  role=message.role, content=text, score=score,
                                  timestamp=written_at(message, session), source=session.source,
                                  length=len(item.tokens) if cut else None)

    def _scored(self, query: ports.MatchQuery, expression: Node, every: Sequence[Indexed],
                barred: frozenset[str], *, within: Node | None = None
                ) -> list[tuple[int, records.MessageHit]]:
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
            if message.session_id in barred or not admits(query, message, session):
                continue
            if not evaluate(expression, item.tokens):
                continue
            if within is not None and not evaluate(within, item.tokens):
                continue
            score = bm25(frequencies[item.row_id], idfs, len(item.tokens), average)
            scored.append((score, item.row_id, self._hit(item, score)))
        scored.sort(key=lambda entry: (-entry[0], entry[1]))
        return [(row_id, hit) for _, row_id, hit in scored[:max(query.limit, 0)]]
