"""The :class:`~harkback.stages.ports.VectorStore` port of the SQLite store: its methods,
over the tables and the matrices of :mod:`~harkback.adapters.stores.sqlite_vectors`.

:class:`SqliteVectorPort` is that part of :class:`~harkback.adapters.stores.sqlite.SqliteStore`;
the store holds the state it reads (the matrices, where an embedding run resumes, a count of
writes), touched only on its connection's thread.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Self, TypeVar

from returns.functions import identity
from returns.future import FutureResult

from harkback.adapters.stores import sqlite_vectors
from harkback.adapters.stores.sql.vectors import StartKey, unit_vector, vector_problem
from harkback.stages import ports, records
from harkback.stages.errors import StoreUnavailable

T = TypeVar("T")


class SqliteVectorPort:
    """Dense vectors of the SQLite store's messages, kept in its file."""

    path: Path
    readonly: bool
    _matrices: dict[str, sqlite_vectors.Matrix]
    _starts: dict[StartKey, sqlite_vectors.Start]
    _writes: int

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> FutureResult[T, StoreUnavailable]:
        raise NotImplementedError

    def _patiently(self, work: Callable[[sqlite3.Connection], T]
                   ) -> Callable[[sqlite3.Connection], T]:
        raise NotImplementedError

    def _refused(self, why: str) -> FutureResult[T, StoreUnavailable]:
        raise NotImplementedError

    def vector_store(self) -> Self:
        """This store: vectors live in the same file."""
        return self


    def unembedded(self, model: str, roles: tuple[records.Role, ...], limit: int, *,
                   sessions: Sequence[str] | None = None
                   ) -> FutureResult[tuple[records.Message, ...], StoreUnavailable]:
        """Up to ``limit`` messages of ``roles`` (of ``sessions`` only, when given) with
        non-blank content and no vector of ``model``, in row id order.

        A file without the vector tables (read-only, made before vectors existed) has no
        vectors, so every eligible message is listed. Repeated calls resume where the last
        one found its first message, as long as nothing but :meth:`keep_vectors` wrote
        meanwhile, so an embedding run reads the table once, not once per batch.
        """
        wanted = None if sessions is None else frozenset(sessions)
        return self._run(lambda connection: sqlite_vectors.unembedded(
            connection, model, roles, limit, writes=self._writes, starts=self._starts,
            sessions=wanted))

    def keep_vectors(self, model: str,
                     vectors: Sequence[tuple[ports.MessageKey, ports.Vector]]
                     ) -> FutureResult[int, StoreUnavailable]:
        """Store vectors of ``model`` (replacing older ones), scaled to unit length, in one
        transaction; returns how many messages gained one (a vector replaced is not
        counted again). Keys of messages not stored are skipped, and so are keys whose
        ``content`` the message no longer holds.

        Vectors whose length differs from the model's stored ones (or from each other),
        or that hold a value that is not finite, fail the whole batch.
        """
        if self.readonly:
            return self._refused("cannot keep vectors")
        pairs = tuple(vectors)
        problem = vector_problem(model, [vector for _, vector in pairs])
        if problem is not None:
            return FutureResult.from_failure(StoreUnavailable(problem))
        latest = {(key.session_id, key.position): unit_vector(vector)
                  for key, vector in pairs}
        made_from = {(key.session_id, key.position): key.content for key, _ in pairs}
        return self._run(self._patiently(lambda connection: sqlite_vectors.keep(
            connection, model, latest, made_from))).bind_result(identity)

    def nearest(self, query: ports.NearestQuery
                ) -> FutureResult[tuple[records.MessageHit, ...], StoreUnavailable]:
        """Messages whose vectors of ``query.model`` are nearest the query's, best first;
        ``score`` is the cosine similarity.

        The model's vectors are loaded once into a matrix kept by this store object and
        reloaded when their generation (bumped by the triggers on any change, from any
        connection) moves. Needs numpy (the ``hybrid`` extra).
        """
        return self._run(lambda connection: sqlite_vectors.nearest(
            connection, query, path=self.path, matrices=self._matrices)).bind_result(identity)

    def vector_count(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """How many messages have a vector of ``model`` (one row lookup)."""
        return self._run(lambda connection: sqlite_vectors.vector_count(connection, model))

    def drop_vectors(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """Remove every vector of ``model`` in one transaction; how many there were. The
        model's row stays, its count 0: the next vectors kept set its dimensions."""
        if self.readonly:
            return self._refused("cannot drop vectors")
        return self._run(self._patiently(lambda connection: sqlite_vectors.drop(
            connection, model))).bind_result(identity)

    def holds_vectors(self, model: str) -> FutureResult[bool, StoreUnavailable]:
        """Whether any message has a vector of ``model`` (the count: one row lookup)."""
        return self.vector_count(model).map(bool)
