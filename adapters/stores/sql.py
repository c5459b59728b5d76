"""SQL for the SQLite session store, built by pure functions and executed elsewhere.

Every value is bound as a parameter; id lists travel as one JSON array read with
``json_each``, so a statement's text never depends on the data and never hits
SQLite's limit on bound variables. User text reaches ``MATCH`` only through
:func:`harkback.stages.query.to_fts5`.

>>> statement = sessions_by_id(["s1", "s2"])
>>> statement.params
('["s1", "s2"]',)
>>> decode_tool_calls(encode_tool_calls((ToolCall(id="c1", name="bash", arguments="ls"),)))
(ToolCall(id='c1', name='bash', arguments='ls'),)
"""

from __future__ import annotations

import json
import math
import re
import sys
from array import array
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any, cast

import attrs

from harkback.stages.embedding import BLANK
from harkback.stages.ports import MatchQuery, NearestQuery, RecentQuery, Vector
from harkback.stages.query import AllOf, Node, Term, Unit, to_fts5
from harkback.stages.records import (
    Conversation,
    Message,
    MessageHit,
    Role,
    Session,
    SessionOverview,
    ToolCall,
)
from harkback.stages.text.tokens import index_text

SqlValue = str | int | float | bytes | None
Row = Sequence[Any]

SCHEMA_VERSION = 1
"""Stored in ``PRAGMA user_version``; bump it when the schema or the indexed text changes."""

APPLICATION_ID = 0x6861726B
"""Stored in ``PRAGMA application_id`` ("hark"): marks a file as a harkback database."""

PREVIEW_CHARS = 200

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        source TEXT NOT NULL DEFAULT '',
        model TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT '',
        started_at REAL,
        ended_at REAL,
        parent_session_id TEXT,
        end_reason TEXT NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX sessions_parent ON sessions (parent_session_id)",
    "CREATE INDEX sessions_started ON sessions (started_at)",
    # UNIQUE (session_id, position) is also the index that serves lookups by session_id.
    """CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        session_id TEXT NOT NULL,
        position INTEGER NOT NULL CHECK (position >= 0),
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'system')),
        content TEXT NOT NULL DEFAULT '',
        tool_name TEXT NOT NULL DEFAULT '',
        tool_call_id TEXT NOT NULL DEFAULT '',
        tool_calls TEXT,
        timestamp REAL,
        UNIQUE (session_id, position)
    )""",
    # Contentless: the text lives in messages; the index holds index_text() of it, and
    # rows are deleted by recomputing that same text.
    """CREATE VIRTUAL TABLE messages_fts USING fts5(
        body, content='', tokenize='unicode61 remove_diacritics 2'
    )""",
)

MERGE_INDEX = "INSERT INTO messages_fts(messages_fts) VALUES('optimize')"
"""Merge every segment of the full-text index into one (FTS5's 'optimize' command)."""

_SESSION_COLUMNS = "id, source, model, title, started_at, ended_at, parent_session_id, end_reason"
_MESSAGE_COLUMNS = ("session_id, position, role, content, tool_name, tool_call_id, tool_calls, "
                    "timestamp")


@attrs.frozen
class Statement:
    """One SQL statement and the values bound to its ``?`` placeholders."""

    sql: str
    params: tuple[SqlValue, ...] = ()


def _json_list(values: Iterable[str]) -> str:
    return json.dumps(list(dict.fromkeys(values)), ensure_ascii=False)


# --- reading ------------------------------------------------------------------------------

WRITTEN = "COALESCE(m.timestamp, s.started_at)"
"""When a message (``m``) was written: its own stamp, else its session's (``s``) start."""


def _row_filters(query: MatchQuery | NearestQuery) -> tuple[list[str], list[SqlValue]]:
    # Roles, hidden sources and time bounds (WRITTEN) over ``m`` (messages) joined to
    # ``s`` (sessions).
    conditions = [
        "m.role IN (SELECT value FROM json_each(?))",
        "s.source NOT IN (SELECT value FROM json_each(?))",
    ]
    params: list[SqlValue] = [_json_list(query.roles), _json_list(query.hidden_sources)]
    if query.since is not None:
        conditions.append(f"{WRITTEN} >= ?")
        params.append(query.since)
    if query.until is not None:
        conditions.append(f"{WRITTEN} <= ?")
        params.append(query.until)
    return conditions, params


