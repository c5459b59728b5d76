"""Title search in the in-memory store: the SQLite store's title index, in plain Python.

Each session's title, source and project's name are tokenised as the SQLite store indexes them
(:meth:`~harkback.stages.records.Session.text_for_search`, :func:`index_tokens`), and
scored with FTS5's BM25 over the sessions' titles alone.

>>> from harkback.stages.query import parse_query
>>> sessions = (Session(id="a", title="CORS fix for the API"), Session(id="b", title="lunch"))
>>> query = MatchQuery(expression=parse_query("CORS API").expression, roles=("user",))
>>> [hit.session_id for hit in search_titles(sessions, query)]
['a']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from harkback.adapters.stores import search_plan
from harkback.adapters.stores.memory_match import bm25, idf, occurrences, units_of
from harkback.stages.ports import MatchQuery, RecentQuery
from harkback.stages.query import Node, evaluate
from harkback.stages.records import Session, TitleHit
from harkback.stages.scope import in_scope
from harkback.stages.text.tokens import index_tokens


def search_titles(sessions: Iterable[Session], query: MatchQuery) -> tuple[TitleHit, ...]:
    """Sessions whose title, source or project's name matches, best BM25 first, then
    newest, then by id.

    Hidden sources are left out and ``since``/``until`` bound the session's start (as
    :meth:`~harkback.stages.ports.RecentQuery.admits` reads it); roles do not apply; a unit
    in more than ``max_scored`` titles selects none.
    """
    indexed = [(s, index_tokens(s.text_for_search())) for s in sessions]
    if not indexed:
        return ()
    # Units in more than max_scored titles select none, as in the SQLite store.
    cap = query.max_scored
    common = frozenset() if cap is None else frozenset(
        unit for unit in search_plan.selecting_units(query.expression)
        if sum(1 for _, toks in indexed if evaluate(unit, toks)) > cap)
    expression: Node = query.expression
    within: Node | None = None
    if common:
        narrowed = search_plan.narrow(query.expression, common)
        if narrowed is None:
            return ()
        expression = narrowed
        within = None if search_plan.is_disjunction(query.expression) else query.expression
    leaves = units_of(expression)
    frequencies = [[occurrences(u, toks, Counter(toks)) for u in leaves] for _, toks in indexed]
    idfs = [idf(len(indexed), sum(1 for f in frequencies if f[i])) for i in range(len(leaves))]
    average = sum(len(toks) for _, toks in indexed) / len(indexed)
    bounds = RecentQuery(limit=1, since=query.since, until=query.until)
    found = [
        TitleHit(session_id=session.id, title=session.title, source=session.source,
                 started_at=session.started_at, project=session.project,
                 score=bm25(counts, idfs, len(toks), average))
        for (session, toks), counts in zip(indexed, frequencies, strict=True)
        if in_scope(query, session.source, session.project) and bounds.admits(session.started_at)
        and evaluate(expression, toks) and (within is None or evaluate(within, toks))]
    found.sort(key=lambda hit: (-hit.score, hit.started_at is None, -(hit.started_at or 0.0),
                                hit.session_id))
    return tuple(found[:max(query.limit, 0)])
