"""The SQLite session store: one database file, messages indexed by FTS5.

Every statement runs on one worker thread that owns the connection, so the event
loop never blocks on SQLite and the connection is never shared between threads.
Failures of SQLite (a locked, missing, corrupt or foreign file) come back as
:class:`StoreUnavailable` values.

>>> import asyncio, tempfile, pathlib
>>> from harkback.stages.records import Conversation, Message, Session
>>> async def demo(path):
...     with SqliteStore.open(path).unwrap() as store:
...         chat = Conversation(Session(id="s1"),
...                             (Message(session_id="s1", position=0, role="user", content="hi"),))
...         return await store.ingest([chat])
>>> with tempfile.TemporaryDirectory() as tmp:
...     asyncio.run(demo(pathlib.Path(tmp) / "h.db"))
<IOResult: <Success: IngestReport(added=1, updated=0, messages=1)>>
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self, TypeVar

import attrs
from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters.sources.hermes_db import open_mode
from harkback.adapters.stores import search_plan, sql
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import (
    DEFAULT_MAX_SCORED,
    IngestReport,
    MatchQuery,
    MessageKey,
    NearestQuery,
    RecentQuery,
    TermStats,
    Vector,
)
from harkback.stages.query import Term
from harkback.stages.records import (
    Conversation,
    Message,
    MessageHit,
    Role,
    Session,
    SessionOverview,
)

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 5.0
"""Seconds a statement waits for another connection's lock before giving up."""

RANKED_FETCH_FACTOR = 4
RANKED_FETCH_MIN = 200
RANKED_FETCH_MARGIN = 1.5
"""A search first joins FTS5's best ``max(factor * limit, min)`` rows, then filters them;
once a search with the same filters has shown how many ranked rows one survivor takes,
``margin`` times that many per row asked (at most ``factor`` times the default)."""

_FilterKey = tuple[tuple[Role, ...], tuple[str, ...]]

CACHE_KIB = 64 * 1024
"""The most page cache a connection may use, in KiB (allocated only as pages are read)."""

EXACT_COUNT_LIMIT = 4 * DEFAULT_MAX_SCORED
END_SAMPLE = 256
"""``term_stats`` counts a term exactly up to the limit (a bounded COUNT reads postings
at ~50 ns each) and estimates it above from its ``END_SAMPLE`` newest and oldest matches
(within about 5 % for 99 % of the question words of the pooled LongMemEval store)."""

LOAD_ROWS = 4096
"""Vectors read per step while a model's matrix is loaded."""

NUMPY_MISSING = ("dense ranking needs numpy, which is not installed "
                 "(pip install 'harkback[hybrid]')")

_KINDS = {
    "SQLITE_BUSY": "the database is locked by another connection",
    "SQLITE_LOCKED": "the database is locked",
    "SQLITE_READONLY": "the database is read-only",
    "SQLITE_CORRUPT": "the database file is corrupt",
    "SQLITE_NOTADB": "the file is not a SQLite database",
    "SQLITE_FULL": "the disk is full",
    "SQLITE_IOERR": "disk I/O error",
    "SQLITE_CANTOPEN": "the database file cannot be opened",
    "SQLITE_PERM": "permission denied",
}


def unavailable(path: Path, error: sqlite3.Error) -> StoreUnavailable:
    """Translate a SQLite error into a :class:`StoreUnavailable` that says what went wrong.

    >>> unavailable(Path("h.db"), sqlite3.OperationalError("boom")).reason
    'h.db: boom'
    """
    name = getattr(error, "sqlite_errorname", None) or ""
    kind = _KINDS.get("_".join(name.split("_")[:2]))
    return StoreUnavailable(f"{kind}: {path} ({error})" if kind else f"{path}: {error}")


