"""Full-text search in the SQLite store: bounded and ranked searches, term statistics.

A search runs as :class:`~harkback.stages.ports.MatchQuery` bounds it: with
``max_scored`` set, terms matching more rows than that are found first
(:mod:`~harkback.adapters.stores.search_plan` narrows the query around them); otherwise
FTS5 ranks first and only its best rows are joined and filtered (:func:`best_rows`).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import sqlite3
from collections.abc import Mapping, Sequence

import attrs

from harkback.adapters.stores import search_plan, sqlite_vocabulary
from harkback.adapters.stores.sql import fulltext
from harkback.adapters.stores.sql import rows as rows_sql
from harkback.adapters.stores.sql.statement import Row
from harkback.adapters.stores.sqlite_connection import execute
from harkback.adapters.stores.sqlite_transaction import read_snapshot
from harkback.stages.long_text import LONGEST_READ
from harkback.stages.ports import DEFAULT_MAX_SCORED, MatchQuery, TermStats
from harkback.stages.query import Node, Phrase, Term, Unit
from harkback.stages.records import MessageHit, Role

RANKED_FETCH_FACTOR = 4
RANKED_FETCH_MIN = 200
RANKED_FETCH_MARGIN = 1.5
"""A search first joins FTS5's best ``max(factor * limit, min)`` rows, then filters them;
once a search with the same filters has shown how many ranked rows one survivor takes,
``margin`` times that many per row asked (at most ``factor`` times the default)."""

FilterKey = tuple[tuple[Role, ...], tuple[str, ...]]
"""A search's roles and hidden sources: what :func:`best_rows` learns its cut for."""

EXACT_COUNT_LIMIT = 4 * DEFAULT_MAX_SCORED
END_SAMPLE = 256
"""``term_stats`` counts a term exactly up to the limit (a bounded COUNT reads postings
at ~50 ns each) and estimates it above from its ``END_SAMPLE`` newest and oldest matches
(within about 5 % for 99 % of the question words of the pooled LongMemEval store)."""


RANK_FIRST_FROM = 1000
"""A bounded search whose selecting terms are none of them common but one matches at least
this many messages ranks inside FTS5 first (:func:`best_rows`): BM25 for every match but the
joins for the best few hundred only. Below it joining every match is cheaper (ranking first
pays from ~1,000 matches: benchmarks/README.md)."""


PER_SESSION_ABOVE = EXACT_COUNT_LIMIT
"""A ``NOT`` part matching more messages than this is asked of each checked row's session
(:data:`~harkback.adapters.stores.sql.fulltext.EXCLUDED_PER_SESSION`) by the statements
that check few rows; below it the set of its sessions is built once (reading at most
this many rows, ~12 ms)."""


def many_excluded(connection: sqlite3.Connection, query: MatchQuery,
                  spelled: dict[Unit, Node] | None = None, *,
                  above: int = PER_SESSION_ABOVE) -> bool:
    """Whether ``query``'s ``NOT`` part matches more than ``above`` messages (counted no
    further, a prefix as its words)."""
    if query.excluded is None:
        return False
    counted = sqlite_vocabulary.spelled_tree(connection, query.excluded, spelled)
    found: int = execute(connection, fulltext.count_matches(counted, above)).fetchone()[0]
    return found > above


