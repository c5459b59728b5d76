"""Full-text search statements: ranked, bounded and newest-first searches, term statistics.

Only :func:`harkback.stages.query.to_fts5` turns a query into ``MATCH`` text.

>>> from harkback.stages.query import parse_query
>>> q = MatchQuery(expression=parse_query("docker").expression, roles=("user",))
>>> search(q).sql.startswith("SELECT m.session_id")
True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from harkback.adapters.stores.sql.statement import SCOPE, SqlValue, Statement, json_list, scope
from harkback.stages.long_text import LONGEST_READ
from harkback.stages.ports import MatchQuery, NearestQuery
from harkback.stages.query import AllOf, Node, to_fts5

MERGE_INDEX = "INSERT INTO messages_fts(messages_fts) VALUES('optimize')"
"""Merge every segment of the full-text index into one (FTS5's 'optimize' command)."""
PENDING_BYTES = 32 * 1024 * 1024
"""FTS5's ``hashsize``: how much new index data a transaction gathers in memory before it
writes a segment. At FTS5's default (1 MiB) a bulk ingest writes, then merges again, a
dozen small segments per transaction; gathering the whole batch took a third off the
index's share of a 100k-message ingest (memory grows only as data comes)."""

MERGE_STEP = "INSERT INTO messages_fts (messages_fts, rank) VALUES ('merge', 2000)"
"""One step of FTS5's own merging (about 2,000 pages written), on levels holding enough
segments to merge (``usermerge``, 4) or finishing a merge begun earlier."""

INDEX_STRUCTURE = "SELECT block FROM messages_fts_data WHERE id = 10"
"""FTS5's structure record (its segments and levels): unchanged by a merge step that did nothing."""
LATER_STRUCTURE = b"\xff\x00\x00\x01"
"""After the structure record's 4-byte cookie in later FTS5 versions (3.40: the levels)."""

BULK_ROWS = 1000
"""A store that ingested at least this many messages (in one call or many) finishes
FTS5's pending merges when it closes."""

PENDING_SETTING = "SELECT v FROM messages_fts_config WHERE k = 'hashsize'"
SET_PENDING = "INSERT INTO messages_fts (messages_fts, rank) VALUES ('hashsize', ?)"

WRITTEN = "COALESCE(m.timestamp, s.started_at)"
"""When a message (``m``) was written: its own stamp, else its session's (``s``) start."""

SEARCHED = (
    "CASE WHEN m.tool_calls IS NULL AND m.tool_name = '' THEN m.content ELSE "
    "(SELECT group_concat(part, char(10)) FROM (SELECT m.content AS part "
    "UNION ALL SELECT m.tool_name UNION ALL "
    "SELECT json_extract(value, '$.function.name') || char(10) || json_extract(value, "
    "'$.function.arguments') FROM json_each(iif(json_valid(m.tool_calls), m.tool_calls, '[]'))) "
    "WHERE part <> '') END")
"""A hit's text: what the index holds of its message (``m``: content, tool name, tool calls),
so a ranker re-scoring hits sees the words that matched (see ``Message.text_for_search``);
torn tool calls add nothing (a read names them: json_each failed the whole search)."""

HIT_BYTES = 4 * LONGEST_READ + 1
"""The bytes of a hit's text read: all of it when shorter, so every text of at most
:data:`~harkback.stages.long_text.LONGEST_READ` characters is read whole and a longer one is
known to be longer (:func:`~harkback.adapters.stores.sql.rows.hit_text`)."""

HIT_TEXT = f"substr(CAST(({SEARCHED}) AS BLOB), 1, {HIT_BYTES})"
"""The start of :data:`SEARCHED`, cut as bytes: SQLite's substr of a text stops at a NUL. (Asking
a huge text's size first, to send a short one as a text, reads the text twice: 80 MB more.)"""

_HIT_COLUMNS = f"m.session_id, m.position, m.role, {WRITTEN}, s.source"
"""A hit's columns in the search statements, which then give its rank and row id; its text is
read by :func:`hit_texts` once they are done. A huge text is read whole before it is cut, and
FTS5's ``bm25()`` of a message holding a word millions of times holds every place of it: read
in the same statement, the two took 260 MB at once (84 MB message)."""


def hit_texts(ids: Sequence[int]) -> Statement:
    """The row id and :data:`HIT_TEXT` of each of these messages.

    >>> hit_texts([3, 1]).params
    ('[1, 3]',)
    """
    # In row order, the lookups read the table's pages in order.
    return Statement(f"SELECT m.id, {HIT_TEXT} FROM json_each(?) AS j "
                     "JOIN messages AS m ON m.id = j.value", (json.dumps(sorted(ids)),))


def row_filters(query: MatchQuery | NearestQuery) -> tuple[list[str], list[SqlValue]]:
    """The conditions of the query's roles, sources, projects and time bounds (:data:`WRITTEN`),
    over ``m`` (messages) joined to ``s`` (sessions), and their values.

    >>> row_filters(NearestQuery(vector=(1.0,), model="m", roles=("user",), since=2.0))[1]
    ['["user"]', '[]', 2.0]
    """
    conditions = [
        "m.role IN (SELECT value FROM json_each(?))",
        "s.source NOT IN (SELECT value FROM json_each(?))",
    ]
    params: list[SqlValue] = [json_list(query.roles), json_list(query.hidden_sources)]
    if query.sources or query.projects:
        conditions.append(SCOPE)
        params += scope(query.sources, query.projects)
    if query.since is not None:
        conditions.append(f"{WRITTEN} >= ?")
        params.append(query.since)
    if query.until is not None:
        conditions.append(f"{WRITTEN} <= ?")
        params.append(query.until)
    return conditions, params


def _filters(query: MatchQuery, expression: Node, *, per_session: bool = False
             ) -> tuple[list[str], list[SqlValue]]:
    conditions, params = row_filters(query)
    if query.exclude_sessions:
        conditions.append("m.session_id NOT IN (SELECT value FROM json_each(?))")
        params.append(json_list(query.exclude_sessions))
    if query.excluded is not None:
        conditions.append(EXCLUDED_PER_SESSION if per_session else EXCLUDED_SESSIONS)
        params += [to_fts5(query.excluded), json_list(query.roles)]
    return ["messages_fts MATCH ?", *conditions], [to_fts5(expression), *params]


EXCLUDED_SESSIONS = (
    "m.session_id NOT IN (SELECT x.session_id FROM messages AS x "
    "WHERE x.id IN (SELECT rowid FROM messages_fts(?)) "
    "AND x.role IN (SELECT value FROM json_each(?)))")
"""A query's ``excluded`` part: no message of a session holding a message (of the searched
roles) that matches it, whenever that message was written."""

EXCLUDED_PER_SESSION = (
    "NOT EXISTS (SELECT 1 FROM messages AS x WHERE x.session_id = m.session_id "
    "AND x.id IN (SELECT rowid FROM messages_fts(?)) "
    "AND x.role IN (SELECT value FROM json_each(?)))")
""":data:`EXCLUDED_SESSIONS` asked of each row's session: the same rows. The set form reads
the row of every message matching the ``NOT`` part (~300 ms for "error" at 1M, however
few rows are checked); this one lists only their ids and reads the index entries of
each checked row's session (~10 us a row), so it is the cheaper one when the ``NOT``
part is common and few rows are checked (the store decides:
:func:`~harkback.adapters.stores.sqlite_search.many_excluded`)."""


_HIT_FROM = (
    "FROM messages_fts "
    "JOIN messages AS m ON m.id = messages_fts.rowid "
    "JOIN sessions AS s ON s.id = m.session_id "
)


def search(query: MatchQuery, *, expression: Node | None = None,
           within: Node | None = None, per_session: bool = False) -> Statement:
    """Messages matching ``expression`` (default: the query's), best BM25 first, filtered.

    ``within`` further keeps only rows that also match it; it is not scored, and FTS5
    finds the rows matching both once. ``per_session`` checks the ``NOT`` part row by
    row (:data:`EXCLUDED_PER_SESSION`), for searches that match few rows. The last
    column is the row id (the columns: :data:`_HIT_COLUMNS`, rank, row id).

    >>> from harkback.stages.query import parse_query
    >>> q = MatchQuery(expression=parse_query("docker").expression, roles=("user",), since=5.0)
    >>> search(q).params
    ('("docker")', '["user"]', '[]', 5.0, 50)
    """
    matched = query.expression if expression is None else expression
    conditions, params = _filters(query, matched, per_session=per_session)
    if within is not None:
        # The unary ``+`` keeps SQLite from handing each row id of the list back to FTS5
        # as a rowid constraint: FTS5 would set up the whole MATCH again per row (~0.3 ms
        # with a prefix term, 10 ms with a one-letter prefix, ×1000s of rows). Matching
        # ``expression`` once and checking each row against the list gives the same rows.
        conditions.append("+messages_fts.rowid IN (SELECT rowid FROM messages_fts(?))")
        params.append(to_fts5(AllOf((matched, within))))
    params.append(query.limit)
    sql = (
        f"SELECT {_HIT_COLUMNS}, bm25(messages_fts) AS rank, m.id {_HIT_FROM}"
        f"WHERE {' AND '.join(conditions)} "
        "ORDER BY rank, m.id LIMIT ?"
    )
    return Statement(sql, tuple(params))


def search_in_order(query: MatchQuery, *, expression: Node | None = None,
                    per_session: bool = False) -> Statement:
    """:func:`search`'s rows (``within`` aside) in its order, unlimited: FTS5's matches
    ranked first, then joined to their messages and sessions and filtered one by one in
    that order, so a caller that reads only the first ``query.limit`` rows joins no more
    matches than it takes to find them (the reading side checks the order).

    >>> from harkback.stages.query import parse_query
    >>> q = MatchQuery(expression=parse_query("docker").expression, roles=("user",))
    >>> search_in_order(q).params
    ('("docker")', '["user"]', '[]')
    """
    matched = query.expression if expression is None else expression
    conditions, params = _filters(query, matched, per_session=per_session)
    match_condition = conditions.pop(0)
    # The subquery's LIMIT keeps its ORDER BY (SQLite drops one it thinks does not
    # matter), and CROSS JOIN makes it the outer loop (SQLite never reorders the tables
    # of a CROSS JOIN), so its rows are read in that order: a first row is the best.
    return Statement(
        f"SELECT {_HIT_COLUMNS}, best.rank AS rank, m.id "
        "FROM (SELECT rowid AS id, bm25(messages_fts) AS rank FROM messages_fts "
        f"WHERE {match_condition} ORDER BY rank, rowid LIMIT -1) AS best "
        "CROSS JOIN messages AS m ON m.id = best.id "
        "CROSS JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {' AND '.join(conditions)}",
        tuple(params))


def _ranked_cut(match_condition: str) -> str:
    """FTS5's best matches (the ``LIMIT ?`` parameter: how many), each with its id, its
    BM25 rank and its place (from 1) in (rank, id) order: the cut both ranked reads join."""
    return ("SELECT id, rank, ROW_NUMBER() OVER (ORDER BY rank, id) AS place "
            "FROM (SELECT rowid AS id, bm25(messages_fts) AS rank FROM messages_fts "
            f"WHERE {match_condition} ORDER BY rank, rowid LIMIT ?)")


def ranked_search(query: MatchQuery, fetch: int, *, per_session: bool = False) -> Statement:
    """Like :func:`search`, but FTS5 ranks first and only its best ``fetch`` rows are joined.

    The filters apply after that cut, so fewer than ``query.limit`` rows may survive
    although more match. The survivors come with their place (from 1) in FTS5's order,
    then -1, in two extra columns; one last row, otherwise empty, holds in the last column
    how many rows FTS5 handed over: when that is less than ``fetch`` the cut
    dropped nothing, even when no row survived. Whenever ``query.limit`` rows survive
    they are exactly :func:`search`'s rows: both order by (bm25, row id), so the
    survivors are a prefix of its filtered order.

    >>> from harkback.stages.query import parse_query
    >>> q = MatchQuery(expression=parse_query("docker").expression, roles=("user",))
    >>> ranked_search(q, 200).params
    ('("docker")', 200, '["user"]', '[]', 50)
    """
    conditions, params = _filters(query, query.expression, per_session=per_session)
    match_condition, match_param = conditions.pop(0), params.pop(0)
    # The filters read each ranked row's message and session, and the kept rows take their
    # columns from there (the text is read apart: hit_texts).
    sql = (
        f"WITH best AS MATERIALIZED ({_ranked_cut(match_condition)}), "
        f"kept AS MATERIALIZED (SELECT {_HIT_COLUMNS}, best.rank AS rank, best.id AS id, "
        "best.place AS place FROM best JOIN messages AS m ON m.id = best.id "
        "JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {' AND '.join(conditions)} ORDER BY best.rank, best.id LIMIT ?) "
        "SELECT *, -1 AS fetched FROM kept "
        "UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, COUNT(*) "
        "FROM best ORDER BY fetched, rank, id"
    )
    return Statement(sql, (match_param, fetch, *params, query.limit))


def ranked_in_order(query: MatchQuery, fetch: int, *, per_session: bool = False) -> Statement:
    """:func:`ranked_search`'s survivors with their places, unlimited and without the count
    row, read in FTS5's order: the best ``fetch`` matches are ranked first, then joined and
    filtered one by one, so a caller that reads ``query.limit`` rows joins no more of the
    cut than it takes to find them (the reading side checks the places rise).

    >>> from harkback.stages.query import parse_query
    >>> q = MatchQuery(expression=parse_query("docker").expression, roles=("user",))
    >>> ranked_in_order(q, 200).params
    ('("docker")', 200, '["user"]', '[]')
    """
    conditions, params = _filters(query, query.expression, per_session=per_session)
    match_condition, match_param = conditions.pop(0), params.pop(0)
    # As in search_in_order: CROSS JOIN keeps the ranked rows the outer loop.
    return Statement(
        f"SELECT {_HIT_COLUMNS}, best.rank AS rank, m.id, best.place AS place "
        f"FROM ({_ranked_cut(match_condition)}) AS best "
        "CROSS JOIN messages AS m ON m.id = best.id "
        "CROSS JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {' AND '.join(conditions)}",
        (match_param, fetch, *params))


def newest(query: MatchQuery, *, skip: Iterable[int], limit: int, below: int | None = None,
           at_least: int | None = None, expression: Node | None = None,
           per_session: bool = False) -> Statement:
    """The newest messages matching the query, filtered as it says, with score 0.

    Nothing is scored and the index is read newest first, so the cost stays near
    ``limit`` rows however common the terms are. Row ids in ``skip`` are left out, with
    ``below`` every row id from it up, and with ``at_least`` every row id below it.
    ``expression`` stands in for the query's when it matches the same rows;
    ``per_session`` as in :func:`search`.

    >>> from harkback.stages.query import parse_query
    >>> q = MatchQuery(expression=parse_query("dock*").expression, roles=("user",))
    >>> newest(q, skip=(), limit=5, below=90).params
    ('"dock"*', '["user"]', '[]', '[]', 90, 5)
    """
    conditions, params = _filters(query, query.expression if expression is None else expression,
                                  per_session=per_session)
    conditions.append("m.id NOT IN (SELECT value FROM json_each(?))")
    params.append(json.dumps(list(skip)))
    if below is not None:
        conditions.append("messages_fts.rowid < ?")
        params.append(below)
    if at_least is not None:
        conditions.append("messages_fts.rowid >= ?")
        params.append(at_least)
    params.append(limit)
    return Statement(
        f"SELECT {_HIT_COLUMNS}, 0.0 AS rank, m.id {_HIT_FROM}"
        f"WHERE {' AND '.join(conditions)} "
        "ORDER BY messages_fts.rowid DESC LIMIT ?",
        tuple(params))


def newest_beyond(unit: Node, cap: int) -> Statement:
    """The row id of the ``cap + 1``-th newest message matching ``unit``, a row only when
    more than ``cap`` match (as :func:`count_matches` tells): the newest ``cap + 1`` are
    then the matches from that id up.

    >>> from harkback.stages.query import Term
    >>> newest_beyond(Term("dock", prefix=True), 2000).params
    ('"dock"*', 2000)
    """
    return Statement(
        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? "
        "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (to_fts5(unit), cap))


def count_matches(unit: Node, cap: int) -> Statement:
    """How many messages match ``unit``, counting no further than ``cap + 1``.

    >>> from harkback.stages.query import Term
    >>> count_matches(Term("docker"), 2000).params
    ('"docker"', 2001)
    """
    return Statement(
        "SELECT COUNT(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)",
        (to_fts5(unit), cap + 1))


def end_matches(unit: Node, cap: int, *, newest: bool) -> Statement:
    """Of the newest (or the oldest) ``cap + 1`` messages matching ``unit``: how many,
    lowest and highest id.

    Reads at most ``cap + 1`` postings, however common the term.

    >>> from harkback.stages.query import Term
    >>> end_matches(Term("bike"), 2000, newest=True).params
    ('"bike"', 2001)
    >>> "ORDER BY rowid ASC" in end_matches(Term("bike"), 2000, newest=False).sql
    True
    """
    return Statement(
        "SELECT COUNT(*), MIN(rowid), MAX(rowid) FROM (SELECT rowid FROM messages_fts "
        f"WHERE messages_fts MATCH ? ORDER BY rowid {'DESC' if newest else 'ASC'} LIMIT ?)",
        (to_fts5(unit), cap + 1))


def token_lengths(ids: Sequence[int]) -> Statement:
    """Each message's length in index tokens, from FTS5's record of it: a varint per column,
    the first (:func:`read_varint`) that of the only one.

    >>> token_lengths([7]).params
    ('[7]',)
    """
    return Statement("SELECT id, sz FROM messages_fts_docsize "
                     "WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),))


INDEX_TOTALS = "SELECT block FROM messages_fts_data WHERE id = 1"
"""FTS5's totals record: the number of rows indexed, then the tokens of each column."""


def decode_totals(block: bytes | None) -> tuple[int, int]:
    """Rows and tokens indexed, from FTS5's totals record (two SQLite varints).

    >>> decode_totals(bytes([0x02, 0x05])), decode_totals(bytes([0x81, 0x00, 0x07]))
    ((2, 5), (128, 7))
    >>> decode_totals(None)
    (0, 0)
    """
    values: list[int] = []
    data = block or b""
    at = 0
    while len(values) < 2 and at < len(data):
        value, at = read_varint(data, at)
        values.append(value)
    values += [0] * (2 - len(values))
    return values[0], values[1]


def read_varint(data: bytes, at: int) -> tuple[int, int]:
    """The SQLite varint at ``at`` in ``data`` (seven bits a byte, high first; a ninth
    byte gives all eight), and where the next value starts.

    >>> read_varint(bytes([0x81, 0x00, 0x07]), 0), read_varint(bytes([0x05]), 0)
    ((128, 2), (5, 1))
    """
    value = 0
    for i in range(9):
        byte = data[at]
        at += 1
        if i == 8:
            return (value << 8) | byte, at
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value, at