def _filters(query: MatchQuery, expression: Node) -> tuple[list[str], list[SqlValue]]:
    conditions, params = _row_filters(query)
    return ["messages_fts MATCH ?", *conditions], [to_fts5(expression), *params]


_HIT_FROM = (
    "FROM messages_fts "
    "JOIN messages AS m ON m.id = messages_fts.rowid "
    "JOIN sessions AS s ON s.id = m.session_id "
)


def search(query: MatchQuery, *, expression: Node | None = None,
           within: Node | None = None) -> Statement:
    """Messages matching ``expression`` (default: the query's), best BM25 first, filtered.

    ``within`` further keeps only rows that also match it; it is not scored, so its
    common terms cost a seek per row, not a walk over their posting lists. The last
    column is the row id.

    >>> from harkback.stages.query import parse_query
    >>> q = MatchQuery(expression=parse_query("docker").expression, roles=("user",), since=5.0)
    >>> search(q).params
    ('("docker")', '["user"]', '[]', 5.0, 50)
    """
    matched = query.expression if expression is None else expression
    conditions, params = _filters(query, matched)
    if within is not None:
        conditions.append("messages_fts.rowid IN (SELECT rowid FROM messages_fts(?))")
        params.append(to_fts5(AllOf((matched, within))))
    params.append(query.limit)
    sql = (
        f"SELECT m.session_id, m.position, m.role, m.content, {WRITTEN}, s.source, "
        f"bm25(messages_fts) AS rank, m.id {_HIT_FROM}"
        f"WHERE {' AND '.join(conditions)} "
        "ORDER BY rank, m.id LIMIT ?"
    )
    return Statement(sql, tuple(params))


def ranked_search(query: MatchQuery, fetch: int) -> Statement:
    """Like :func:`search`, but FTS5 ranks first and only its best ``fetch`` rows are joined.

    The filters apply after that cut, so fewer than ``query.limit`` rows may survive
    although more match. The survivors come with -1 in an extra column, then their place
    (from 1) in FTS5's order; one last row, otherwise empty, holds in the first extra
    column how many rows FTS5 handed over: when that is less than ``fetch`` the cut
    dropped nothing, even when no row survived. Whenever ``query.limit`` rows survive
    they are exactly :func:`search`'s rows: both order by (bm25, row id), so the
    survivors are a prefix of its filtered order.

    >>> from harkback.stages.query import parse_query
    >>> q = MatchQuery(expression=parse_query("docker").expression, roles=("user",))
    >>> ranked_search(q, 200).params
    ('("docker")', 200, '["user"]', '[]', 50)
    """
    conditions, params = _filters(query, query.expression)
    match_condition, match_param = conditions.pop(0), params.pop(0)
    sql = (
        "WITH best AS MATERIALIZED (SELECT id, rank, ROW_NUMBER() OVER (ORDER BY rank, id) "
        "AS place FROM (SELECT rowid AS id, bm25(messages_fts) AS rank "
        f"FROM messages_fts WHERE {match_condition} ORDER BY rank, rowid LIMIT ?)) "
        f"SELECT * FROM (SELECT m.session_id, m.position, m.role, m.content, {WRITTEN}, "
        "s.source, best.rank AS rank, m.id AS id, -1 AS fetched, best.place AS place "
        "FROM best JOIN messages AS m ON m.id = best.id "
        "JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {' AND '.join(conditions)} ORDER BY best.rank, m.id LIMIT ?) "
        "UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, COUNT(*), NULL "
        "FROM best ORDER BY fetched, rank, id"
    )
    return Statement(sql, (match_param, fetch, *params, query.limit))


def newest(query: MatchQuery, *, skip: Iterable[int], limit: int) -> Statement:
    """The newest messages matching the query, filtered as it says, with score 0.

    Nothing is scored and the index is read newest first, so the cost stays near
    ``limit`` rows however common the terms are. Row ids in ``skip`` are left out.
    """
    conditions, params = _filters(query, query.expression)
    conditions.append("m.id NOT IN (SELECT value FROM json_each(?))")
    params += [json.dumps(list(skip)), limit]
    return Statement(
        f"SELECT m.session_id, m.position, m.role, m.content, {WRITTEN}, s.source, "
        f"0.0 AS rank, m.id {_HIT_FROM}"
        f"WHERE {' AND '.join(conditions)} "
        "ORDER BY messages_fts.rowid DESC LIMIT ?",
        tuple(params))


