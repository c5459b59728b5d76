"""Title search in the PostgreSQL store: the server ranks the matching titles by a bound of
their BM25, and this process scores exactly only those that can reach the cut.

A hit's score is FTS5's BM25 over the titles alone, as the in-memory store gives it
(:mod:`~harkback.adapters.stores.memory_titles`), computed here from the title's own
tokens (:func:`~harkback.adapters.stores.postgres_search.fit`). Scoring every matching
title so was most of a search at a million messages (2,172 titles, 160-190 ms, for one
question), while the caller keeps 50. So the server computes for each candidate a
*bound* of that score from its ``tsvector``: BM25 with each term's frequency counted from
the lexeme's positions (exact), a phrase's taken as its least frequent word's (never
less than the phrase's count), the title's length and the idfs this process counted. A
candidate whose vector may have lost positions or cut a word (as
:func:`~harkback.adapters.stores.postgres_scoring.complete` tells) has no bound: it is
always read. The server sends back only the titles whose bound reaches the ``limit``-th
best bound (less a small margin), with that cut.

Every title left out has a bound below the cut, so a score below it; when the
``limit``-th best exact score found is above the cut, no title left out could have taken
a place, nor tied for one (ties go to the newer, then the lower id). Otherwise (a phrase's
bound above its score, unbounded titles crowding the best) a second statement reads
every title whose bound reaches that exact score. The hits are those scoring every match
would give: same sessions, order and scores.

>>> from harkback.stages.query import Phrase
>>> _, words, bound, weights = bound_terms(
...     [Term("cors"), Phrase(("api", "key"), prefix=True)], [2.0, 1.5], 4.0)
>>> words, weights, "LEAST(w.f1, w.f2)" in bound
(['cors', 'api', 'key', 4.0], [2.0, 1.5], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from harkback.adapters.stores import search_plan
from harkback.adapters.stores.memory_match import idf, units_of
from harkback.adapters.stores.postgres_memo import CountMemo
from harkback.adapters.stores.postgres_search import census, fit, scope_filters
from harkback.adapters.stores.postgres_text import MAX_LEXEME_CHARS, MAX_POSITION, matching
from harkback.adapters.stores.postgres_writes import read_text
from harkback.stages.match.score import K1, B
from harkback.stages.ports import MatchQuery
from harkback.stages.query import AllOf, Node, Term, Unit
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


def bound_terms(leaves: Sequence[Unit], idfs: Sequence[float], average: float
                ) -> tuple[str, list[Any], str, list[Any]]:
    """The lateral join counting each query word's positions in a candidate ``s``'s
    vector, its values, the BM25 bound over it (NULL for a vector that may have lost
    words), its values."""
    words: dict[tuple[str, bool], int] = {}

    def column(text: str, prefix: bool) -> str:
        return f"w.f{words.setdefault((text, prefix), len(words))}"

    parts: list[str] = []
    weights: list[Any] = []
    for unit, weight in zip(leaves, idfs, strict=True):
        if not weight:  # an excluded unit: never in a match, weighs nothing
            continue
        if isinstance(unit, Term):
            frequency = column(unit.text, unit.prefix)
        else:
            last = len(unit.terms) - 1
            frequency = "LEAST(" + ", ".join(
                column(t, unit.prefix and i == last) for i, t in enumerate(unit.terms)) + ")"
        # The terms of memory_match.bm25, in its order, so both round alike.
        parts.append(f"%s * ({frequency} * {K1 + 1!r}::float8) / ({frequency} + norm.value)")
        weights.append(weight)
    counts = "".join(
        f", COALESCE(sum(cardinality(u.positions)) FILTER (WHERE u.lexeme "
        f"{'^@' if prefix else '='} %s), 0)::float8 AS f{i}"
        for (_, prefix), i in words.items())
    lateral = (
        "CROSS JOIN LATERAL (SELECT sum(cardinality(u.positions)) AS stored, "
        f"max(length(u.lexeme)) AS longest{counts} FROM unnest(s.tokens) AS u) AS w "
        "CROSS JOIN LATERAL (SELECT "
        + (f"{K1!r}::float8 * (1::float8 - {B!r}::float8 + {B!r}::float8 * s.length "
           "/ %s::float8)" if average else f"{K1!r}::float8")
        + " AS value) AS norm")
    score = " + ".join(parts) if parts else "0::float8"
    bound = (f"CASE WHEN s.length <= {MAX_POSITION} AND w.stored = s.length "
             f"AND w.longest < {MAX_LEXEME_CHARS} THEN {score} END")
    return lateral, [text for text, _ in words] + ([average] if average else []), bound, weights


def search_titles(connection: Connection, query: MatchQuery, memo: CountMemo | None = None
                  ) -> tuple[TitleHit, ...]:
    """Sessions whose title or source matches, best BM25 first, then newest, then by id;
    a unit in more than ``max_scored`` titles selects none."""
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
    idfs = [idf(documents, counts[u]) if u in selecting else 0.0 for u in leaves]
    average = tokens / documents
    lateral, counted, bound, weights = bound_terms(leaves, idfs, average)
    matched, values = matching(
        "s", expression if within is None else AllOf((expression, within)))
    scope, scoped = scope_filters(query)
    conditions = [matched, *scope]
    params: list[Any] = [*weights, *counted, *values, *scoped]
    for at, operator in ((query.since, ">="), (query.until, "<=")):
        if at is not None:
            conditions.append(f"s.started_at {operator} %s")
            params.append(at)
    found = (f"WITH found AS (SELECT s.id, s.title, s.source, s.started_at, "
             f"{bound} AS bound FROM sessions AS s {lateral} WHERE {' AND '.join(conditions)})")

    def scored(rows: Sequence[Sequence[Any]]) -> list[TitleHit]:
        hits = []
        for row in rows:
            session_id, title, source, started_at = read_text(row[:4])
            score = fit(Session(id=session_id, title=title, source=source).text_for_search(),
                        expression, within, leaves, idfs, average)
            if score is not None:
                hits.append(TitleHit(session_id=session_id, title=title, source=source,
                                     started_at=started_at, score=score))
        hits.sort(key=lambda h: (-h.score, h.started_at is None, -(h.started_at or 0.0),
                                 h.session_id))
        return hits

    # The limit-th best bound, less the margin, is the cut: what reaches it is sent, with
    # every unbounded title, the cut and how many matched.
    rows = connection.execute(
        f"{found}, cut AS (SELECT min(bound) - {MARGIN!r}::float8 * abs(min(bound)) AS below "
        "FROM (SELECT bound FROM found WHERE bound IS NOT NULL ORDER BY bound DESC "
        "LIMIT %s) AS best) "
        "SELECT f.id, f.title, f.source, f.started_at, cut.below, "
        "(SELECT count(*) FROM found) FROM found AS f, cut "
        "WHERE f.bound IS NULL OR f.bound >= cut.below", [*params, limit]).fetchall()
    hits = scored(rows)
    if not rows or len(rows) == rows[0][5] or (
            rows[0][4] is not None and len(hits) >= limit
            and hits[limit - 1].score > rows[0][4] + _rounding(rows[0][4])):
        return tuple(hits[:limit])
    # Not proven: every title whose bound reaches the limit-th exact score found (all
    # that matched, if fewer were found).
    reach = (hits[limit - 1].score - _rounding(hits[limit - 1].score) if len(hits) >= limit
             else float("-inf"))
    rows = connection.execute(
        f"{found} SELECT id, title, source, started_at FROM found "
        "WHERE bound IS NULL OR bound >= %s", [*params, reach]).fetchall()
    return tuple(scored(rows)[:limit])
