"""Dense vectors in the PostgreSQL store: a ``REAL[]`` column per message and model, scored
in this process (cosine = dot product of unit vectors; numpy when installed).

A vector goes with its message (``ON DELETE CASCADE``) and when the message's content
changes (the ingest deletes it). The checks are the SQLite store's
(:func:`~harkback.adapters.stores.sql.vectors.vector_problem`).
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import attrs
import psycopg
from returns.result import Failure, Result, Success

from harkback.adapters.stores.postgres_search import HIT_COLUMNS, hit, row_filters
from harkback.adapters.stores.postgres_text import restore, storable
from harkback.adapters.stores.postgres_writes import (
    MESSAGE_COLUMNS,
    check_version,
    stored_message,
)
from harkback.adapters.stores.sql.vectors import (
    StartKey,
    query_vector_problem,
    start_key,
    unit_vector,
    vector_problem,
)
from harkback.stages.embedding import BLANK
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import NearestQuery, Vector
from harkback.stages.records import Message, MessageHit, Role

Connection = psycopg.Connection[tuple[Any, ...]]

_MODEL = "SELECT id, dimensions, (SELECT count(*) FROM message_vectors AS v " \
         "WHERE v.model_id = vector_models.id) FROM vector_models WHERE name = %s"

_HELD = "SELECT id, dimensions, EXISTS (SELECT 1 FROM message_vectors AS v " \
        "WHERE v.model_id = vector_models.id) FROM vector_models WHERE name = %s"
"""The model's row and whether it has a vector: what a search asks. The count of
:data:`_MODEL` reads every vector of the model (0.35 to 0.85 s at a million, each
search); this stops at the first (0.1 ms)."""


LAST_ID = 2**63 - 1
"""The highest row id a ``BIGINT`` holds: no bound."""


@attrs.frozen
class Resume:
    """Where :func:`unembedded` may resume (``start``: the row id the last call found
    first), and the store as that call saw it: ``written``, the index's generation and
    rewrites (any ingest, removal or rewrite, by any process, moves one), and ``model``,
    the version of the model's row (:func:`drop` moves it; None: no row, so no vector)."""

    written: tuple[int, int]
    model: str | None
    start: int = 0
    end: int = LAST_ID
    """The highest row id of the sessions asked for: no row past it is read."""

    def holds(self, now: Resume) -> bool:
        """Whether every message below ``start`` still has a vector or is not eligible:
        nothing written since but vectors, and none dropped. With no vector of the model
        then, what lay below was not eligible, whatever was kept or dropped since.

        >>> now = Resume((3, 1), "812")
        >>> Resume((3, 1), None, 90).holds(now), Resume((3, 1), "811", 90).holds(now)
        (True, False)
        """
        return self.written == now.written and self.model in (None, now.model)