def estimate_count(connection: sqlite3.Connection, term: str | Term, documents: int, *,
                   exact_up_to: int = EXACT_COUNT_LIMIT, sample: int = END_SAMPLE) -> int:
    """Messages holding ``term`` (a word, or a prefix term: the messages it matches): exact
    up to ``exact_up_to``, estimated above.

    Counting a common term exactly walks its whole posting list (FTS5's vocabulary table
    does the same: ~35 ms for a term in half of 1M messages), so the count stops at
    ``exact_up_to + 1``. Past it, the newest and the oldest ``sample`` matches are read
    and the stretch between them is taken to hold matches at the mean density of the two
    ends (each over its own ids), so a word that is frequent only lately (a current
    topic) is not mistaken for one found everywhere. A prefix is matched as the OR of its
    words where they can be listed (:mod:`sqlite_vocabulary`: the same rows, read newest
    first only as far as asked); one that cannot be is counted whole, as FTS5 merges all
    its words' postings before the first row anyway (``"d"*`` at 100k: 54 ms to count its
    66,709 messages, 55 ms to count 8,001, and each end read would merge them again).
    """
    unit = sqlite_vocabulary.spelled_out(
        connection, term if isinstance(term, Term) else Term(term))
    whole = isinstance(unit, Term) and unit.prefix
    counted: int = execute(connection, fulltext.count_matches(
        unit, documents if whole else exact_up_to)).fetchone()[0]
    if counted <= exact_up_to or whole:
        return counted
    return search_plan.extrapolate(
        execute(connection, fulltext.end_matches(unit, sample, newest=True)).fetchone(),
        execute(connection, fulltext.end_matches(unit, sample, newest=False)).fetchone(),
        documents=documents, exact_up_to=exact_up_to)


def term_stats(connection: sqlite3.Connection, terms: Sequence[str],
               prefixes: Sequence[str] = ()) -> TermStats:
    """Index statistics from FTS5's own records: its totals row and its vocabulary; each
    of ``prefixes`` counted as a prefix search matches it (前 in 前端 and 前)."""
    row = connection.execute(fulltext.INDEX_TOTALS).fetchone()
    documents, tokens = fulltext.decode_totals(row[0] if row else None)

    def counted(asked: Sequence[str], prefix: bool) -> tuple[tuple[str, int], ...]:
        found = {t: estimate_count(connection, Term(t, prefix=prefix), documents)
                 for t in dict.fromkeys(t for t in asked if t)}
        return tuple((t, n) for t, n in found.items() if n)
    return TermStats(documents=documents, average_length=tokens / documents if documents else 0.0,
                     counts=counted(terms, False), prefix_counts=counted(prefixes, True))


def search_hits(connection: sqlite3.Connection, query: MatchQuery,
                reach: dict[FilterKey, float]) -> tuple[MessageHit, ...]:
    """The messages matching ``query`` as :func:`search_rows` finds them, as hits: a text
    longer than :data:`~harkback.stages.long_text.LONGEST_READ` read only that far, with
    its whole length in tokens as FTS5 recorded it."""
    rows = search_rows(connection, query, reach)
    if not rows:
        return ()
    # (rows_sql.hit_text, inlined: a call per hit costs more than the decoding.)
    texts = {row_id: (start or b"").decode("utf-8", "replace") for row_id, start in execute(
        connection, fulltext.hit_texts([row[6] for row in rows]))}
    # Outside a read-only store's one snapshot each statement reads its own: a message
    # another connection removed since its row was read is no hit any more.
    rows = [row for row in rows if row[6] in texts]
    if not any(len(text) > LONGEST_READ for text in texts.values()):
        return tuple(rows_sql.hit_from_row(row, texts[row[6]]) for row in rows)
    long = [row_id for row_id, text in texts.items() if len(text) > LONGEST_READ]
    lengths = {row_id: fulltext.read_varint(size, 0)[0] for row_id, size in execute(
        connection, fulltext.token_lengths(long)) if size}
    return tuple(rows_sql.hit_from_row(row, texts[row[6]][:LONGEST_READ], lengths.get(row[6]))
                 for row in rows)