class SqliteStore:
    """A :class:`~harkback.stages.ports.SessionStore` and
    :class:`~harkback.stages.ports.VectorStore` kept in a SQLite file.

    Build it with :meth:`open`; close it with :meth:`close` or a ``with`` block.
    """

    def __init__(self, *, path: Path, readonly: bool, executor: ThreadPoolExecutor,
                 connection: sqlite3.Connection) -> None:
        """Wrap an open connection; use :meth:`open` instead."""
        self.path = path
        self.readonly = readonly
        self._executor = executor
        self._connection = connection
        self._closed = False
        # Touched only on the connection's thread, like the connection itself.
        self._matrices: dict[str, _Matrix] = {}
        self._starts: dict[tuple[str, tuple[Role, ...]], _Start] = {}
        self._writes = 0
        self._reach: dict[_FilterKey, float] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, readonly: bool = False,
             busy_timeout: float = DEFAULT_BUSY_TIMEOUT) -> Result[SqliteStore, StoreUnavailable]:
        """Open the database at ``path``; blocks briefly, so call it before or off the loop.

        Writable mode creates the file, its folders and the schema. Read-only mode never
        creates or changes anything and fails when the file is missing or not harkback's.
        """
        location = Path(path).expanduser()
        if readonly and not location.is_file():
            return Failure(StoreUnavailable(
                f"no harkback database at {location}; ingest sessions first"))
        if not readonly:
            try:
                location.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                return Failure(StoreUnavailable(
                    f"cannot create the folder {location.parent}: {error.strerror}"))
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="harkback-sqlite")
        opened = executor.submit(_connect, location, readonly, busy_timeout).result()
        if isinstance(opened, Failure):
            executor.shutdown()
            return Failure(opened.failure())
        return Success(cls(path=location, readonly=readonly, executor=executor,
                           connection=opened.unwrap()))

    def close(self) -> None:
        """Finish queued work and close the connection; closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        closing = self._executor.submit(self._connection.close)
        self._executor.shutdown(wait=True)
        self._matrices.clear()
        # The connection is gone either way; a failure to close leaves nothing to undo.
        with contextlib.suppress(sqlite3.Error):
            closing.result()

    def __enter__(self) -> Self:
        """Use the store in a ``with`` block that closes it."""
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Close the store."""
        self.close()

    async def __aenter__(self) -> Self:
        """Use the store in an ``async with`` block that closes it."""
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        """Close the store without blocking the loop on queued work."""
        await asyncio.to_thread(self.close)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> FutureResult[T, StoreUnavailable]:
        return FutureResult(self._call(work))

    async def _call(self, work: Callable[[sqlite3.Connection], T]
                    ) -> Result[T, StoreUnavailable]:
        if self._closed:
            return Failure(StoreUnavailable(f"the store at {self.path} is closed"))
        loop = asyncio.get_running_loop()
        try:
            return Success(await loop.run_in_executor(self._executor, work, self._connection))
        except sqlite3.Error as error:
            return Failure(unavailable(self.path, error))

    def _run_checked(self, work: Callable[[sqlite3.Connection], Result[T, StoreUnavailable]]
                     ) -> FutureResult[T, StoreUnavailable]:
        return self._run(work).bind_result(_same)

    def run(self, work: Callable[[sqlite3.Connection], T]) -> FutureResult[T, StoreUnavailable]:
        """Run ``work`` on the store's connection thread (for adapters sharing the file).

        A ``sqlite3.Error`` raised by ``work`` comes back as :class:`StoreUnavailable`.
        """
        def counted(connection: sqlite3.Connection) -> T:
            self._writes += 1  # it may write: forget what unembedded() knew
            return work(connection)
        return self._run(counted)

    def search(self, query: MatchQuery) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
        """Messages matching the query, best first; ``score`` is ``-bm25``.

        Bounded by ``query.max_scored`` as :class:`~harkback.stages.ports.MatchQuery`
        says; every statement runs in one trip to the connection's thread.
        """
        return self._run(lambda connection: tuple(
            sql.hit_from_row(row) for row in _search_rows(connection, query, self._reach)))

    def term_stats(self, terms: Sequence[str]) -> FutureResult[TermStats, StoreUnavailable]:
        """Index statistics from FTS5's own records: its totals row and its vocabulary."""
        return self._run(lambda connection: _term_stats(connection, terms))

    def sessions(self, ids: Sequence[str]) -> FutureResult[tuple[Session, ...], StoreUnavailable]:
        """The sessions with these ids, in the order asked; unknown ids are left out."""
        return self._run(_fetch(sql.sessions_by_id(ids), sql.session_from_row))

    def children(self, ids: Sequence[str]) -> FutureResult[tuple[Session, ...], StoreUnavailable]:
        """Sessions whose parent is one of ``ids``, earliest first."""
        return self._run(_fetch(sql.children_of(ids), sql.session_from_row))

    def messages(self, session_ids: Sequence[str]
                 ) -> FutureResult[tuple[Message, ...], StoreUnavailable]:
        """All messages of these sessions, in session start order then position."""
        return self._run(_fetch(sql.messages_of(session_ids), sql.message_from_row))

    def recent(self, query: RecentQuery
               ) -> FutureResult[tuple[SessionOverview, ...], StoreUnavailable]:
        """Root sessions (no parent, or a parent not stored), newest first."""
        return self._run(_fetch(sql.recent(query), sql.overview_from_row))

    def ingest(self, conversations: Sequence[Conversation]
               ) -> FutureResult[IngestReport, StoreUnavailable]:
        """Store conversations in one transaction; a session id already stored is replaced."""
        if self.readonly:
            return FutureResult.from_failure(StoreUnavailable(
                f"the store at {self.path} was opened read-only; it cannot ingest"))
        batch = tuple({c.session.id: c for c in conversations}.values())

        def work(connection: sqlite3.Connection) -> IngestReport:
            self._writes += 1
            return _write(connection, batch)
        return self._run(work)

    def merge_index(self) -> FutureResult[None, StoreUnavailable]:
        """Merge the full-text index into one segment (one statement, one transaction).

        Every write adds a segment; FTS5 merges some as it goes, but a store built by many
        imports keeps several, and a search reads each one. On the pooled LongMemEval store
        (110,000 messages) the merge took 2 s and made searches 6-7 % faster; a million
        messages took 17 s. It rewrites the whole index: run it after large imports, not
        after each one. Searches find the same rows before and after.
        """
        if self.readonly:
            return FutureResult.from_failure(StoreUnavailable(
                f"the store at {self.path} was opened read-only; it cannot merge its index"))

        def work(connection: sqlite3.Connection) -> None:
            connection.execute(sql.MERGE_INDEX)  # one statement: its own transaction
        return self._run(work)

    # --- dense vectors (the VectorStore port) ---------------------------------------------
    #
    # A vector belongs to a message's row id (messages.id). An ingest keeps the row id of a
    # message whose text is unchanged and updates its row in place (sql.plan_write), and the
    # triggers of sql.VECTOR_SCHEMA delete the vectors of deleted rows and of rows whose
    # content changes, so vectors never outlive the text they describe, whoever writes.

    def unembedded(self, model: str, roles: tuple[Role, ...], limit: int
                   ) -> FutureResult[tuple[Message, ...], StoreUnavailable]:
        """Up to ``limit`` messages of ``roles`` with non-blank content and no vector of
        ``model``, in row id order.

        A file without the vector tables (read-only, made before vectors existed) has no
        vectors, so every eligible message is listed. Repeated calls resume where the last
        one found its first message, as long as nothing but :meth:`keep_vectors` wrote
        meanwhile, so an embedding run reads the table once, not once per batch.
        """
        return self._run(lambda connection: self._unembedded(connection, model, roles, limit))

    def keep_vectors(self, model: str, vectors: Sequence[tuple[MessageKey, Vector]]
                     ) -> FutureResult[int, StoreUnavailable]:
        """Store vectors of ``model`` (replacing older ones), scaled to unit length, in one
        transaction; returns how many were kept. Keys of messages not stored are skipped.

        Vectors whose length differs from the model's stored ones (or from each other),
        or that hold a value that is not finite, fail the whole batch.
        """
        if self.readonly:
            return FutureResult.from_failure(StoreUnavailable(
                f"the store at {self.path} was opened read-only; it cannot keep vectors"))
        pairs = tuple(vectors)
        problem = sql.vector_problem(model, [vector for _, vector in pairs])
        if problem is not None:
            return FutureResult.from_failure(StoreUnavailable(problem))
        latest = {(key.session_id, key.position): sql.unit_vector(vector)
                  for key, vector in pairs}
        return self._run_checked(lambda connection: _keep(connection, model, latest))

    def nearest(self, query: NearestQuery
                ) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
        """Messages whose vectors of ``query.model`` are nearest the query's, best first;
        ``score`` is the cosine similarity.

        The model's vectors are loaded once into a matrix kept by this store object and
        reloaded when their generation (bumped by the triggers on any change, from any
        connection) moves. Needs numpy (the ``hybrid`` extra).
        """
        return self._run_checked(lambda connection: self._nearest(connection, query))

    def vector_count(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """How many messages have a vector of ``model`` (one row lookup)."""
        def work(connection: sqlite3.Connection) -> int:
            if not _has_vector_schema(connection):
                return 0
            row = connection.execute(sql.VECTOR_MODEL, (model,)).fetchone()
            return int(row[2]) if row else 0
        return self._run(work)

    def _unembedded(self, connection: sqlite3.Connection, model: str,
                    roles: tuple[Role, ...], limit: int) -> tuple[Message, ...]:
        if limit < 1 or not roles:
            return ()
        # Every message below ``start`` had a vector or was not eligible when the last
        # call ran. Adding vectors keeps that true; any other write may not, so the hint
        # holds only while no other connection committed (data_version) and this store
        # wrote nothing but vectors.
        state = (int(connection.execute("PRAGMA data_version").fetchone()[0]), self._writes)
        known = self._starts.get((model, roles))
        start = known.start if known is not None and known.state == state else 0
        rows = _execute(connection, sql.unembedded(
            model, roles, start, limit, vectors=_has_vector_schema(connection))).fetchall()
        after = (int(rows[0][0]) if rows
                 else int(connection.execute(sql.MAX_MESSAGE_ID).fetchone()[0]) + 1)
        self._starts[(model, roles)] = _Start(state=state, start=after)
        return tuple(sql.message_from_row(row[1:]) for row in rows)

    def _nearest(self, connection: sqlite3.Connection, query: NearestQuery
                 ) -> Result[tuple[MessageHit, ...], StoreUnavailable]:
        try:
            import numpy  # noqa: F401  (only to learn early whether it is there)
        except ImportError:
            return Failure(StoreUnavailable(NUMPY_MISSING))
        if not _has_vector_schema(connection):
            return Success(())
        # One read transaction: the model's row, its vectors and the hits are one snapshot.
        connection.execute("BEGIN")
        try:
            row = connection.execute(sql.VECTOR_MODEL, (query.model,)).fetchone()
            if row is None or row[2] == 0:
                return Success(())
            problem = sql.query_vector_problem(query, int(row[1]))
            if problem is not None:
                return Failure(StoreUnavailable(problem))
            loaded = self._matrix(connection, query.model, row)
            if isinstance(loaded, Failure):
                return loaded
            hits = _nearest_hits(connection, query, loaded.unwrap())
            return Failure(_damaged(self.path, query.model)) if hits is None else Success(hits)
        finally:
            if connection.in_transaction:
                connection.rollback()

    def _matrix(self, connection: sqlite3.Connection, model: str, row: sql.Row
                ) -> Result[_Matrix, StoreUnavailable]:
        import numpy as np

        model_id, dimensions, count, generation = (int(value) for value in row)
        cached = self._matrices.get(model)
        if cached is not None and (cached.model_id, cached.generation) == (model_id, generation):
            return Success(cached)
        self._matrices.pop(model, None)  # free the stale matrix before reading the new one
        damaged = _damaged(self.path, model)
        if count < 0 or dimensions < 1:
            return Failure(damaged)
        try:
            ids = np.empty(count, dtype=np.int64)
            vectors = np.empty((count, dimensions), dtype=sql.VECTOR_BYTE_ORDER)
        except MemoryError:
            return Failure(StoreUnavailable(
                f"not enough memory to load the {count} vectors of model {model!r}"))
        width = dimensions * vectors.itemsize
        cursor = connection.execute(sql.MODEL_VECTORS, (model_id,))
        done = 0
        while rows := cursor.fetchmany(LOAD_ROWS):
            end = done + len(rows)
            message_ids, blobs = zip(*rows, strict=True)
            if end > count or set(map(type, blobs)) != {bytes} or set(map(len, blobs)) != {width}:
                return Failure(damaged)
            ids[done:end] = message_ids
            vectors[done:end] = np.frombuffer(
                b"".join(blobs), dtype=sql.VECTOR_BYTE_ORDER).reshape(len(rows), dimensions)
            done = end
        if done != count:
            return Failure(damaged)
        matrix = _Matrix(model_id=model_id, generation=generation, ids=ids, vectors=vectors)
        self._matrices[model] = matrix
        return Success(matrix)


def _same(value: Result[T, StoreUnavailable]) -> Result[T, StoreUnavailable]:
    return value


@attrs.frozen
class _Start:
    """Where :meth:`SqliteStore.unembedded` may resume, and the database state it is for."""

    state: tuple[int, int]
    start: int


@attrs.frozen(eq=False)
class _Matrix:
    """One model's vectors in memory: row ids ascending, and their vectors as rows."""

    model_id: int
    generation: int
    ids: NDArray[np.int64]
    vectors: NDArray[np.float32]


def _has_vector_schema(connection: sqlite3.Connection) -> bool:
    found: int = connection.execute(sql.VECTOR_OBJECT_COUNT,
                                    (json.dumps(sql.VECTOR_OBJECTS),)).fetchone()[0]
    return found == len(sql.VECTOR_OBJECTS)


def _keep(connection: sqlite3.Connection, model: str,
          latest: dict[tuple[str, int], Vector]) -> Result[int, StoreUnavailable]:
    if not latest:
        return Success(0)
    keys = list(latest)
    dimensions = len(latest[keys[0]])
    connection.execute("BEGIN IMMEDIATE")
    try:
        row = connection.execute(sql.VECTOR_MODEL, (model,)).fetchone()
        if row is None:
            model_id = connection.execute(sql.ADD_VECTOR_MODEL, (model, dimensions)).lastrowid
        else:
            model_id, stored, count = int(row[0]), int(row[1]), int(row[2])
            if stored != dimensions:
                if count:
                    problem = sql.vector_problem(model, [latest[keys[0]]], stored)
                    connection.rollback()
                    return Failure(StoreUnavailable(problem or "vector length mismatch"))
                connection.execute(sql.SET_VECTOR_DIMENSIONS, (dimensions, model_id))
        found = _execute(connection, sql.message_rows(keys)).fetchall()
        connection.executemany(sql.UPSERT_VECTOR, [
            (model_id, message_id, sql.encode_vector(latest[keys[index]]))
            for index, message_id in found])
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise
    return Success(len(found))


def _damaged(path: Path, model: str) -> StoreUnavailable:
    return StoreUnavailable(f"the vectors of model {model!r} in {path} are damaged; embed "
                            "again under another model name")


def _nearest_hits(connection: sqlite3.Connection, query: NearestQuery, matrix: _Matrix
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

    # As _best_rows does for search: score everything, filter only the best ``fetch``
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
            (message_id for (message_id,) in _execute(
                connection, sql.admitted_vectors(matrix.model_id, query))),
            dtype=np.int64)
        best = best_first(np.flatnonzero(np.isin(ids, admitted)))[:limit]
        hits = _vector_hits(connection, query, ids, scores, best)
    return hits


def _vector_hits(connection: sqlite3.Connection, query: NearestQuery, ids: NDArray[np.int64],
                 scores: NDArray[np.float32], chosen: NDArray[np.intp]
                 ) -> tuple[MessageHit, ...]:
    rows = _execute(connection, sql.vector_hits(ids[chosen].tolist(), query, query.limit))
    return tuple(
        MessageHit(session_id=row[0], position=row[1], role=row[2], content=row[3],
                   timestamp=row[4], source=row[5], score=float(scores[chosen[row[6]]]))
        for row in rows)


def _fetch(statement: sql.Statement, convert: Callable[[sql.Row], T]
           ) -> Callable[[sqlite3.Connection], tuple[T, ...]]:
    def work(connection: sqlite3.Connection) -> tuple[T, ...]:
        return tuple(convert(row) for row in connection.execute(statement.sql, statement.params))
    return work


def _estimate_count(connection: sqlite3.Connection, term: str, documents: int, *,
                    exact_up_to: int = EXACT_COUNT_LIMIT, sample: int = END_SAMPLE) -> int:
    """Messages holding ``term``: exact up to ``exact_up_to``, estimated above.

    Counting a common term exactly walks its whole posting list (FTS5's vocabulary table
    does the same: ~35 ms for a term in half of 1M messages), so the count stops at
    ``exact_up_to + 1``. Past it, the newest and the oldest ``sample`` matches are read
    and the stretch between them is taken to hold matches at the mean density of the two
    ends (each over its own ids), so a word that is frequent only lately (a current
    topic) is not mistaken for one found everywhere.
    """
    counted: int = _execute(connection, sql.count_matches(Term(term), exact_up_to)).fetchone()[0]
    if counted <= exact_up_to:
        return counted
    newest, new_low, new_high = _execute(connection, sql.newest_matches(term, sample)).fetchone()
    oldest, old_low, old_high = _execute(connection, sql.oldest_matches(term, sample)).fetchone()
    density = (oldest / (old_high - old_low + 1) + newest / (new_high - new_low + 1)) / 2
    estimate: float = oldest + newest + max(new_low - old_high - 1, 0) * density
    # The count just passed the exact limit, so the estimate is at least past it too.
    return min(max(round(estimate), exact_up_to + 1), documents)


def _term_stats(connection: sqlite3.Connection, terms: Sequence[str]) -> TermStats:
    row = connection.execute(sql.INDEX_TOTALS).fetchone()
    documents, tokens = sql.decode_totals(row[0] if row else None)
    counts = []
    for term in dict.fromkeys(t for t in terms if t):
        found = _estimate_count(connection, term, documents)
        if found:
            counts.append((term, found))
    return TermStats(documents=documents, average_length=tokens / documents if documents else 0.0,
                     counts=tuple(counts))


def _search_rows(connection: sqlite3.Connection, query: MatchQuery,
                 reach: dict[_FilterKey, float]) -> list[sql.Row]:
    cap = query.max_scored
    if cap is None:
        return _best_rows(connection, query, reach)
    common = frozenset(
        unit for unit in search_plan.selecting_units(query.expression)
        if _execute(connection, sql.count_matches(unit, cap)).fetchone()[0] > cap)
    if not common:
        # Every term matches at most ``cap`` rows: joining them all is cheaper than
        # ranking inside FTS5 first (measured on the 1M store; benchmarks/README.md).
        return _execute(connection, sql.search(query)).fetchall()
    rows: list[sql.Row] = []
    narrowed = search_plan.narrow(query.expression, common)
    if narrowed is not None:
        within = None if search_plan.is_disjunction(query.expression) else query.expression
        rows = _execute(connection, sql.search(query, expression=narrowed,
                                               within=within)).fetchall()
    if len(rows) < query.limit:
        # An AND of common terms that rarely meet would walk their posting lists to the
        # start (~30 ms at 1M messages), so the fill asks only for the newest matches.
        rows += _execute(connection, sql.newest(query, skip=[row[7] for row in rows],
                                                limit=query.limit - len(rows))).fetchall()
    return rows


def _best_rows(connection: sqlite3.Connection, query: MatchQuery,
               reach: dict[_FilterKey, float]) -> list[sql.Row]:
    # Ranking inside FTS5 and joining only its best rows saves a third of a search
    # matching thousands of rows; the filters then apply to those rows only, so when
    # too few survive a cut that may have dropped some, a larger cut, then the full
    # statement, decides. Joining costs ~8 us a row, so the cut is sized by how many
    # ranked rows the last search with the same filters needed per surviving row.
    key = None if query.since is not None or query.until is not None else (
        query.roles, query.hidden_sources)  # a time bound's survivors vary per query
    default = max(RANKED_FETCH_FACTOR * query.limit, RANKED_FETCH_MIN)
    needed = reach.get(key) if key is not None else None
    first = default if needed is None else min(
        max(math.ceil(query.limit * needed * RANKED_FETCH_MARGIN), RANKED_FETCH_MIN),
        RANKED_FETCH_FACTOR * default)
    # The learned cut first; when it was below the default and fell short, the default.
    for fetch in dict.fromkeys((first, max(first, default))):
        *rows, last = _execute(connection, sql.ranked_search(query, fetch)).fetchall()
        enough = len(rows) >= query.limit
        if key is not None and (enough or last[8] == fetch):
            # With enough survivors the last one's place says how deep the cut had to
            # go; with too few, ``fetch`` per survivor is a lower bound.
            seen = rows[-1][9] / len(rows) if enough else fetch / max(len(rows), 1)
            before = reach.get(key)
            reach[key] = seen if before is None else max(seen, (before + seen) / 2)
        if enough or last[8] < fetch:
            return [row[:8] for row in rows]
    return _execute(connection, sql.search(query)).fetchall()


def _write(connection: sqlite3.Connection, batch: Sequence[Conversation]) -> IngestReport:
    if not batch:
        return IngestReport()
    ids = [c.session.id for c in batch]
    connection.execute("BEGIN IMMEDIATE")
    try:
        existing = {row[0] for row in _execute(connection, sql.existing_sessions(ids))}
        stored = [(row[0], sql.message_from_row(row[1:]))
                  for row in _execute(connection, sql.stored_messages(existing))]
        next_id: int = connection.execute(sql.MAX_MESSAGE_ID).fetchone()[0] + 1
        plan = sql.plan_write(batch, stored, next_id)
        connection.executemany(sql.DELETE_INDEXED, plan.unindex)
        # Only rows not kept are deleted; kept ones are updated in place, so their vectors
        # stay (the schema's triggers drop the vectors of deleted and changed rows).
        _execute(connection, sql.delete_message_rows(plan.dropped))
        connection.executemany(sql.UPSERT_SESSION, [sql.session_row(c.session) for c in batch])
        connection.executemany(sql.UPSERT_MESSAGE, plan.messages)
        connection.executemany(sql.INSERT_INDEXED, plan.index)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise
    return IngestReport(added=len(batch) - len(existing), updated=len(existing),
                        messages=len(plan.messages))


def _execute(connection: sqlite3.Connection, statement: sql.Statement) -> sqlite3.Cursor:
    return connection.execute(statement.sql, statement.params)


def _connect(path: Path, readonly: bool, busy_timeout: float
             ) -> Result[sqlite3.Connection, StoreUnavailable]:
    # Runs on the store's worker thread, which then owns the connection.
    target = path.resolve().as_uri() + _read_options(path) if readonly else str(path)
    try:
        connection = sqlite3.connect(target, uri=readonly, timeout=busy_timeout,
                                     isolation_level=None)
    except sqlite3.Error as error:
        return Failure(unavailable(path, error))
    try:
        problem = _prepare(connection, path, readonly)
    except sqlite3.Error as error:
        problem = unavailable(path, error)
    if problem is not None:
        connection.close()
        return Failure(problem)
    return Success(connection)


def _read_options(path: Path) -> str:
    """URI options for reading ``path`` without creating or changing any file.

    A plain ``mode=ro`` open of a WAL-mode file with no writer around creates its
    ``-wal`` and ``-shm`` files, and fails in a folder the reader may not write. With
    no ``-wal`` every commit is in the file itself, so it is read as immutable.
    """
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
    except OSError:
        return "?mode=ro"  # SQLite's own open reports the problem
    wal, shm = Path(f"{path}-wal").exists(), Path(f"{path}-shm").exists()
    return "?mode=ro&immutable=1" if open_mode(header, wal=wal, shm=shm) == "immutable" \
        else "?mode=ro"


def _identity(connection: sqlite3.Connection) -> tuple[int, int]:
    application: int = connection.execute("PRAGMA application_id").fetchone()[0]
    version: int = connection.execute("PRAGMA user_version").fetchone()[0]
    return application, version


def _is_blank(connection: sqlite3.Connection) -> bool:
    return _identity(connection) == (0, 0) and connection.execute(
        "SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0


def _prepare(connection: sqlite3.Connection, path: Path, readonly: bool
             ) -> StoreUnavailable | None:
    # A bigger page cache roughly halves the time SQLite spends on bulk ingests.
    connection.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    if readonly:
        connection.execute("PRAGMA query_only = ON")
    elif _is_blank(connection):
        _create_schema(connection)
    application, version = _identity(connection)
    if application != sql.APPLICATION_ID:
        return StoreUnavailable(f"{path} is not a harkback database")
    if version != sql.SCHEMA_VERSION:
        return StoreUnavailable(
            f"{path} has harkback schema version {version}; this version of harkback reads "
            f"schema version {sql.SCHEMA_VERSION}")
    if not readonly:
        connection.execute("PRAGMA synchronous = NORMAL")
        if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            connection.execute("PRAGMA journal_mode = WAL")
        if not _has_vector_schema(connection):
            _add_vector_schema(connection)
    return None


def _add_vector_schema(connection: sqlite3.Connection) -> None:
    # Files of schema version 1 made before vectors existed gain the tables here; the
    # version stays, so older harkback versions keep opening the file (and the triggers
    # keep the vectors right when they write).
    connection.execute("BEGIN IMMEDIATE")
    try:
        for statement in sql.VECTOR_SCHEMA:
            connection.execute(statement)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise


def _create_schema(connection: sqlite3.Connection) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        # Another process may have created the schema while this one waited for the lock.
        if _is_blank(connection):
            for statement in sql.SCHEMA:
                connection.execute(statement)
            connection.execute(f"PRAGMA application_id = {sql.APPLICATION_ID}")
            connection.execute(f"PRAGMA user_version = {sql.SCHEMA_VERSION}")
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.rollback()
        raise