def unembedded(connection: Connection, model: str, roles: tuple[Role, ...], limit: int, *,
               sessions: Sequence[str] | None = None,
               starts: dict[StartKey, Resume] | None = None) -> tuple[Message, ...]:
    """Up to ``limit`` messages of ``roles`` (of ``sessions`` only, when given) with
    non-blank content and no vector of ``model``, in row id (ingest) order, from where
    ``starts`` says the last call for them found its first one, when that still holds."""
    if limit < 1:
        return ()
    columns = ", ".join(f"m.{c}" for c in MESSAGE_COLUMNS.split(", "))
    # The model's id first: joined in, a planner without statistics (a server restarted
    # after a crash resets them) compared every message with every vector, minutes a batch.
    # The store as it is read before the messages: a write landing between the two only
    # makes the next call start again from the first row.
    found = connection.execute("SELECT id, xmin::text FROM vector_models WHERE name = %s",
                               (model,)).fetchone()
    written = connection.execute("SELECT generation, rewrites FROM index_totals").fetchone()
    now = Resume(written=(int(written[0]), int(written[1])) if written else (0, 0),
                 model=str(found[1]) if found else None)
    key = start_key(model, roles, None if sessions is None else frozenset(sessions),
                    starts if starts is not None else {})
    known = starts.get(key) if starts is not None else None
    named = None if sessions is None else [storable(s) for s in sessions]
    # Read from the first row every time (in row id order, as the planner chose), each
    # batch read all the rows before it again: the last of the 32 batches of a session of
    # 2,000 messages read 2,003 rows, not 128, and a sync of one session into a store of
    # a million messages read all of them at each batch. A few sessions' rows lie within
    # their lowest and highest row ids (read once, through their index): no row outside.
    if known is not None and known.holds(now):
        now = attrs.evolve(now, start=known.start, end=known.end)
    elif named is not None:
        # ``id + 0``: min(id) and max(id) alone were read along the primary key, from
        # both ends of the table (51,566 rows for a session of 500), not by the sessions.
        low, high = connection.execute("SELECT min(id + 0), max(id + 0) FROM messages "
                                       "WHERE session_id = ANY(%s::text[])",
                                       (named,)).fetchone() or (None, None)
        # None: none of them holds a message (1 to 0 reads nothing).
        now = attrs.evolve(now, start=1 if low is None else int(low),
                           end=0 if high is None else int(high))
    within = "" if named is None else "AND m.session_id = ANY(%s::text[]) "
    rows = connection.execute(
        f"SELECT m.id, {columns} FROM messages AS m WHERE m.id BETWEEN %s AND %s "
        f"AND m.role = ANY(%s::text[]) {within}AND btrim(m.content, %s) <> '' "
        "AND NOT EXISTS (SELECT 1 FROM message_vectors AS v WHERE v.model_id = %s "
        "AND v.message_id = m.id) ORDER BY m.id LIMIT %s",
        (now.start, now.end, list(roles), *(() if named is None else (named,)), BLANK,
         found[0] if found else None, limit)).fetchall()
    if starts is not None:
        after = int(rows[0][0]) if rows else (now.end + 1 if named is not None else int(
            connection.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM messages"
                               ).fetchone()[0]))  # type: ignore[index]
        starts[key] = attrs.evolve(now, start=after)
    return tuple(stored_message(row[1:]) for row in rows)


def keep(connection: Connection, model: str, latest: dict[tuple[str, int], Vector],
         made_from: Mapping[tuple[str, int], str | None] = MappingProxyType({})
         ) -> Result[int, StoreUnavailable]:
    """Store ``latest`` (unit vectors by (session id, position)) in one transaction; how
    many messages gained a vector (a vector replaced, e.g. one another run kept meanwhile:
    the model's row lock makes them take turns, is not counted again). Keys of messages not
    stored are skipped, and so are those whose content is no longer the text ``made_from``
    says their vector was made of: compared by a digest the server computes, so the texts
    are not sent back (64 messages of 2 MB were 128 MB more while a batch was kept)."""
    if not latest:
        return Success(0)
    keys = list(latest)
    dimensions = len(latest[keys[0]])
    with connection.transaction():
        check_version(connection)  # migrated by another harkback meanwhile: nothing kept
        connection.execute(
            "INSERT INTO vector_models (name, dimensions) VALUES (%s, %s) "
            "ON CONFLICT (name) DO NOTHING", (model, dimensions))
        row = connection.execute(_MODEL + " FOR UPDATE", (model,)).fetchone()
        assert row is not None
        model_id, stored, count = int(row[0]), int(row[1]), int(row[2])
        if stored != dimensions:
            if count:
                problem = vector_problem(model, [latest[keys[0]]], stored)
                return Failure(StoreUnavailable(problem or "vector length mismatch"))
            connection.execute("UPDATE vector_models SET dimensions = %s WHERE id = %s",
                               (dimensions, model_id))
        # KEY SHARE, as the foreign key takes it, and SKIP LOCKED: a row an ingest is
        # deleting (its text changed: a new row replaces it) is left out at once, not
        # waited for and then failed on; rows locked only to update them in place stay.
        found = [(place, message_id, had) for place, message_id, had, same in connection.execute(
            "SELECT k.place, m.id, EXISTS (SELECT 1 FROM message_vectors AS v "
            "WHERE v.model_id = %s AND v.message_id = m.id), "
            "k.digest IS NULL OR sha256(convert_to(m.content, 'UTF8')) = k.digest "
            "FROM unnest(%s::text[], %s::int[], %s::bytea[]) "
            "WITH ORDINALITY AS k(session_id, position, digest, place) JOIN messages AS m "
            "ON m.session_id = k.session_id AND m.position = k.position "
            "FOR KEY SHARE OF m SKIP LOCKED",
            (model_id, [storable(s) for s, _ in keys], [p for _, p in keys],
             [_digest(made_from.get(key)) for key in keys])).fetchall()
            if same or _holds(connection, message_id, made_from.get(keys[place - 1]))]
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO message_vectors (model_id, message_id, vector) VALUES (%s, %s, %s) "
                "ON CONFLICT (model_id, message_id) DO UPDATE SET vector = excluded.vector",
                [(model_id, message_id, list(latest[keys[place - 1]]))
                 for place, message_id, _ in found])
    return Success(sum(1 for _, _, had in found if not had))