def search_rows(connection: sqlite3.Connection, query: MatchQuery,
                reach: dict[FilterKey, float]) -> list[Row]:
    """The rows of the messages matching ``query``, best first, bounded by its ``max_scored``.

    ``reach`` holds what :func:`best_rows` learnt from earlier searches; it is updated.
    """
    cap = query.max_scored
    if cap is None:
        return best_rows(connection, query, reach)
    if isinstance(query.expression, Term | Phrase) and query.expression.prefix:
        return _prefix_rows(connection, query, query.expression, cap)
    known = dict(query.known_counts)
    # Statements that only filter match prefixes as the OR of their words (see
    # _prefix_rows); one listing per prefix.
    spelled: dict[Unit, Node] = {}
    counts = {unit: unit_count(connection, unit, cap, known, spelled)
              for unit in search_plan.selecting_units(query.expression)}
    common = frozenset(unit for unit, count in counts.items() if count > cap)
    per_session = many_excluded(connection, query, spelled)
    if not common:
        # Every term matches at most ``cap`` rows: joining them all is cheaper than
        # ranking inside FTS5 first, unless one of them matches many (RANK_FIRST_FROM).
        if _ranks_first(query.expression, counts, _first_cut(query, reach)):
            return best_rows(connection, query, reach, per_session=per_session)
        return joined_rows(connection, query, query.expression, counts, per_session, reach)
    rows: list[Row] = []
    unscored = sqlite_vocabulary.spelled_tree(connection, query.expression, spelled)
    narrowed = search_plan.narrow(query.expression, common)
    if narrowed is not None:
        if (search_plan.is_disjunction(query.expression)
                and _ranks_first(narrowed, counts, _first_cut(query, reach))):
            rows = best_rows(connection, attrs.evolve(query, expression=narrowed), reach,
                             per_session=per_session)
        elif search_plan.is_disjunction(query.expression):
            rows = joined_rows(connection, query, narrowed, counts, per_session, reach)
        else:
            rows = execute(connection, fulltext.search(
                query, expression=narrowed, within=unscored, per_session=per_session)).fetchall()
    if len(rows) < query.limit:
        # An AND of common terms that rarely meet would walk their posting lists to the
        # start (~30 ms at 1M messages), so the fill asks only for the newest matches.
        rows += execute(connection, fulltext.newest(query, skip=[row[6] for row in rows],
                                                    limit=query.limit - len(rows),
                                                    expression=unscored,
                                                    per_session=per_session)).fetchall()
    return rows


def _prefix_rows(connection: sqlite3.Connection, query: MatchQuery, prefix: Term | Phrase,
                 cap: int) -> list[Row]:
    # A query that is one prefix ("dock*"): FTS5 sets up a prefix by merging the posting
    # lists of every token it covers (~10 ms for "dock*" at 1M messages, whatever the
    # LIMIT), so the unscored statements match the OR of those tokens instead, listed
    # from the index (sqlite_vocabulary; the same rows, read newest first only as far as
    # asked: ~2 ms). The id of the (cap + 1)-th newest match both tells whether more
    # than ``cap`` match and bounds the newest-first read to those cap + 1 matches, which
    # reads further only when too few of them pass the filters. (Listing the ids and
    # handing them back cost twice that: 2.5 against 1.5 ms for "dock*" at 100k.) The
    # rows are those of the general path: every match scored when there are at most
    # ``cap``, else the newest matches that pass the filters.
    words = sqlite_vocabulary.spelled_out(connection, prefix)
    per_session = many_excluded(connection, query)
    beyond = execute(connection, fulltext.newest_beyond(words, cap)).fetchone()
    if beyond is None:
        return execute(connection, fulltext.search(query, per_session=per_session)).fetchall()
    last: int = beyond[0]
    rows = execute(connection, fulltext.newest(query, skip=(), at_least=last,
                                               limit=query.limit, expression=words,
                                               per_session=per_session)).fetchall()
    if len(rows) < query.limit:
        rows += execute(connection, fulltext.newest(query, skip=(), below=last,
                                                    limit=query.limit - len(rows),
                                                    expression=words,
                                                    per_session=per_session)).fetchall()
    return rows


def is_common(connection: sqlite3.Connection, unit: Unit, cap: int,
              known: Mapping[str, int], spelled: dict[Unit, Node] | None = None) -> bool:
    """Whether more than ``cap`` messages match ``unit`` (see :func:`unit_count`)."""
    return unit_count(connection, unit, cap, known, spelled) > cap


