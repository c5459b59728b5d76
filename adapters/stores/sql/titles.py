"""Title search statements: a session's title, source and project's name in their own
full-text index.

Messages and titles live in separate indexes: one title among a session's hundreds of
messages would weigh nothing in the messages' BM25, and their statistics (document count,
mean length) would mix two kinds of text.

>>> from harkback.stages.query import parse_query
>>> q = MatchQuery(expression=parse_query("cors api").expression, roles=("user",), since=5.0)
>>> search(q).params
('("cors" OR "api")', '[]', '[]', '[]', '[]', '[]', 5.0, 5.0, None, None, 50)
"""

from __future__ import annotations

from collections.abc import Iterable

from harkback.adapters.stores.sql.statement import SCOPE, SqlValue, Statement, json_list, scope
from harkback.stages.ports import MatchQuery
from harkback.stages.query import AllOf, Node, Unit, to_fts5

_OF_SESSIONS = "session_id IN (SELECT value FROM json_each(?))"

INSERT_TITLE = "INSERT INTO session_titles (session_id, body) VALUES (?, ?)"
"""One session's index text (:func:`~harkback.stages.text.tokens.index_text` of
:meth:`~harkback.stages.records.Session.text_for_search`)."""

COUNTS = "SELECT (SELECT COUNT(*) FROM sessions), (SELECT COUNT(*) FROM session_titles)"
"""Sessions stored and sessions whose title is indexed: when they differ, some are missing."""

MISSING = ("SELECT id, title, source, project FROM sessions "
           "WHERE id NOT IN (SELECT session_id FROM session_titles)")
"""The sessions whose title is not indexed (written before the index existed, or by a
writer that does not know it)."""

MERGE_AT = 2
"""FTS5's ``crisismerge`` for the title index: a write that leaves this many segments on a
level merges them there and then (FTS5's default, 16, and its merging only after 64 leaves
written, left a store's one-leaf writes in 5-12 segments; benchmarks/README.md, round 15)."""

MERGE_SETTING = "SELECT v FROM session_titles_fts_config WHERE k = 'crisismerge'"
SET_MERGE = "INSERT INTO session_titles_fts (session_titles_fts, rank) VALUES ('crisismerge', ?)"


def unindex(session_ids: Iterable[str]) -> Statement:
    """Take these sessions' rows out of the full-text index (their text is kept beside it)."""
    return Statement(
        "INSERT INTO session_titles_fts (session_titles_fts, rowid, body) "
        f"SELECT 'delete', id, body FROM session_titles WHERE {_OF_SESSIONS}",
        (json_list(session_ids),))


def forget(session_ids: Iterable[str]) -> Statement:
    """Delete these sessions' title rows (after :func:`unindex`)."""
    return Statement(f"DELETE FROM session_titles WHERE {_OF_SESSIONS}",
                     (json_list(session_ids),))


def index(session_ids: Iterable[str]) -> Statement:
    """Put these sessions' title rows into the full-text index."""
    return Statement(
        "INSERT INTO session_titles_fts (rowid, body) "
        f"SELECT id, body FROM session_titles WHERE {_OF_SESSIONS}",
        (json_list(session_ids),))


_SESSION_FILTERS = (
    "s.source NOT IN (SELECT value FROM json_each(?)) "
    f"AND {SCOPE} "
    "AND (? IS NULL OR s.started_at >= ?) AND (? IS NULL OR s.started_at <= ?) ")
"""A title's session (``s``): not of a hidden source, in scope, started within the bounds."""


def _matching(query: MatchQuery, expression: Node | None, within: Node | None
              ) -> tuple[str, list[SqlValue]]:
    # The MATCH value, and the condition (with its value) that ``within`` adds.
    matched = query.expression if expression is None else expression
    if within is None:
        return "", [to_fts5(matched)]
    return ("AND session_titles_fts.rowid IN (SELECT rowid FROM session_titles_fts(?)) ",
            [to_fts5(matched), to_fts5(AllOf((matched, within)))])


def _filter_values(query: MatchQuery) -> list[SqlValue]:
    return [json_list(query.hidden_sources), *scope(query.sources, query.projects),
            query.since, query.since, query.until, query.until]


def search(query: MatchQuery, *, expression: Node | None = None,
           within: Node | None = None) -> Statement:
    """Sessions whose title, source or project's name matches ``expression`` (default: the
    query's), best BM25 first (then newest, then id); ``within`` further keeps only rows
    that also match it.

    Hidden sources are left out, only ``sources`` and ``projects`` kept when given, and
    ``since``/``until`` bound the session's start; roles do not apply to a title.
    """
    also, params = _matching(query, expression, within)
    return Statement(
        "SELECT s.id, s.title, s.source, s.started_at, s.project, bm25(session_titles_fts) AS rank "
        "FROM session_titles_fts "
        "JOIN session_titles AS t ON t.id = session_titles_fts.rowid "
        "JOIN sessions AS s ON s.id = t.session_id "
        f"WHERE session_titles_fts MATCH ? {also}AND {_SESSION_FILTERS}"
        "ORDER BY rank, s.started_at DESC, s.id LIMIT ?",
        (*params, *_filter_values(query), query.limit))


def ranked_search(query: MatchQuery, fetch: int, *, expression: Node | None = None,
                  within: Node | None = None) -> Statement:
    """Like :func:`search`, but only the titles ranked among FTS5's best ``fetch`` (and
    every title tied with the last of them) are joined to their sessions and filtered.

    Scoring every match reads only the index; joining each to its session reads a page
    of ``sessions`` per title (2,000 pages for a question at 1M messages, most of a new
    process's title search). The rows come with -1 in an extra column; one last row,
    otherwise empty, holds in it how many matching titles the cut left out. A title left
    out ranks below every one kept (ties are kept whole), so whenever ``query.limit``
    rows survive, or none was left out, they are exactly :func:`search`'s rows.

    >>> from harkback.stages.query import parse_query
    >>> query = MatchQuery(expression=parse_query("cors").expression, roles=("user",))
    >>> ranked_search(query, 200).params[:2]
    ('("cors")', 199)
    """
    also, params = _matching(query, expression, within)
    return Statement(
        "WITH found AS MATERIALIZED (SELECT rowid AS id, bm25(session_titles_fts) AS rank "
        f"FROM session_titles_fts WHERE session_titles_fts MATCH ? {also}), "
        "best AS MATERIALIZED (SELECT id, rank FROM found WHERE rank <= COALESCE("
        "(SELECT rank FROM found ORDER BY rank LIMIT 1 OFFSET ?), 9e999)) "
        "SELECT * FROM (SELECT s.id, s.title, s.source, s.started_at, s.project, "
        "best.rank AS rank, -1 AS left_out FROM best "
        "JOIN session_titles AS t ON t.id = best.id "
        "JOIN sessions AS s ON s.id = t.session_id "
        f"WHERE {_SESSION_FILTERS}"
        "ORDER BY best.rank, s.started_at DESC, s.id LIMIT ?) "
        "UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, "
        "(SELECT COUNT(*) FROM found) - (SELECT COUNT(*) FROM best) "
        "ORDER BY left_out, rank, started_at DESC, id",
        (*params, fetch - 1, *_filter_values(query), query.limit))


def count_matches(unit: Unit, cap: int) -> Statement:
    """How many sessions' titles match ``unit``, counting no further than ``cap + 1``."""
    return Statement(
        "SELECT COUNT(*) FROM (SELECT 1 FROM session_titles_fts "
        "WHERE session_titles_fts MATCH ? LIMIT ?)",
        (to_fts5(unit), cap + 1))
