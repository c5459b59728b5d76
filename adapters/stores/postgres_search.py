"""Full-text search in the PostgreSQL store: bounded searches scored with FTS5's BM25, and
term statistics, so both stores rank one corpus alike.

The GIN index finds the candidates (``tokens @@ tsquery``) and the filters run in SQL;
each candidate is then scored in this process exactly as FTS5's ``bm25()`` scores it
(:mod:`~harkback.adapters.stores.memory_match`): term frequencies over the message's own
index tokens, inverse document frequencies over the whole index, lengths from the totals
every ingest keeps. ``max_scored`` bounds the work as in the SQLite store
(:mod:`~harkback.adapters.stores.search_plan`): a unit found in more messages than that
selects and scores nothing, and the newest other matches fill up with score 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import psycopg

from harkback.adapters.stores import (
    postgres_catch_up,
    postgres_scoring,
    postgres_statistics,
    search_plan,
)
from harkback.adapters.stores.memory_match import bm25, idf, occurrences, units_of
from harkback.adapters.stores.postgres_catch_up import Sizes
from harkback.adapters.stores.postgres_memo import CountMemo, Snapshot
from harkback.adapters.stores.postgres_text import matching, restore, storable, tsquery
from harkback.adapters.stores.postgres_writes import MESSAGE_COLUMNS, stored_message
from harkback.stages.long_text import LONGEST_READ, read_start
from harkback.stages.ports import (
    DEFAULT_MAX_SCORED,
    MatchQuery,
    NearestQuery,
    RecentQuery,
    TermStats,
)
from harkback.stages.query import AllOf, Node, Term, Unit, evaluate
from harkback.stages.records import MessageHit
from harkback.stages.text.tokens import index_tokens

Connection = psycopg.Connection[tuple[Any, ...]]

EXACT_COUNT_LIMIT = 4 * DEFAULT_MAX_SCORED
END_SAMPLE = 256
"""As the SQLite store: counts are exact up to the limit, estimated above from the
``END_SAMPLE`` newest and oldest matches (the same estimate, over the same row ids)."""

WRITTEN = "COALESCE(m.timestamp, s.started_at)"

HIT_COLUMNS = (", ".join(f"m.{c}" for c in MESSAGE_COLUMNS.split(", ")).replace(
    # Twice the characters read: a stored NUL takes two (postgres_text); one more shows
    # that a text is longer.
    "m.content", f"substr(m.content, 1, {2 * LONGEST_READ + 1})", 1)
               + f", {WRITTEN}, s.source, m.id, m.length")
"""A candidate's columns: the message's (of its content no more than a hit reads), when it
was written, its source, its row id, its length in tokens."""

def scope_filters(query: MatchQuery | NearestQuery | RecentQuery) -> tuple[list[str], list[Any]]:
    """The query's hidden sources, and the sources and projects asked for, over ``s``
    (:func:`~harkback.stages.scope.in_scope` in SQL).

    >>> scope_filters(RecentQuery(limit=1, projects=("api/",)))[1]
    [[], ['api']]
    """
    conditions, params = ["s.source <> ALL(%s::text[])"], [[storable(s) for s in
                                                            query.hidden_sources]]
    if query.sources:
        conditions.append("s.source = ANY(%s::text[])")
        params.append([storable(s) for s in query.sources])
    if query.projects:
        conditions.append("EXISTS (SELECT 1 FROM unnest(%s::text[]) AS p(folder) "
                          "WHERE rtrim(s.project, '/') = p.folder "
                          "OR right(rtrim(s.project, '/'), length(p.folder) + 1) "
                          "= '/' || p.folder)")
        params.append([storable(p.rstrip("/")) for p in query.projects if p.rstrip("/")])
    return conditions, params


def row_filters(query: MatchQuery | NearestQuery) -> tuple[str, list[Any]]:
    """The query's roles, sources, projects and time bounds over ``m`` joined to ``s``.

    >>> row_filters(NearestQuery(vector=(1.0,), model="m", roles=("user",), since=2.0))[1]
    [['user'], [], 2.0]
    """
    bounds = [(f"{WRITTEN} {operator} %s", bound)
              for operator, bound in ((">=", query.since), ("<=", query.until))
              if bound is not None]
    scope, scoped = scope_filters(query)
    return (" AND ".join(["m.role = ANY(%s::text[])", *scope,
                          *(condition for condition, _ in bounds)]),
            [list(query.roles), *scoped, *(bound for _, bound in bounds)])


def match_filters(query: MatchQuery) -> tuple[str, list[Any]]:
    """:func:`row_filters`, and no session that a message of the searched roles matching
    ``query.excluded`` is in, whenever it was written, nor one ``exclude_sessions`` names.

    >>> match_filters(MatchQuery(expression=Term("a"), roles=("user",),
    ...                          excluded=Term("b")))[1][-2:]
    ["'b'", ['user']]
    """
    conditions, params = row_filters(query)
    if query.exclude_sessions:
        conditions += " AND m.session_id <> ALL(%s::text[])"
        params.append([storable(s) for s in query.exclude_sessions])
    if query.excluded is None:
        return conditions, params
    # Only the positions a tsvector keeps are read (no check of very long messages' full
    # tokens, as a match gets): a phrase past the 16,383rd word does not exclude.
    return (f"{conditions} AND NOT EXISTS (SELECT 1 FROM messages AS x "
            "WHERE x.session_id = m.session_id AND x.tokens @@ %s::tsquery "
            "AND x.role = ANY(%s::text[]))",
            [*params, tsquery(query.excluded), list(query.roles)])


def census(connection: Connection, table: str, units: Sequence[Unit], cap: int | None,
           memo: CountMemo | None = None) -> tuple[Sizes, dict[Unit, int]]:
    """The index's sizes, and how many rows of ``table`` (``messages`` or ``sessions``)
    match each unit, counting no further than ``cap + 1`` (None: every one), in one
    statement however many units; counts ``memo`` still holds
    (:mod:`~harkback.adapters.stores.postgres_memo`) are not counted again, nor words the
    statistics put far past ``cap`` (:mod:`~harkback.adapters.stores.postgres_statistics`)."""
    remembered = {} if memo is None else {
        u: n for u in units if (n := memo.known(table, u, cap)) is not None}
    # Exact counts made before the last write the memo saw: brought forward in the same
    # statement, if only appends passed them.
    behind = {} if memo is None else memo.behind(table, [u for u in units
                                                         if u not in remembered])
    plain = {u.text: u for u in units if isinstance(u, Term) and not u.prefix
             and u not in remembered and u not in behind}
    past = [] if table != "messages" or cap is None else [
        plain[w] for w in postgres_statistics.far_above(connection, list(plain), cap)]
    sizes, snapshot, counted, caught = _count(
        connection, table, [u for u in units if u not in remembered and u not in behind
                            and u not in past], cap, behind)
    counted.update((unit, cap + 1) for unit in past if cap is not None)
    if memo is None:
        return sizes, counted
    again = [u for u in behind if u not in caught]
    moved = not memo.keep(snapshot, table, counted, cap)
    memo.keep(snapshot, table, caught, None)
    # Written to since the remembered ones were counted (keep says so): bring forward
    # what only appends passed, count again what the memo forgot.
    if moved and (stale := [u for u in remembered if memo.known(table, u, cap) is None]):
        if later := memo.behind(table, stale):
            sizes, snapshot, more = postgres_catch_up.catch_up(connection, later)
            memo.keep(snapshot, table, more, None)
            caught.update(more)
        again += [u for u in stale if u not in caught]
    remembered.update((u, n if cap is None else min(n, cap + 1)) for u, n in caught.items())
    if again:
        sizes, snapshot, recounted, _ = _count(connection, table, again, cap)
        memo.keep(snapshot, table, recounted, cap)
        remembered.update(recounted)
    return sizes, {unit: counted[unit] if unit in counted else remembered[unit]
                   for unit in units}


def _count(connection: Connection, table: str, units: Sequence[Unit], cap: int | None,
           behind: dict[Unit, tuple[int, Snapshot]] | None = None
           ) -> tuple[Sizes, Snapshot, dict[Unit, int], dict[Unit, int]]:
    """Sizes, snapshot, each unit's count (no further than ``cap + 1``), and the counts of
    ``behind`` brought forward (:mod:`~harkback.adapters.stores.postgres_catch_up`)."""
    limit = "" if cap is None else f" LIMIT {int(cap) + 1}"
    columns: list[str] = []
    values: list[str] = []
    for unit in units:
        condition, params = matching(table, unit)
        columns.append(f"(SELECT count(*) FROM (SELECT 1 FROM {table} "
                       f"WHERE {condition}{limit}) AS found)")
        values += params
    if behind:
        column, params = postgres_catch_up.walk(behind)
        columns.append(column)
        values += params
    row = connection.execute(postgres_catch_up.with_columns(columns), values).fetchone()
    sizes, snapshot = postgres_catch_up.read_snapshot(row)
    if row is None:
        return sizes, snapshot, dict.fromkeys(units, 0), {}
    found = row[postgres_catch_up.SNAPSHOT_COLUMNS:]
    caught = postgres_catch_up.brought_forward(found[-1], snapshot, behind) if behind else {}
    return sizes, snapshot, {unit: int(n) for unit, n in zip(
        units, found[:len(units)], strict=True)}, caught


def hit(row: Sequence[Any], score: float) -> MessageHit:
    """A hit from a row of :data:`HIT_COLUMNS`."""
    message = stored_message(row[:8])
    text, cut = read_start(message.text_for_search(), LONGEST_READ)
    return MessageHit(session_id=message.session_id, position=message.position,
                      role=message.role, content=text, score=score,
                      timestamp=row[8], source=restore(row[9]), length=row[11] if cut else None)


def search(connection: Connection, query: MatchQuery, memo: CountMemo | None = None
           ) -> tuple[MessageHit, ...]:
    """Messages matching ``query``, best BM25 first, bounded by its ``max_scored``."""
    cap = query.max_scored
    sizes, counts = census(connection, "messages", search_plan.selecting_units(query.expression),
                           cap, memo)
    common = frozenset(u for u, n in counts.items() if cap is not None and n > cap)
    if not common:
        return tuple(h for _, h in _scored(connection, query, query.expression, None,
                                           sizes, counts))
    found: list[tuple[int, MessageHit]] = []
    narrowed = search_plan.narrow(query.expression, common)
    if narrowed is not None:
        within = None if search_plan.is_disjunction(query.expression) else query.expression
        found = _scored(connection, query, narrowed, within, sizes, counts)
    if len(found) < query.limit:
        found += _newest(connection, query, [row_id for row_id, _ in found],
                         query.limit - len(found))
    return tuple(h for _, h in found)


def _scored(connection: Connection, query: MatchQuery, expression: Node, within: Node | None,
            sizes: Sizes, counts: dict[Unit, int]) -> list[tuple[int, MessageHit]]:
    """Row ids and hits matching ``expression`` (and ``within``), best BM25 first.

    ``counts`` holds the exact count of every unit ``expression`` selects by (the units of
    a narrowed expression are the query's units that were not common)."""
    documents, tokens, _, _ = sizes
    if not documents:
        return []
    leaves = units_of(expression)
    selecting = set(search_plan.selecting_units(expression))
    # An excluded unit never occurs in a row that matches, so its weight never counts.
    idfs = [idf(documents, counts[u]) if u in selecting else 0.0 for u in leaves]
    average = tokens / documents
    conditions, params = match_filters(query)
    matched, values = matching(
        "m", expression if within is None else AllOf((expression, within)))
    words = postgres_scoring.query_words([*leaves, *(units_of(within) if within else ())])
    rows = connection.execute(
        f"SELECT m.id, m.length, w.stored, w.longest, w.lexemes, w.places "
        f"FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        f"{postgres_scoring.LEXEMES} WHERE {matched} AND {conditions}",
        [words, words, *values, *params]).fetchall()
    scored: list[tuple[float, int]] = []
    unsure: list[int] = []
    for row_id, length, stored, longest, lexemes, places in rows:
        if not postgres_scoring.complete(length, stored, longest):
            unsure.append(row_id)
            continue
        score = fit_tokens(postgres_scoring.sparse_tokens(length, lexemes, places), expression,
                           within, leaves, idfs, average)
        if score is not None:
            scored.append((score, row_id))
    kept: dict[int, Sequence[Any]] = {}
    for row in _rows_by_id(connection, unsure):
        # The index cut this message (very long, or huge words): its own tokens decide,
        # of a huge one those of its start (as a sample of its whole length).
        text, cut = read_start(stored_message(row[:8]).text_for_search(),
                               LONGEST_READ)
        score = fit(text, expression, within, leaves, idfs, average,
                    whole=row[11] if cut else None)
        if score is not None:
            scored.append((score, int(row[10])))
            kept[int(row[10])] = row
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    best = scored[:max(query.limit, 0)]
    kept.update((int(row[10]), row) for row in _rows_by_id(
        connection, [row_id for _, row_id in best if row_id not in kept]))
    return [(row_id, hit(kept[row_id], score)) for score, row_id in best]


def _rows_by_id(connection: Connection, ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """The :data:`HIT_COLUMNS` of these messages (any order)."""
    if not ids:
        return []
    return connection.execute(
        f"SELECT {HIT_COLUMNS} FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        "WHERE m.id = ANY(%s::bigint[])", (list(ids),)).fetchall()


def fit(text: str, expression: Node, within: Node | None, leaves: Sequence[Unit],
        idfs: Sequence[float], average: float, *, whole: int | None = None) -> float | None:
    """FTS5's BM25 of ``text`` for the ``leaves`` of ``expression``; None when ``text``
    matches ``expression`` (and ``within``) not at all.

    The index may cut very long words and positions: a candidate it found is checked
    against its full tokens here.

    >>> fit("docker bridge", Term("docker"), None, [Term("docker")], [2.0], 2.0)
    2.0

    ``whole`` is the message's length in tokens when ``text`` is only its start: the
    index matched it, what the start holds stands for the whole at its rate, and the
    whole length normalizes it.
    """
    tokens = index_tokens(text)
    if whole is None:
        return fit_tokens(tokens, expression, within, leaves, idfs, average)
    frequencies = Counter(tokens)
    rate = whole / max(len(tokens), 1)
    return bm25([occurrences(u, tokens, frequencies) * rate for u in leaves], idfs, whole,
                average)


def fit_tokens(tokens: Sequence[str], expression: Node, within: Node | None,
               leaves: Sequence[Unit], idfs: Sequence[float], average: float) -> float | None:
    """:func:`fit` of a message's index tokens."""
    if not evaluate(expression, tokens) or (within is not None and not evaluate(within, tokens)):
        return None
    frequencies = Counter(tokens)
    return bm25([occurrences(u, tokens, frequencies) for u in leaves], idfs, len(tokens),
                average)


def _newest(connection: Connection, query: MatchQuery, skip: list[int], limit: int
            ) -> list[tuple[int, MessageHit]]:
    """The newest messages matching the whole query (unscored), but those in ``skip``."""
    conditions, params = match_filters(query)
    matched, values = matching("m", query.expression)
    rows = connection.execute(
        f"SELECT {HIT_COLUMNS} FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {matched} AND {conditions} "
        "AND m.id <> ALL(%s::bigint[]) ORDER BY m.id DESC LIMIT %s",
        [*values, *params, skip, limit]).fetchall()
    return [(int(row[10]), hit(row, 0.0)) for row in rows]


def term_stats(connection: Connection, terms: Sequence[str], memo: CountMemo | None = None,
               prefixes: Sequence[str] = ()) -> TermStats:
    """Index statistics: the totals every ingest keeps, and each term's message count (two
    statements at most, however many terms); each of ``prefixes`` counted as a prefix
    search matches it (前 in 前端 and 前)."""
    wanted = [*(Term(t) for t in dict.fromkeys(t for t in terms if t)),
              *(Term(p, prefix=True) for p in dict.fromkeys(p for p in prefixes if p))]
    (documents, tokens, _, _), counted = census(
        connection, "messages", wanted, EXACT_COUNT_LIMIT, memo)
    numbers = {u: counted[u] for u in wanted}
    common = [u for u, n in numbers.items() if n > EXACT_COUNT_LIMIT]
    # Estimates are remembered by word: a prefix's is made again each time.
    known = {} if memo is None else {Term(t): n for t, n in memo.estimated(
        [u.text for u in common if not u.prefix]).items()}
    numbers.update(known)
    if missing := [u for u in common if u not in known]:
        generation, estimates = _estimates(connection, missing, documents)
        if doubtful := [u for u, n in estimates.items() if n <= EXACT_COUNT_LIMIT]:
            # Both ends say fewer than the limit (rows removed since the statistics were
            # made, or a word bunched in the middle): the exact count decides, as for a
            # word under it (one past the limit is also what raising the estimate gives).
            _, snapshot, exact, _ = _count(connection, "messages", doubtful, EXACT_COUNT_LIMIT)
            generation = snapshot.generation
            estimates.update((u, exact[u]) for u in doubtful)
            if memo is not None:
                memo.keep(snapshot, "messages", exact, EXACT_COUNT_LIMIT)
        numbers.update(estimates)
        if memo is not None:
            memo.keep_estimates(generation, {u.text: n for u, n in estimates.items()
                                             if n > EXACT_COUNT_LIMIT and not u.prefix})

    def found(prefix: bool) -> tuple[tuple[str, int], ...]:
        return tuple((u.text, n) for u, n in numbers.items() if n and u.prefix == prefix)
    return TermStats(documents=documents, average_length=tokens / documents if documents else 0.0,
                     counts=found(False), prefix_counts=found(True))


def _estimates(connection: Connection, terms: Sequence[Term], documents: int
               ) -> tuple[int, dict[Term, int]]:
    """Counts of terms (words or prefixes) found past the exact limit, from their newest
    and oldest matches (not raised to the limit), and the index generation they were made at."""
    columns = ", ".join(
        f"(SELECT ARRAY[count(*), min(id), max(id)] FROM (SELECT id FROM messages "
        f"WHERE tokens @@ %s::tsquery ORDER BY id {order} LIMIT {END_SAMPLE + 1}) AS f)"
        for _ in terms for order in ("DESC", "ASC"))
    row = connection.execute(f"SELECT {columns}, (SELECT generation FROM index_totals)",
                             [tsquery(t) for t in terms for _ in (0, 1)]).fetchone()
    assert row is not None
    # Newest matches that stop short of the sample are all there are (found when the
    # statistics, not a count, put a word past the limit).
    return int(row[-1]), {
        term: int(row[2 * i][0]) if row[2 * i][0] <= END_SAMPLE else search_plan.extrapolate(
            row[2 * i], row[2 * i + 1], documents=documents, exact_up_to=0)
        for i, term in enumerate(terms)}