def count_matches(unit: Unit, cap: int) -> Statement:
    """How many messages match ``unit``, counting no further than ``cap + 1``.

    >>> from harkback.stages.query import Term
    >>> count_matches(Term("docker"), 2000).params
    ('"docker"', 2001)
    """
    return Statement(
        "SELECT COUNT(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ? LIMIT ?)",
        (to_fts5(unit), cap + 1))


def newest_matches(term: str, cap: int) -> Statement:
    """Of the newest ``cap + 1`` messages matching ``term``: how many, lowest and highest id.

    Reads at most ``cap + 1`` postings, however common the term.

    >>> newest_matches("bike", 2000).params
    ('"bike"', 2001)
    """
    return Statement(
        "SELECT COUNT(*), MIN(rowid), MAX(rowid) FROM (SELECT rowid FROM messages_fts "
        "WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?)",
        (to_fts5(Term(term)), cap + 1))


def oldest_matches(term: str, cap: int) -> Statement:
    """Of the oldest ``cap + 1`` messages matching ``term``: how many, lowest and highest id.

    >>> oldest_matches("bike", 2000).params
    ('"bike"', 2001)
    """
    return Statement(
        "SELECT COUNT(*), MIN(rowid), MAX(rowid) FROM (SELECT rowid FROM messages_fts "
        "WHERE messages_fts MATCH ? ORDER BY rowid ASC LIMIT ?)",
        (to_fts5(Term(term)), cap + 1))


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
        value = 0
        for i in range(9):
            byte = data[at]
            at += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        values.append(value)
    values += [0] * (2 - len(values))
    return values[0], values[1]


def sessions_by_id(ids: Iterable[str]) -> Statement:
    """The sessions with these ids, in the order asked (duplicates and unknown ids dropped)."""
    return Statement(
        f"SELECT {', '.join('s.' + c for c in _SESSION_COLUMNS.split(', '))} "
        "FROM json_each(?) AS j JOIN sessions AS s ON s.id = j.value ORDER BY j.key",
        (_json_list(ids),))


def children_of(ids: Iterable[str]) -> Statement:
    """Sessions whose parent is one of ``ids``, earliest first (unknown start last)."""
    return Statement(
        f"SELECT {_SESSION_COLUMNS} FROM sessions "
        "WHERE parent_session_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY started_at IS NULL, started_at, id",
        (_json_list(ids),))


def messages_of(session_ids: Iterable[str]) -> Statement:
    """All messages of these sessions, by session start (unknown last), then position."""
    columns = ", ".join("m." + c for c in _MESSAGE_COLUMNS.split(", "))
    return Statement(
        f"SELECT {columns} FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        "WHERE m.session_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY s.started_at IS NULL, s.started_at, m.session_id, m.position",
        (_json_list(session_ids),))


def recent(query: RecentQuery) -> Statement:
    """Root sessions newest first, with their message count and first user message."""
    # The counts and previews are computed only for the rows that survive the LIMIT.
    # SQLite sorts NULL below every value, so "started_at DESC" already puts unknown
    # starts last, and in this form the sessions_started index serves the LIMIT.
    return Statement(
        f"SELECT {_SESSION_COLUMNS}, "
        "(SELECT COUNT(*) FROM messages AS m WHERE m.session_id = r.id), "
        "(SELECT m.content FROM messages AS m WHERE m.session_id = r.id AND m.role = 'user' "
        " ORDER BY m.position LIMIT 1) "
        f"FROM (SELECT {_SESSION_COLUMNS} FROM sessions AS s "
        "      WHERE NOT EXISTS (SELECT 1 FROM sessions AS p WHERE p.id = s.parent_session_id) "
        "        AND s.id NOT IN (SELECT value FROM json_each(?)) "
        "        AND s.source NOT IN (SELECT value FROM json_each(?)) "
        "        AND (? IS NULL OR s.started_at >= ?) AND (? IS NULL OR s.started_at <= ?) "
        "      ORDER BY s.started_at DESC, s.id LIMIT ?) AS r "
        "ORDER BY r.started_at DESC, r.id",
        (_json_list(query.exclude_roots), _json_list(query.hidden_sources),
         query.since, query.since, query.until, query.until, query.limit))


