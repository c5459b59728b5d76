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
import os
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Self, TypeVar

from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters import search_plan, sql
from harkback.adapters.hermes_db import open_mode
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import (
    DEFAULT_MAX_SCORED,
    IngestReport,
    MatchQuery,
    RecentQuery,
    TermStats,
)
from harkback.stages.records import Conversation, Message, MessageHit, Session, SessionOverview

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 5.0
"""Seconds a statement waits for another connection's lock before giving up."""

RANKED_FETCH_FACTOR = 4
RANKED_FETCH_MIN = 200
"""A search first joins FTS5's best ``max(factor * limit, min)`` rows, then filters them."""

CACHE_KIB = 64 * 1024
"""The most page cache a connection may use, in KiB (allocated only as pages are read)."""

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
    """A :class:`~harkback.stages.ports.SessionStore` kept in a SQLite file.

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

    def run(self, work: Callable[[sqlite3.Connection], T]) -> FutureResult[T, StoreUnavailable]:
        """Run ``work`` on the store's connection thread (for adapters sharing the file).

        A ``sqlite3.Error`` raised by ``work`` comes back as :class:`StoreUnavailable`.
        """
        return self._run(work)

    def search(self, query: MatchQuery) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
        """Messages matching the query, best first; ``score`` is ``-bm25``.

        Bounded by ``query.max_scored`` as :class:`~harkback.stages.ports.MatchQuery`
        says; every statement runs in one trip to the connection's thread.
        """
        return self._run(lambda connection: tuple(
            sql.hit_from_row(row) for row in _search_rows(connection, query)))

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
        return self._run(lambda connection: _write(connection, batch))


def _fetch(statement: sql.Statement, convert: Callable[[sql.Row], T]
           ) -> Callable[[sqlite3.Connection], tuple[T, ...]]:
    def work(connection: sqlite3.Connection) -> tuple[T, ...]:
        return tuple(convert(row) for row in connection.execute(statement.sql, statement.params))
    return work


def _estimate_count(connection: sqlite3.Connection, term: str, documents: int) -> int:
    """Messages holding ``term``: exact up to a few thousand, estimated above.

    Counting a common term exactly walks its whole posting list (FTS5's vocabulary table
    does the same: ~35 ms for a term in half of 1M messages). Instead its newest and its
    oldest ``cap + 1`` matches are read. When the two overlap the term is rare enough to
    count exactly; otherwise the stretch between them is taken to hold matches at the
    mean density of the two ends (each over its own ids), so a word that is frequent only
    lately (a current topic) is not mistaken for one found everywhere.
    """
    cap = DEFAULT_MAX_SCORED
    newest, new_low, new_high = _execute(connection, sql.newest_matches(term, cap)).fetchone()
    if newest <= cap:
        return int(newest)
    oldest, old_low, old_high = _execute(connection, sql.oldest_matches(term, cap)).fetchone()
    if old_high >= new_low:
        return int(_execute(connection, sql.match_count(term)).fetchone()[0])
    density = (oldest / (old_high - old_low + 1) + newest / (new_high - new_low + 1)) / 2
    estimate: float = oldest + newest + (new_low - old_high - 1) * density
    return min(round(estimate), documents)


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


def _search_rows(connection: sqlite3.Connection, query: MatchQuery) -> list[sql.Row]:
    cap = query.max_scored
    if cap is None:
        return _best_rows(connection, query)
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


def _best_rows(connection: sqlite3.Connection, query: MatchQuery) -> list[sql.Row]:
    # Ranking inside FTS5 and joining only its best rows saves a third of a search
    # matching thousands of rows; the filters then apply to those rows only, so when
    # too few survive a cut that may have dropped some, the full statement decides.
    fetch = max(RANKED_FETCH_FACTOR * query.limit, RANKED_FETCH_MIN)
    *rows, last = _execute(connection, sql.ranked_search(query, fetch)).fetchall()
    if len(rows) >= query.limit or last[8] < fetch:
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
        _execute(connection, sql.delete_messages(existing))
        connection.executemany(sql.UPSERT_SESSION, [sql.session_row(c.session) for c in batch])
        connection.executemany(sql.INSERT_MESSAGE, plan.messages)
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
    return None


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