def unit_count(connection: sqlite3.Connection, unit: Unit, cap: int,
               known: Mapping[str, int], spelled: dict[Unit, Node] | None = None) -> int:
    """How many messages match ``unit``, as far as ``cap`` needs: a term's count is taken
    from ``known`` (:func:`term_stats`'s; a prefix's under its text and ``*``) when it
    decides whether the unit is above ``cap``, else the matches are counted up to
    ``cap + 1`` (a prefix as the OR of its words, :mod:`sqlite_vocabulary`, kept in
    ``spelled``).

    :func:`term_stats` counts exactly up to :data:`EXACT_COUNT_LIMIT` and estimates only
    past it, so a known count decides whenever it is exact or ``cap`` is within the limit.
    """
    if isinstance(unit, Term):
        count = known.get(unit.text + "*" if unit.prefix else unit.text)
        if count is not None and (count <= EXACT_COUNT_LIMIT or cap <= EXACT_COUNT_LIMIT):
            return count
    counted = sqlite_vocabulary.spelled_tree(connection, unit, spelled)
    found: int = execute(connection, fulltext.count_matches(counted, cap)).fetchone()[0]
    return found


def joined_rows(connection: sqlite3.Connection, query: MatchQuery, expression: Node,
                counts: Mapping[Unit, int], per_session: bool,
                reach: Mapping[FilterKey, float]) -> list[Row]:
    """The best ``query.limit`` rows of the messages matching ``expression`` (all of them
    joined and scored: :func:`~harkback.adapters.stores.sql.fulltext.search`), as
    ``counts`` of its units bound them.

    An OR of words of which one matches more messages than the limit is read in rank
    order (:func:`~harkback.adapters.stores.sql.fulltext.search_in_order`) and only as
    far as the limit: "errors", 870 matches that all pass the filters, joins 300 of them
    (4.2 -> 2.5 ms after another connection's commit). A phrase or a prefix keeps the
    full join: their matches are mostly in tool output the default roles drop, so the
    read would go through them all and pay for the ranking first (4.6 -> 6.7 ms for
    "connection refused"). So does a search whose filters may keep few matches (a time
    bound, sources, a ``NOT`` part; roles ``reach`` says drop most): the read would score
    and sort every match, then join them all ("kubectl OR fingerprint" at 100k: 4.3 -> 5.9
    ms with a time bound keeping 1 %, 3.2 -> 9.2 ms for the system role). (A limit of 0
    or less is SQL's: no row, or every one.)
    """
    most = _commonest_word(expression, counts)
    if most is None or query.limit <= 0 or _in_order_depth(query, reach) >= most:
        return execute(connection, fulltext.search(
            query, expression=expression, per_session=per_session)).fetchall()
    cursor = execute(connection, fulltext.search_in_order(
        query, expression=expression, per_session=per_session))
    rows = cursor.fetchmany(query.limit)
    cursor.close()
    # SQL promises no order without ORDER BY: rows out of (rank, id) order (a SQLite
    # that read the subquery otherwise) fall back to the full statement.
    if all((a[5], a[6]) < (b[5], b[6]) for a, b in itertools.pairwise(rows)):
        return rows
    return execute(connection, fulltext.search(
        query, expression=expression, per_session=per_session)).fetchall()


def _in_order_depth(query: MatchQuery, reach: Mapping[FilterKey, float]) -> float:
    # How many ranked matches the in-order read is expected to join: the limit until a
    # ranked search with the same filters showed how many matches one row takes; a filter
    # whose survivors vary per query (a time bound) may need them all.
    key = _filter_key(query)
    if key is None:
        return math.inf
    needed = reach.get(key)
    return query.limit if needed is None else query.limit * needed * RANKED_FETCH_MARGIN


def _commonest_word(node: Node, counts: Mapping[Unit, int]) -> int | None:
    # The matches of the most frequent word of an OR of plain words (no phrase, no
    # prefix), which the OR matches at least; None for any other expression.
    units = search_plan.selecting_units(node)
    if not (search_plan.is_disjunction(node)
            and all(isinstance(u, Term) and not u.prefix for u in units)):
        return None
    return max((counts.get(u, 0) for u in units), default=0)


def _ranks_first(node: Node, counts: Mapping[Unit, int], cut: int) -> bool:
    # An OR of words matches at least as many rows as its most frequent word; ranking
    # first pays only when that is well above the cut it would join. Phrases and
    # prefixes keep the full join: an error message's words meet mostly in tool output,
    # which the default roles filter out after the cut (and anything but an OR may
    # match far fewer rows than its parts).
    most = _commonest_word(node, counts)
    return most is not None and most >= max(RANK_FIRST_FROM, cut)