# --- writing ------------------------------------------------------------------------------

MAX_MESSAGE_ID = "SELECT COALESCE(MAX(id), 0) FROM messages"

UPSERT_SESSION = (
    f"INSERT INTO sessions ({_SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET source = excluded.source, model = excluded.model, "
    "title = excluded.title, started_at = excluded.started_at, ended_at = excluded.ended_at, "
    "parent_session_id = excluded.parent_session_id, end_reason = excluded.end_reason"
)

# A message kept by a re-ingest is updated in place, not deleted and inserted again: the
# triggers of VECTOR_SCHEMA drop the vectors of deleted rows and of rows whose content
# changes, so an unchanged message keeps its vectors.
UPSERT_MESSAGE = (
    f"INSERT INTO messages (id, {_MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _MESSAGE_COLUMNS.split(", "))
)

INSERT_INDEXED = "INSERT INTO messages_fts (rowid, body) VALUES (?, ?)"

DELETE_INDEXED = "INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', ?, ?)"


def existing_sessions(ids: Iterable[str]) -> Statement:
    """The ids among ``ids`` that are already stored."""
    return Statement("SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?))",
                     (_json_list(ids),))


def stored_messages(session_ids: Iterable[str]) -> Statement:
    """Row id and fields of every message of these sessions (to unindex them)."""
    return Statement(
        f"SELECT id, {_MESSAGE_COLUMNS} FROM messages "
        "WHERE session_id IN (SELECT value FROM json_each(?))",
        (_json_list(session_ids),))


@attrs.frozen
class WritePlan:
    """The rows an ingest writes: index rows to delete, message rows and index rows to insert."""

    unindex: tuple[tuple[int, str], ...]
    messages: tuple[tuple[SqlValue, ...], ...]
    index: tuple[tuple[int, str], ...]

    @property
    def dropped(self) -> tuple[int, ...]:
        """Row ids of stored messages that are not kept (every row that is unindexed)."""
        return tuple(row_id for row_id, _ in self.unindex)


def plan_write(batch: Iterable[Conversation], stored: Iterable[tuple[int, Message]],
               next_id: int) -> WritePlan:
    """Plan replacing the ``stored`` messages of the batch's sessions with the batch's messages.

    A message whose searchable text is unchanged keeps its row id and index row, so
    re-ingesting a session that only grew indexes only its new messages. ``next_id``
    must exceed every row id in use.

    >>> old = Message(session_id="s", position=0, role="user", content="same")
    >>> new = Message(session_id="s", position=1, role="user", content="added")
    >>> plan = plan_write([Conversation(Session(id="s"), (old, new))], [(7, old)], next_id=9)
    >>> plan.unindex, [row[0] for row in plan.messages], plan.index
    ((), [7, 9], ((9, 'added'),))
    """
    previous = {(m.session_id, m.position): (row_id, m) for row_id, m in stored}
    kept: set[int] = set()
    rows: list[tuple[SqlValue, ...]] = []
    index: list[tuple[int, str]] = []
    for conversation in batch:
        for message in conversation.messages:
            text = message.text_for_search()
            old = previous.get((message.session_id, message.position))
            if old is not None and old[1].text_for_search() == text:
                row_id = old[0]
                kept.add(row_id)
            else:
                row_id = next_id
                next_id += 1
                index.append((row_id, index_text(text)))
            rows.append(message_row(row_id, message))
    unindex = tuple((row_id, index_text(m.text_for_search()))
                    for row_id, m in previous.values() if row_id not in kept)
    return WritePlan(unindex=unindex, messages=tuple(rows), index=tuple(index))