def _holds(connection: Connection, message_id: int, text: str | None) -> bool:
    """Whether the message holds ``text`` as this store reads it: read back only when the
    digests differ (its text changed, or it holds a bare escape mark, written by hand or by
    another program, which :func:`storable` would have escaped: such a message was never
    kept, and every ``embed`` stopped at it)."""
    row = connection.execute("SELECT content FROM messages WHERE id = %s",
                             (message_id,)).fetchone()
    return row is not None and restore(row[0]) == text


def _digest(content: str | None) -> bytes | None:
    """What ``sha256(convert_to(content, 'UTF8'))`` gives of ``content`` as stored.

    >>> _digest("abc").hex()[:16], _digest(None)
    ('ba7816bf8f01cfea', None)
    """
    return None if content is None else hashlib.sha256(storable(content).encode()).digest()


def nearest(connection: Connection, query: NearestQuery
            ) -> Result[tuple[MessageHit, ...], StoreUnavailable]:
    """Messages whose vectors of ``query.model`` are nearest, best first (ties in row id
    order); every admitted vector is read and scored here."""
    row = connection.execute(_HELD, (query.model,)).fetchone()
    if row is None or not row[2]:
        return Success(())
    problem = query_vector_problem(query, int(row[1]))
    if problem is not None:
        return Failure(StoreUnavailable(problem))
    conditions, params = row_filters(query)
    rows = connection.execute(
        "SELECT v.message_id, v.vector FROM message_vectors AS v "
        "JOIN messages AS m ON m.id = v.message_id JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE v.model_id = %s AND {conditions}",
        [int(row[0]), *params]).fetchall()
    target = unit_vector(query.vector)
    scored = sorted(((-_dot(vector, target), int(message_id)) for message_id, vector in rows))
    best = scored[:query.limit]
    if not best:
        return Success(())
    found = {int(r[10]): r for r in connection.execute(
        f"SELECT {HIT_COLUMNS} FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        "WHERE m.id = ANY(%s::bigint[])", ([i for _, i in best],)).fetchall()}
    return Success(tuple(hit(found[i], -negative) for negative, i in best if i in found))


def _dot(vector: Sequence[float], target: Sequence[float]) -> float:
    return float(sum(map(operator.mul, vector, target)))


def vector_count(connection: Connection, model: str) -> int:
    """How many messages have a vector of ``model``."""
    row = connection.execute(_MODEL, (model,)).fetchone()
    return 0 if row is None else int(row[2])


def drop(connection: Connection, model: str) -> Result[int, StoreUnavailable]:
    """Delete every vector of ``model`` in one transaction (the model's row locked, as a
    keep locks it); how many there were."""
    with connection.transaction():
        check_version(connection)
        # An update, not a lock alone: the row's new version tells unembedded() that
        # vectors went (Resume), whichever process dropped them.
        row = connection.execute("UPDATE vector_models SET dimensions = dimensions "
                                 "WHERE name = %s RETURNING id", (model,)).fetchone()
        if row is None:
            return Success(0)
        dropped = connection.execute("DELETE FROM message_vectors WHERE model_id = %s",
                                     (row[0],)).rowcount
    return Success(max(dropped, 0))


def holds_vectors(connection: Connection, model: str) -> bool:
    """Whether any message has a vector of ``model`` (its first found, not a count)."""
    row = connection.execute(_HELD, (model,)).fetchone()
    return row is not None and bool(row[2])