def _filter_key(query: MatchQuery) -> FilterKey | None:
    # A time bound's or a filter's survivors vary per query: nothing to learn from them.
    varies = (query.since is not None or query.until is not None or bool(query.sources)
              or query.excluded is not None or bool(query.exclude_sessions))
    return None if varies else (query.roles, query.hidden_sources)


def _first_cut(query: MatchQuery, reach: Mapping[FilterKey, float]) -> int:
    """How many of FTS5's best rows :func:`best_rows` joins first for ``query``: as many
    per row asked as the last search with its filters needed (``RANKED_FETCH_MARGIN``
    times that), else ``RANKED_FETCH_FACTOR`` times the limit."""
    key = _filter_key(query)
    default = max(RANKED_FETCH_FACTOR * query.limit, RANKED_FETCH_MIN)
    needed = reach.get(key) if key is not None else None
    return default if needed is None else min(
        max(math.ceil(query.limit * needed * RANKED_FETCH_MARGIN), RANKED_FETCH_MIN),
        RANKED_FETCH_FACTOR * default)


def best_rows(connection: sqlite3.Connection, query: MatchQuery,
              reach: dict[FilterKey, float], *, per_session: bool | None = None) -> list[Row]:
    """The rows of the messages matching ``query``, best first, when every row is scored;
    ``per_session`` as :func:`many_excluded` says (asked when None)."""
    # Ranking inside FTS5 and joining only its best rows saves a third of a search
    # matching thousands of rows; the filters then apply to those rows only, so when
    # too few survive a cut that may have dropped some, a larger cut, then the full
    # statement, decides. Joining costs ~8 us a row, so the cut is sized by how many
    # ranked rows the last search with the same filters needed per surviving row.
    key = _filter_key(query)
    default = max(RANKED_FETCH_FACTOR * query.limit, RANKED_FETCH_MIN)
    first = _first_cut(query, reach)
    # The learned cut first; when it was below the default and fell short, the default.
    if per_session is None:
        per_session = many_excluded(connection, query)
    for fetch in dict.fromkeys((first, max(first, default))):
        read = _ranked_rows(connection, query, fetch, per_session) if query.limit > 0 else None
        if read is None:
            *rows, last = execute(connection, fulltext.ranked_search(
                query, fetch, per_session=per_session)).fetchall()
            read = rows, last[8]
        rows, handed = read
        enough = len(rows) >= query.limit
        if key is not None and (enough or handed == fetch):
            # With enough survivors the last one's place says how deep the cut had to
            # go; with too few, ``fetch`` per survivor is a lower bound.
            seen = rows[-1][7] / len(rows) if enough else fetch / max(len(rows), 1)
            before = reach.get(key)
            reach[key] = seen if before is None else max(seen, (before + seen) / 2)
        if enough or handed < fetch:
            return [row[:7] for row in rows]
    return execute(connection, fulltext.search(query)).fetchall()


def _ranked_rows(connection: sqlite3.Connection, query: MatchQuery, fetch: int,
                 per_session: bool) -> tuple[list[Row], int] | None:
    # best_rows' cut read in rank order only as far as query.limit survivors
    # (fulltext.ranked_in_order): the Chinese question joins ~310 of its cut of 464 rather
    # than all, and no survivor is sorted or stored again (5.4 -> 4.5 ms after a commit).
    # With the rows, how many matches FTS5 handed over, counted only when too few survive
    # (the whole cut was read then); None when the places do not rise (SQL promises no
    # order without ORDER BY): ranked_search decides. The count reads the cut's snapshot:
    # a session removed in between would make a full cut look whole, and the search stop
    # at its few survivors.
    with read_snapshot(connection):
        with contextlib.closing(execute(connection, fulltext.ranked_in_order(
                query, fetch, per_session=per_session))) as cursor:
            rows = cursor.fetchmany(query.limit)
        if not all(a[7] < b[7] for a, b in itertools.pairwise(rows)):
            return None
        if len(rows) >= query.limit:
            return rows, fetch
        handed: int = execute(connection, fulltext.count_matches(
            query.expression, fetch - 1)).fetchone()[0]
    return rows, handed
