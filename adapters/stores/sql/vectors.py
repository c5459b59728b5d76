"""Dense vectors in the SQLite store: their statements, their BLOB encoding, their checks.

A vector belongs to a message's row id; the triggers of
:data:`~harkback.adapters.stores.sql.schema.VECTOR_SCHEMA` drop it with its message or
when the message's content changes. Vectors are kept at unit length (so a dot product is
a cosine) and checked before they are kept; the in-memory store applies the same checks.

>>> [round(x, 6) for x in decode_vector(encode_vector(unit_vector((3.0, 4.0))))]
[0.6, 0.8]
"""

from __future__ import annotations

import json
import math
import sys
from array import array
from collections.abc import Iterable, MutableMapping, Sequence
from itertools import chain
from typing import TypeVar

from harkback.adapters.stores.sql.fulltext import WRITTEN, row_filters
from harkback.adapters.stores.sql.schema import MESSAGE_COLUMNS
from harkback.adapters.stores.sql.statement import SqlValue, Statement, json_list
from harkback.stages.embedding import BLANK
from harkback.stages.ports import NearestQuery, Vector
from harkback.stages.records import Role

T = TypeVar("T")

StartKey = tuple[str, tuple[Role, ...], frozenset[str] | None]
"""What a store keeps an ``unembedded`` resume hint under: the model, the roles, and the
sessions asked for (None: every session)."""


def start_key(model: str, roles: tuple[Role, ...], sessions: frozenset[str] | None,
              starts: MutableMapping[StartKey, T]) -> StartKey:
    """The key of ``starts`` for this call; the hints of other sets of sessions are
    dropped: a watch asks for another set each round, and they would pile up for days.

    >>> starts = {("m", ("user",), frozenset({"a"})): 1, ("m", ("user",), None): 2}
    >>> start_key("m", ("user",), frozenset({"b"}), starts), list(starts.values())
    (('m', ('user',), frozenset({'b'})), [2])
    """
    key = (model, roles, sessions)
    if sessions is not None:
        for other in [k for k in starts if k[2] is not None and k != key]:
            del starts[other]
    return key


VECTOR_MODEL = "SELECT id, dimensions, vectors, generation FROM vector_models WHERE name = ?"

ADD_VECTOR_MODEL = "INSERT INTO vector_models (name, dimensions) VALUES (?, ?)"

SET_VECTOR_DIMENSIONS = "UPDATE vector_models SET dimensions = ? WHERE id = ?"

UPSERT_VECTOR = (
    "INSERT INTO message_vectors (model_id, message_id, vector) VALUES (?, ?, ?) "
    "ON CONFLICT (model_id, message_id) DO UPDATE SET vector = excluded.vector")

DROP_VECTORS = (
    "DELETE FROM message_vectors WHERE model_id = (SELECT id FROM vector_models WHERE name = ?)")

MODEL_VECTORS = (
    "SELECT message_id, vector FROM message_vectors WHERE model_id = ? ORDER BY message_id")


KEPT_MESSAGE = (
    "SELECT m.id, EXISTS (SELECT 1 FROM message_vectors AS v WHERE v.model_id = ?1 "
    "AND v.message_id = m.id), ?4 IS NULL OR m.content = ?4 FROM messages AS m "
    "WHERE m.session_id = ?2 AND m.position = ?3")
"""The row id of the message at (session id ?2, position ?3), whether it has a vector of
model ?1, and whether it holds the text ?4 its vector was made from (NULL: whatever it
holds). The text is compared here, one message at a time, not read back: read back, a
batch of 64 messages of 2 MB held 128 MB more while it was kept."""

MESSAGE_CONTENT = "SELECT content FROM messages WHERE id = ?"
"""A message's text, by row id."""


SESSIONS_BY_INDEX = 64
"""Up to this many sessions, :func:`unembedded` reads their first batch by their index."""

FIRST_OF_SESSIONS = (
    "SELECT min(id + 0) FROM messages WHERE session_id IN (SELECT value FROM json_each(?))")
"""The lowest row id of the sessions named (a JSON list), read through their index (``id +
0``: ``min(id)`` alone is read along the row ids from the table's first row); NULL: none
holds a message."""


