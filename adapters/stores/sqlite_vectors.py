"""Dense vectors in the SQLite store: listing what to embed, keeping vectors, nearest hits.

A vector belongs to a message's row id (messages.id). An ingest keeps the row id of a
message whose text is unchanged and updates its row in place
(:func:`~harkback.adapters.stores.sql.writes.plan_write`), and the triggers of
:data:`~harkback.adapters.stores.sql.schema.VECTOR_SCHEMA` delete the vectors of deleted
rows and of rows whose content changes, so vectors never outlive the text they describe,
whoever writes. Scoring loads a model's vectors into a numpy matrix (the ``hybrid`` extra).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.stores.damaged_rows import read_row
from harkback.adapters.stores.sql import vectors as vector_sql
from harkback.adapters.stores.sql.rows import message_from_row
from harkback.adapters.stores.sql.statement import Row, json_list
from harkback.adapters.stores.sql.writes import MAX_MESSAGE_ID
from harkback.adapters.stores.sqlite_connection import execute, has_vector_schema
from harkback.adapters.stores.sqlite_search import RANKED_FETCH_FACTOR, RANKED_FETCH_MIN
from harkback.adapters.stores.sqlite_transaction import immediate
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import NearestQuery, Vector
from harkback.stages.records import Message, MessageHit, Role

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

LOAD_ROWS = 4096
"""Vectors read per step while a model's matrix is loaded."""

NUMPY_MISSING = ("dense ranking needs numpy, which is not installed "
                 "(pip install 'harkback[hybrid]')")


@attrs.frozen
class Start:
    """Where :func:`unembedded` may resume, and the database state it is for."""

    state: tuple[int, int]
    start: int


@attrs.frozen(eq=False)
class Matrix:
    """One model's vectors in memory: row ids ascending, and their vectors as rows."""

    model_id: int
    generation: int
    ids: NDArray[np.int64]
    vectors: NDArray[np.float32]


def vector_count(connection: sqlite3.Connection, model: str) -> int:
    """How many messages have a vector of ``model`` (one row lookup)."""
    if not has_vector_schema(connection):
        return 0
    row = connection.execute(vector_sql.VECTOR_MODEL, (model,)).fetchone()
    return int(row[2]) if row else 0


def unembedded(connection: sqlite3.Connection, model: str, roles: tuple[Role, ...],
               limit: int, *, writes: int, starts: dict[vector_sql.StartKey, Start],
               sessions: frozenset[str] | None = None) -> tuple[Message, ...]:
    """Up to ``limit`` messages of ``roles`` (of ``sessions`` only, when given) with
    non-blank content and no vector of ``model``, in row id order, starting where
    ``starts`` says the last call found its first one while the database is as it was
    then (``writes``: this store's write count).
    """
    if limit < 1 or not roles:
        return ()
    # Every message below ``start`` had a vector or was not eligible when the last
    # call ran. Adding vectors keeps that true; any other write may not, so the hint
    # holds only while no other connection committed (data_version) and this store
    # wrote nothing but vectors.
    state = (int(connection.execute("PRAGMA data_version").fetchone()[0]), writes)
    key = vector_sql.start_key(model, roles, sessions, starts)
    known = starts.get(key)
    start = known.start if known is not None and known.state == state else 0
    if start < 1 and sessions is not None and len(sessions) > vector_sql.SESSIONS_BY_INDEX:
        # Many sessions are read in row id order; from the table's first row, each slice
        # of an import that embed names (2,000 sessions) read the whole store before it.
        low = connection.execute(vector_sql.FIRST_OF_SESSIONS,
                                 (json_list(sorted(sessions)),)).fetchone()[0]
        start = (int(connection.execute(MAX_MESSAGE_ID).fetchone()[0]) + 1 if low is None
                 else int(low))
    rows = execute(connection, vector_sql.unembedded(
        model, roles, start, limit, vectors=has_vector_schema(connection),
        sessions=sessions)).fetchall()
    after = (int(rows[0][0]) if rows
             else int(connection.execute(MAX_MESSAGE_ID).fetchone()[0]) + 1)
    starts[key] = Start(state=state, start=after)
    return tuple(read_row(message_from_row, row[1:]) for row in rows)  # damaged: one line