def delete_message_rows(row_ids: Iterable[int]) -> Statement:
    """Remove the messages with these row ids.

    >>> delete_message_rows([3, 5]).params
    ('[3, 5]',)
    """
    return Statement("DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                     (json.dumps(list(row_ids)),))


# --- dense vectors ------------------------------------------------------------------------

VECTOR_SCHEMA: tuple[str, ...] = (
    # One row per embedding model. The triggers below keep ``vectors`` (so counting is one
    # lookup) and ``generation`` (bumped by every change to the model's vectors, so a
    # matrix cached in memory knows when it is stale, whichever connection wrote).
    """CREATE TABLE IF NOT EXISTS vector_models (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        dimensions INTEGER NOT NULL CHECK (dimensions > 0),
        vectors INTEGER NOT NULL DEFAULT 0,
        generation INTEGER NOT NULL DEFAULT 0
    )""",
    # Keyed by the message's row id. A rowid table keeps a vector of a few KiB in its leaf
    # page; WITHOUT ROWID would push every row of that size to an overflow page.
    """CREATE TABLE IF NOT EXISTS message_vectors (
        model_id INTEGER NOT NULL,
        message_id INTEGER NOT NULL,
        vector BLOB NOT NULL,
        UNIQUE (model_id, message_id)
    )""",
    "CREATE INDEX IF NOT EXISTS message_vectors_message ON message_vectors (message_id)",
    """CREATE TRIGGER IF NOT EXISTS message_vectors_added AFTER INSERT ON message_vectors
    BEGIN
        UPDATE vector_models SET vectors = vectors + 1, generation = generation + 1
        WHERE id = new.model_id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS message_vectors_removed AFTER DELETE ON message_vectors
    BEGIN
        UPDATE vector_models SET vectors = vectors - 1, generation = generation + 1
        WHERE id = old.model_id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS message_vectors_replaced AFTER UPDATE ON message_vectors
    BEGIN
        UPDATE vector_models SET generation = generation + 1
        WHERE id IN (old.model_id, new.model_id);
    END""",
    # A vector describes its message's content: it goes with the message, or when the
    # content changes. These live in the file, so every writer of it obeys them (an older
    # harkback that knows nothing of vectors too).
    """CREATE TRIGGER IF NOT EXISTS message_vectors_message_removed AFTER DELETE ON messages
    BEGIN
        DELETE FROM message_vectors WHERE message_id = old.id;
    END""",
    """CREATE TRIGGER IF NOT EXISTS message_vectors_message_changed
    AFTER UPDATE OF id, content ON messages
    WHEN old.id IS NOT new.id OR old.content IS NOT new.content
    BEGIN
        DELETE FROM message_vectors WHERE message_id = old.id;
    END""",
)
"""Tables for dense vectors, added to any writable database that lacks them.

Every statement is ``IF NOT EXISTS``, so files of schema version 1 made before vectors
existed gain them without a version bump (older harkback versions still open them).
"""

VECTOR_OBJECTS = ("vector_models", "message_vectors", "message_vectors_message",
                  "message_vectors_added", "message_vectors_removed",
                  "message_vectors_replaced", "message_vectors_message_removed",
                  "message_vectors_message_changed")
"""The names :data:`VECTOR_SCHEMA` creates."""

VECTOR_OBJECT_COUNT = (
    "SELECT COUNT(*) FROM sqlite_master WHERE name IN (SELECT value FROM json_each(?))")
"""How many of the names bound (as a JSON list) exist in the schema."""

VECTOR_MODEL = "SELECT id, dimensions, vectors, generation FROM vector_models WHERE name = ?"

ADD_VECTOR_MODEL = "INSERT INTO vector_models (name, dimensions) VALUES (?, ?)"

SET_VECTOR_DIMENSIONS = "UPDATE vector_models SET dimensions = ? WHERE id = ?"

UPSERT_VECTOR = (
    "INSERT INTO message_vectors (model_id, message_id, vector) VALUES (?, ?, ?) "
    "ON CONFLICT (model_id, message_id) DO UPDATE SET vector = excluded.vector")

MODEL_VECTORS = (
    "SELECT message_id, vector FROM message_vectors WHERE model_id = ? ORDER BY message_id")


def message_rows(keys: Sequence[tuple[str, int]]) -> Statement:
    """The row ids of the messages at these (session id, position) keys, with each key's index.

    >>> message_rows([("s1", 0), ("s2", 3)]).params
    ('[["s1", 0], ["s2", 3]]',)
    """
    return Statement(
        "SELECT j.key, m.id FROM json_each(?) AS j JOIN messages AS m "
        "ON m.session_id = json_extract(j.value, '$[0]') "
        "AND m.position = json_extract(j.value, '$[1]')",
        (json.dumps([list(key) for key in keys], ensure_ascii=False),))


def unembedded(model: str, roles: Iterable[Role], start: int, limit: int, *,
               vectors: bool = True) -> Statement:
    """Row id and fields of messages of ``roles``, from row id ``start`` on, whose content
    is not blank and that have no vector of ``model``, in row id order.

    With ``vectors=False`` (a database without the vector tables) no message has one.

    >>> unembedded("m", ["user"], 1, 10).params
    (1, '["user"]', 'm', ' \\t\\r\\n', 10)
    """
    columns = ", ".join("m." + c for c in _MESSAGE_COLUMNS.split(", "))
    missing = (
        "AND NOT EXISTS (SELECT 1 FROM message_vectors AS v WHERE v.message_id = m.id "
        "AND v.model_id = (SELECT id FROM vector_models WHERE name = ?)) ") if vectors else ""
    params: tuple[SqlValue, ...] = (start, _json_list(roles), *((model,) if vectors else ()),
                                    BLANK, limit)
    return Statement(
        f"SELECT m.id, {columns} FROM messages AS m "
        "WHERE m.id >= ? AND m.role IN (SELECT value FROM json_each(?)) "
        f"{missing}AND trim(m.content, ?) <> '' ORDER BY m.id LIMIT ?",
        params)


def vector_hits(row_ids: Sequence[int], query: NearestQuery, limit: int) -> Statement:
    """The messages with these row ids that pass the query's filters, in the order given.

    The last column is each row's index in ``row_ids``.

    >>> q = NearestQuery(vector=(1.0,), model="m", roles=("user",), until=9.0)
    >>> vector_hits([7, 3], q, 5).params
    ('[7, 3]', '["user"]', '[]', 9.0, 5)
    """
    conditions, params = _row_filters(query)
    return Statement(
        f"SELECT m.session_id, m.position, m.role, m.content, {WRITTEN}, s.source, j.key "
        "FROM json_each(?) AS j JOIN messages AS m ON m.id = j.value "
        "JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {' AND '.join(conditions)} ORDER BY j.key LIMIT ?",
        (json.dumps([int(i) for i in row_ids]), *params, limit))


def admitted_vectors(model_id: int, query: NearestQuery) -> Statement:
    """Row ids of every message with a vector of the model that passes the query's filters."""
    conditions, params = _row_filters(query)
    return Statement(
        "SELECT v.message_id FROM message_vectors AS v "
        "JOIN messages AS m ON m.id = v.message_id JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE v.model_id = ? AND {' AND '.join(conditions)}",
        (model_id, *params))


VECTOR_BYTE_ORDER = "<f4"
"""How a vector is stored: little-endian float32, whatever the machine."""


def encode_vector(vector: Sequence[float]) -> bytes:
    """A vector as a BLOB of little-endian float32 values.

    >>> encode_vector((1.0, -0.5)).hex()
    '0000803f000000bf'
    """
    values = array("f", vector)
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


def decode_vector(blob: bytes) -> Vector:
    """The inverse of :func:`encode_vector`.

    >>> decode_vector(encode_vector((0.25, 1.0)))
    (0.25, 1.0)
    """
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    return tuple(values)


def unit_vector(vector: Sequence[float]) -> Vector:
    """``vector`` scaled to length 1, so dot products are cosines (a zero vector stays zero).

    >>> unit_vector((3.0, 4.0)), unit_vector((0.0, 0.0))
    ((0.6, 0.8), (0.0, 0.0))
    """
    norm = math.hypot(*vector)
    return tuple(vector) if norm == 0 else tuple(x / norm for x in vector)


def vector_problem(model: str, vectors: Sequence[Sequence[float]],
                   stored: int | None = None) -> str | None:
    """Why ``vectors`` cannot be kept for ``model`` whose vectors have ``stored``
    dimensions (None: it has none yet); None when they can.

    >>> vector_problem("m", [(1.0, 0.0), (0.0, 1.0)], stored=3)
    "vectors of model 'm' have 3 dimensions, these have 2 (another model needs another name)"
    >>> vector_problem("m", [(1.0,), (0.0, 1.0)]) is None
    False
    """
    lengths = sorted({len(v) for v in vectors})
    if not lengths:
        return None
    if lengths[0] == 0:
        return f"an empty vector was given for model {model!r}"
    if len(lengths) > 1:
        return (f"vectors given for model {model!r} differ in length "
                f"({', '.join(map(str, lengths))} dimensions)")
    if stored is not None and lengths[0] != stored:
        return (f"vectors of model {model!r} have {stored} dimensions, these have "
                f"{lengths[0]} (another model needs another name)")
    if not all(map(math.isfinite, chain.from_iterable(vectors))):
        return f"a vector given for model {model!r} holds a value that is not a finite number"
    return None


def query_vector_problem(query: NearestQuery, stored: int) -> str | None:
    """Why ``query`` cannot be compared with vectors of ``stored`` dimensions, or None.

    >>> query_vector_problem(NearestQuery(vector=(1.0,), model="m", roles=("user",)), 2)
    "the query vector has 1 dimensions; vectors of model 'm' have 2"
    """
    if len(query.vector) != stored:
        return (f"the query vector has {len(query.vector)} dimensions; vectors of model "
                f"{query.model!r} have {stored}")
    if not all(map(math.isfinite, query.vector)):
        return "the query vector holds a value that is not a finite number"
    return None


# --- rows and records ---------------------------------------------------------------------

def encode_tool_calls(calls: Sequence[ToolCall]) -> str | None:
    """Tool calls as the Chat Completions JSON list, or None when there are none."""
    if not calls:
        return None
    return json.dumps(
        [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
         for c in calls],
        ensure_ascii=False, separators=(",", ":"))


def decode_tool_calls(text: str | None) -> tuple[ToolCall, ...]:
    """The inverse of :func:`encode_tool_calls`."""
    if not text:
        return ()
    return tuple(ToolCall(id=c["id"], name=c["function"]["name"],
                          arguments=c["function"]["arguments"])
                 for c in json.loads(text))


def session_row(session: Session) -> tuple[SqlValue, ...]:
    """A session as the values of :data:`UPSERT_SESSION`."""
    return (session.id, session.source, session.model, session.title, session.started_at,
            session.ended_at, session.parent_session_id, session.end_reason)


def message_row(row_id: int, message: Message) -> tuple[SqlValue, ...]:
    """A message as the values of :data:`UPSERT_MESSAGE`."""
    return (row_id, message.session_id, message.position, message.role, message.content,
            message.tool_name, message.tool_call_id, encode_tool_calls(message.tool_calls),
            message.timestamp)


def session_from_row(row: Row) -> Session:
    """A session from the columns ``id, source, model, title, started_at, ended_at, ...``."""
    return Session(id=row[0], source=row[1], model=row[2], title=row[3], started_at=row[4],
                   ended_at=row[5], parent_session_id=row[6], end_reason=row[7])


def message_from_row(row: Row) -> Message:
    """A message from the columns ``session_id, position, role, content, ...``."""
    return Message(session_id=row[0], position=row[1], role=cast(Role, row[2]), content=row[3],
                   tool_name=row[4], tool_call_id=row[5], tool_calls=decode_tool_calls(row[6]),
                   timestamp=row[7])


def hit_from_row(row: Row) -> MessageHit:
    """A hit from a :func:`search` or :func:`newest` row; score ``-bm25``, higher is better."""
    return MessageHit(session_id=row[0], position=row[1], role=cast(Role, row[2]),
                      content=row[3], timestamp=row[4], source=row[5], score=-row[6])


def overview_from_row(row: Row) -> SessionOverview:
    """An overview from a :func:`recent` row."""
    return SessionOverview(session=session_from_row(row), message_count=row[8],
                           preview=preview(row[9] or ""))


_SPACE = re.compile(r"\s+")


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """``text`` on one line, whitespace collapsed, cut to ``limit`` characters.

    >>> preview("  fix\\n\\n the   bridge ")
    'fix the bridge'
    """
    return _SPACE.sub(" ", text).strip()[:limit].rstrip()