def unembedded(model: str, roles: Iterable[Role], start: int, limit: int, *,
               vectors: bool = True, sessions: Iterable[str] | None = None) -> Statement:
    """Row id and fields of messages of ``roles`` (of ``sessions`` only, when given), from
    row id ``start`` on, whose content is not blank and that have no vector of ``model``,
    in row id order.

    With ``vectors=False`` (a database without the vector tables) no message has one.

    >>> unembedded("m", ["user"], 1, 10).params
    (1, '["user"]', 'm', ' \\t\\r\\n', 10)
    >>> unembedded("m", ["user"], 1, 10, sessions=["s1"]).params[-2]
    '["s1"]'
    """
    columns = ", ".join("m." + c for c in MESSAGE_COLUMNS.split(", "))
    missing = (
        "AND NOT EXISTS (SELECT 1 FROM message_vectors AS v WHERE v.message_id = m.id "
        "AND v.model_id = (SELECT id FROM vector_models WHERE name = ?)) ") if vectors else ""
    named = None if sessions is None else list(dict.fromkeys(sessions))
    # A few sessions' first batch is read through the (session, position) index: a watch
    # round that stored one session reads its messages, not every message of the store.
    # That index cannot start at ``start``: each later call read all of them again (64
    # sessions of 2,000 messages: 268 s of reads for 2,000 batches, 11 s so), so a call
    # that resumes (``start`` past 0), and any call for many sessions (a first sync),
    # reads in row id order from ``start`` (the ``+`` keeps the index out).
    by_index = named is not None and start < 1 and len(named) <= SESSIONS_BY_INDEX
    index = "" if by_index else "+"
    within = ("" if named is None
              else f"AND {index}m.session_id IN (SELECT value FROM json_each(?)) ")
    params: tuple[SqlValue, ...] = (start, json_list(roles), *((model,) if vectors else ()),
                                    BLANK, *(() if named is None else (json_list(named),)),
                                    limit)
    return Statement(
        f"SELECT m.id, {columns} FROM messages AS m "
        "WHERE m.id >= ? AND m.role IN (SELECT value FROM json_each(?)) "
        f"{missing}AND trim(m.content, ?) <> '' {within}ORDER BY m.id LIMIT ?",
        params)


def vector_hits(row_ids: Sequence[int], query: NearestQuery, limit: int) -> Statement:
    """The messages with these row ids that pass the query's filters, in the order given.

    The last column is each row's index in ``row_ids``.

    >>> q = NearestQuery(vector=(1.0,), model="m", roles=("user",), until=9.0)
    >>> vector_hits([7, 3], q, 5).params
    ('[7, 3]', '["user"]', '[]', 9.0, 5)
    """
    conditions, params = row_filters(query)
    return Statement(
        f"SELECT m.session_id, m.position, m.role, m.content, {WRITTEN}, s.source, j.key "
        "FROM json_each(?) AS j JOIN messages AS m ON m.id = j.value "
        "JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {' AND '.join(conditions)} ORDER BY j.key LIMIT ?",
        (json.dumps([int(i) for i in row_ids]), *params, limit))


def admitted_vectors(model_id: int, query: NearestQuery) -> Statement:
    """Row ids of every message with a vector of the model that passes the query's filters."""
    conditions, params = row_filters(query)
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

    >>> vector_problem("m", [(1.0, 0.0), (0.0, 1.0)], stored=3)[:58]
    "vectors of model 'm' stored here have 3 dimensions, these "
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
        return (f"vectors of model {model!r} stored here have {stored} dimensions, these "
                f"have {lengths[0]} (the model or its settings changed since they were "
                f"made): harkback embed --replace drops them and makes them again")
    if not all(map(math.isfinite, chain.from_iterable(vectors))):
        return f"a vector given for model {model!r} holds a value that is not a finite number"
    return None


def query_vector_problem(query: NearestQuery, stored: int) -> str | None:
    """Why ``query`` cannot be compared with vectors of ``stored`` dimensions, or None.

    >>> query_vector_problem(NearestQuery(vector=(1.0,), model="m", roles=("user",)), 2)[:62]
    "the query vector has 1 dimensions; vectors of model 'm' have 2"
    """
    if len(query.vector) != stored:
        return (f"the query vector has {len(query.vector)} dimensions; vectors of model "
                f"{query.model!r} have {stored} (the model or its settings changed since "
                "they were made: harkback embed --replace makes them again)")
    if not all(map(math.isfinite, query.vector)):
        return "the query vector holds a value that is not a finite number"
    return None
