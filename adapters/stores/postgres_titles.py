"""Title search in the PostgreSQL store: the server ranks the matching titles by a bound of
their BM25, and this process scores exactly only those that can reach the cut.

A hit's score is FTS5's BM25 over the titles alone, as the in-memory store gives it
(:mod:`~harkback.adapters.stores.memory_titles`), computed here from the title's own
tokens (:func:`~harkback.adapters.stores.postgres_search.fit`). Scoring every matching
title so was most of a search at a million messages (2,172 titles, 160-190 ms, for one
question), while the caller keeps 50. So the server computes for each candidate a
*bound* of that score from its ``tsvector``
(:mod:`~harkback.adapters.stores.postgres_title_bounds`: exact for plain words; none for a
vector that may have lost words, so such a title is always read) and sends back only the
titles whose bound reaches the ``limit``-th best bound (less a small margin), with that
cut.

Every title left out has a bound below the cut, so a score below it; when the
``limit``-th best exact score found is above the cut, no title left out could have taken
a place, nor tied for one (ties go to the newer, then the lower id). Otherwise (a phrase's
bound above its score, unbounded titles crowding the best) a second statement reads
every title whose bound reaches that exact score. The hits are those scoring every match
would give: same sessions, order and scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from harkback.adapters.stores import postgres_title_bounds, search_plan
from harkback.adapters.stores.memory_match import idf, units_of
from harkback.adapters.stores.postgres_memo import CountMemo
from harkback.adapters.stores.postgres_search import census, fit, scope_filters
from harkback.adapters.stores.postgres_text import matching
from harkback.adapters.stores.postgres_writes import read_text
from harkback.stages.ports import MatchQuery
from harkback.stages.query import AllOf, Node
from harkback.stages.records import Session, TitleHit

Connection = psycopg.Connection[tuple[Any, ...]]

MARGIN = 1e-9
"""How far (relative) below the ``limit``-th best bound the server still sends titles."""

ROUNDING = 1e-12
"""How far (relative) a bound computed in the server may fall below the score computed
here for the same frequencies: both do the same operations in the same order on doubles
(so none), but the proof should not hang on that."""


def _rounding(value: float) -> float:
    # Relative: every term of the sum is positive, so is each operation's error.
    return ROUNDING * abs(value)


def search_titles(connection: Connection, query: MatchQuery, memo: CountMemo | None = None
                  ) -> tuple[TitleHit, ...]:
    """Sessions whose title, source or project's name matches, best BM25 first, then
    newest, then by id; a unit in more than ``max_scored`` titles selects none."""
    cap = query.max_scored
    (_, _, documents, tokens), counts = census(
        connection, "sessions", search_plan.selecting_units(query.expression), cap, memo)
    common = frozenset(u for u, n in counts.items() if cap is not None and n > cap)
    expression: Node | None = query.expression
    within: Node | None = None
    if common:
        expression = search_plan.narrow(query.expression, common)
        within = None if search_plan.is_disjunction(query.expression) else query.expression
    limit = max(query.limit, 0)
    if expression is None or not documents or not limit:
        return ()
    leaves = units_of(expression)
    selecting = set(search_plan.selecting_units(expression))
    if not any(counts[u] for u in selecting):
        return ()  # a title matches by one of these at least: none holds any
    idfs = [idf(documents, counts[u]) if u in selecting else 0.0 for u in leaves]
    average = tokens / documents
    bound, counted = postgres_title_bounds.bound(leaves, idfs, average)
    matched, values = matching(
        "s", expression if within is None else AllOf((expression, within)))
    scope, scoped = scope_filters(query)
    conditions = [matched, *scope]
    params: list[Any] = [*counted, *values, *scoped]
    for at, operator in ((query.since, ">="), (query.until, "<=")):
        if at is not None:
            conditions.append(f"s.started_at {operator} %s")
            params.append(at)
    found = (f"WITH found AS (SELECT s.id, s.title, s.source, s.started_at, s.project, "
             f"{bound} AS bound FROM sessions AS s WHERE {' AND '.join(conditions)})")

    def scored(rows: Sequence[Sequence[Any]]) -> list[TitleHit]:
        hits = []
        for row in rows:
            session_id, title, source, started_at, project = read_text(row[:5])
            session = Session(id=session_id, title=title, source=source, project=project)
            score = fit(session.text_for_search(), expression, within, leaves, idfs, average)
            if score is not None:
                hits.append(TitleHit(session_id=session_id, title=title, source=source,
                                     started_at=started_at, project=project, score=score))
        hits.sort(key=lambda h: (-h.score, h.started_at is None, -(h.started_at or 0.0),
                                 h.session_id))
        return hits

    # The limit-th best bound, less the margin, is the cut: what reaches it is sent, with
    # every unbounded title, the cut and how many matched.
    rows = connection.execute(
        f"{found}, cut AS (SELECT min(bound) - {MARGIN!r}::float8 * abs(min(bound)) AS below "
        "FROM (SELECT bound FROM found WHERE bound IS NOT NULL ORDER BY bound DESC "
        "LIMIT %s) AS best) "
        "SELECT f.id, f.title, f.source, f.started_at, f.project, cut.below, "
        "(SELECT count(*) FROM found) FROM found AS f, cut "
        "WHERE f.bound IS NULL OR f.bound >= cut.below", [*params, limit]).fetchall()
    hits = scored(rows)
    if not rows or len(rows) == rows[0][6] or (
            rows[0][5] is not None and len(hits) >= limit
            and hits[limit - 1].score > rows[0][5] + _rounding(rows[0][5])):
        return tuple(hits[:limit])
    # Not proven: every title whose bound reaches the limit-th exact score found (all
    # that matched, if fewer were found).
    reach = (hits[limit - 1].score - _rounding(hits[limit - 1].score) if len(hits) >= limit
             else float("-inf"))
    rows = connection.execute(
        f"{found} SELECT id, title, source, started_at, project FROM found "
        "WHERE bound IS NULL OR bound >= %s", [*params, reach]).fetchall()
    return tuple(scored(rows)[:limit])