def nearest(connection: sqlite3.Connection, query: NearestQuery, *, path: Path,
            matrices: dict[str, Matrix]) -> Result[tuple[MessageHit, ...], StoreUnavailable]:
    """Messages whose vectors of ``query.model`` are nearest the query's, best first.

    ``matrices`` keeps each model's matrix between calls, reloaded when its generation
    moves; ``path`` names the file in failures.
    """
    try:
        import numpy  # noqa: F401  (only to learn early whether it is there)
    except ImportError:
        return Failure(StoreUnavailable(NUMPY_MISSING))
    if not has_vector_schema(connection):
        return Success(())
    # One read transaction: the model's row, its vectors and the hits are one snapshot.
    connection.execute("BEGIN")
    try:
        row = connection.execute(vector_sql.VECTOR_MODEL, (query.model,)).fetchone()
        if row is None or row[2] == 0:
            return Success(())
        problem = vector_sql.query_vector_problem(query, int(row[1]))
        if problem is not None:
            return Failure(StoreUnavailable(problem))
        loaded = _matrix(connection, query.model, row, path=path, matrices=matrices)
        if isinstance(loaded, Failure):
            return loaded
        hits = _nearest_hits(connection, query, loaded.unwrap())
        return Failure(_damaged(path, query.model)) if hits is None else Success(hits)
    finally:
        if connection.in_transaction:
            connection.rollback()


def _matrix(connection: sqlite3.Connection, model: str, row: Row, *, path: Path,
            matrices: dict[str, Matrix]) -> Result[Matrix, StoreUnavailable]:
    import numpy as np

    model_id, dimensions, count, generation = (int(value) for value in row)
    cached = matrices.get(model)
    if cached is not None and (cached.model_id, cached.generation) == (model_id, generation):
        return Success(cached)
    matrices.pop(model, None)  # free the stale matrix before reading the new one
    damaged = _damaged(path, model)
    if count < 0 or dimensions < 1:
        return Failure(damaged)
    try:
        ids = np.empty(count, dtype=np.int64)
        vectors = np.empty((count, dimensions), dtype=vector_sql.VECTOR_BYTE_ORDER)
    except MemoryError:
        return Failure(StoreUnavailable(
            f"not enough memory to load the {count} vectors of model {model!r}"))
    width = dimensions * vectors.itemsize
    cursor = connection.execute(vector_sql.MODEL_VECTORS, (model_id,))
    done = 0
    while rows := cursor.fetchmany(LOAD_ROWS):
        end = done + len(rows)
        message_ids, blobs = zip(*rows, strict=True)
        if end > count or set(map(type, blobs)) != {bytes} or set(map(len, blobs)) != {width}:
            return Failure(damaged)
        ids[done:end] = message_ids
        vectors[done:end] = np.frombuffer(
            b"".join(blobs), dtype=vector_sql.VECTOR_BYTE_ORDER
        ).reshape(len(rows), dimensions)
        done = end
    if done != count:
        return Failure(damaged)
    matrix = Matrix(model_id=model_id, generation=generation, ids=ids, vectors=vectors)
    matrices[model] = matrix
    return Success(matrix)


def drop(connection: sqlite3.Connection, model: str) -> Result[int, StoreUnavailable]:
    """Delete every vector of ``model`` in one write transaction; how many there were."""
    if not has_vector_schema(connection):
        return Success(0)
    with immediate(connection):
        dropped = connection.execute(vector_sql.DROP_VECTORS, (model,)).rowcount
    return Success(max(dropped, 0))


def keep(connection: sqlite3.Connection, model: str,
         latest: dict[tuple[str, int], Vector],
         made_from: Mapping[tuple[str, int], str | None] = MappingProxyType({})
         ) -> Result[int, StoreUnavailable]:
    """Store ``latest`` (unit vectors of ``model`` by (session id, position)) in one
    transaction; how many messages gained a vector (a vector replaced, e.g. one another
    run kept meanwhile, is not counted again). Keys of messages not stored are skipped, and
    so are those whose content is no longer the text ``made_from`` says their vector was
    made of.
    """
    if not latest:
        return Success(0)
    keys = list(latest)
    dimensions = len(latest[keys[0]])
    with immediate(connection):
        row = connection.execute(vector_sql.VECTOR_MODEL, (model,)).fetchone()
        if row is None:
            model_id = connection.execute(vector_sql.ADD_VECTOR_MODEL,
                                          (model, dimensions)).lastrowid
        else:
            model_id, stored, count = int(row[0]), int(row[1]), int(row[2])
            if stored != dimensions:
                if count:
                    problem = vector_sql.vector_problem(model, [latest[keys[0]]], stored)
                    connection.rollback()
                    return Failure(StoreUnavailable(problem or "vector length mismatch"))
                connection.execute(vector_sql.SET_VECTOR_DIMENSIONS, (dimensions, model_id))
        # Read in the write transaction: no ingest can change a message between this
        # check and the vector's write.
        found = [(key, int(row[0]), bool(row[1])) for key in keys
                 if (row := connection.execute(vector_sql.KEPT_MESSAGE, (
                     model_id, *key, made_from.get(key))).fetchone()) is not None
                 and (row[2] or _holds(connection, int(row[0]), made_from.get(key)))]
        connection.executemany(vector_sql.UPSERT_VECTOR, [
            (model_id, message_id, vector_sql.encode_vector(latest[key]))
            for key, message_id, _ in found])
    return Success(sum(1 for _, _, had in found if not had))


def _holds(connection: sqlite3.Connection, message_id: int, text: str | None) -> bool:
    """Whether the message holds ``text`` as this store reads it: compared in SQL, bytes
    that are not UTF-8 never matched the U+FFFD they are read as, so such a message was
    never kept and every ``embed`` stopped at it. Read back only when SQL found them unlike
    (its text changed, or such bytes): reading such bytes fails, and the store reads again
    with them replaced."""
    row = connection.execute(vector_sql.MESSAGE_CONTENT, (message_id,)).fetchone()
    return row is not None and row[0] == text


def _damaged(path: Path, model: str) -> StoreUnavailable:
    return StoreUnavailable(f"the vectors of model {model!r} in {path} are damaged; embed "
                            "again under another model name")


def _nearest_hits(connection: sqlite3.Connection, query: NearestQuery, matrix: Matrix
                  ) -> tuple[MessageHit, ...] | None:
    """The hits, or None when a stored vector holds a value that is not a finite number."""
    import numpy as np

    target = np.asarray(query.vector, dtype=np.float32)
    norm = float(np.linalg.norm(target))
    if norm > 0:
        target /= norm
    scores = matrix.vectors @ target
    if not np.isfinite(scores).all():
        return None  # checked here, on n scores, rather than on n * d values at load
    ids = matrix.ids

    def best_first(chosen: NDArray[np.intp]) -> NDArray[np.intp]:
        # Higher score first, then lower row id: the order of the memory store too.
        return chosen[np.lexsort((ids[chosen], -scores[chosen]))]

    # As sqlite_search.best_rows does for search: score everything, filter only the best ``fetch``
    # in SQL, and when too few survive a cut that dropped some, filter them all.
    total, limit = len(ids), query.limit
    fetch = max(RANKED_FETCH_FACTOR * limit, RANKED_FETCH_MIN)
    if fetch >= total:
        return _vector_hits(connection, query, ids, scores, best_first(np.arange(total)))
    threshold = np.partition(scores, total - fetch)[total - fetch]
    best = best_first(np.flatnonzero(scores >= threshold))[:fetch]
    hits = _vector_hits(connection, query, ids, scores, best)
    if len(hits) < limit:
        admitted = np.fromiter(
            (message_id for (message_id,) in execute(
                connection, vector_sql.admitted_vectors(matrix.model_id, query))),
            dtype=np.int64)
        best = best_first(np.flatnonzero(np.isin(ids, admitted)))[:limit]
        hits = _vector_hits(connection, query, ids, scores, best)
    return hits


def _vector_hits(connection: sqlite3.Connection, query: NearestQuery, ids: NDArray[np.int64],
                 scores: NDArray[np.float32], chosen: NDArray[np.intp]
                 ) -> tuple[MessageHit, ...]:
    rows = execute(connection,
                   vector_sql.vector_hits(ids[chosen].tolist(), query, query.limit))
    return tuple(
        MessageHit(session_id=row[0], position=row[1], role=row[2], content=row[3],
                   timestamp=row[4], source=row[5], score=float(scores[chosen[row[6]]]))
        for row in rows)
