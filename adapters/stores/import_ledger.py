"""The import ledger: what was imported from which source, when, and up to where.

Importers of foreign transcripts (Hermes ``state.db``, Claude Code and Codex files,
ingest files) read only what changed since their last run. The ledger remembers, per
source location, a ``cursor`` (for Hermes: the highest message id read) and a
:class:`Mark` per item (a file, or a Hermes session) holding the item's fingerprint
when it was last imported.

The SQLite ledger keeps two tables in the session store's own file and runs on the
store's connection thread (like the summary cache). The tables are made on the first
write, so a database made before the ledger existed needs no migration; reading a
file that has none yields an empty ledger. Marks are kept only after the
conversations they describe were stored, so a run that stops half-way redoes the
rest next time and never skips anything.

>>> import asyncio
>>> ledger = MemoryImportLedger()
>>> key = SourceKey(kind="codex", location="/home/me/.codex/sessions")
>>> _ = asyncio.run(ledger.keep(key, (Mark(item="a.jsonl", fingerprint="10:5",
...                                         sessions=1, messages=4),), now=100.0).awaitable())
>>> from returns.unsafe import unsafe_perform_io
>>> state = unsafe_perform_io(asyncio.run(ledger.state(key).awaitable()).unwrap())
>>> state.marks_by_item()["a.jsonl"].fingerprint, state.messages
('10:5', 4)
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection, Mapping, Sequence, Sized
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import attrs
from returns.future import FutureResult

from harkback.adapters.stores import gone_marks
from harkback.adapters.stores.closing import in_turn, never_closed
from harkback.adapters.stores.sql.statement import json_list
from harkback.adapters.stores.sqlite_transaction import immediate
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState, kept_only_gone

if TYPE_CHECKING:
    from harkback.adapters.stores.sqlite import SqliteStore

SCHEMA: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS import_sources (
        location TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        first_imported_at REAL NOT NULL,
        last_imported_at REAL NOT NULL,
        cursor TEXT NOT NULL DEFAULT ''
    ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS import_marks (
        location TEXT NOT NULL,
        item TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        sessions INTEGER NOT NULL DEFAULT 0,
        messages INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (location, item)
    ) WITHOUT ROWID""",
    # The sessions read from each item, so a sync can remove them when the item is gone.
    # A table of its own: files whose ledger predates it gain it on their next write.
    """CREATE TABLE IF NOT EXISTS import_mark_sessions (
        location TEXT NOT NULL,
        item TEXT NOT NULL,
        session_id TEXT NOT NULL,
        PRIMARY KEY (location, item, session_id)
    ) WITHOUT ROWID""",
)

STAMP_SOURCE = (
    "INSERT INTO import_sources (location, kind, first_imported_at, last_imported_at) "
    "VALUES (?, ?, ?, ?) ON CONFLICT (location) DO UPDATE SET kind = excluded.kind, "
    "last_imported_at = excluded.last_imported_at")
KEEP_MARK = ("INSERT OR REPLACE INTO import_marks (location, item, fingerprint, sessions, "
             "messages) VALUES (?, ?, ?, ?, ?)")
FORGET_SESSIONS = "DELETE FROM import_mark_sessions WHERE location = ? AND item = ?"
KEEP_SESSION = ("INSERT OR IGNORE INTO import_mark_sessions (location, item, session_id) "
                "VALUES (?, ?, ?)")
FORGET_MARK = "DELETE FROM import_marks WHERE location = ? AND item = ?"
SELECT_MARK_SESSIONS = "SELECT item, session_id FROM import_mark_sessions WHERE location = ?"
SET_CURSOR = "UPDATE import_sources SET cursor = ?, last_imported_at = ? WHERE location = ?"
SELECT_SOURCE = ("SELECT kind, first_imported_at, last_imported_at, cursor FROM import_sources "
                 "WHERE location = ?")
SELECT_MARKS = ("SELECT item, fingerprint, sessions, messages FROM import_marks "
                "WHERE location = ?")
_SOURCES = (
    "SELECT s.location, s.kind, s.first_imported_at, s.last_imported_at, s.cursor, "
    "COALESCE(SUM(m.sessions), 0), COALESCE(SUM(m.messages), 0), {kept} "
    "FROM import_sources AS s LEFT JOIN import_marks AS m ON m.location = s.location {join} "
    "GROUP BY s.location ORDER BY s.last_imported_at DESC, s.location")
SELECT_SOURCES = (gone_marks.kept_only_gone(f"g.session_id NOT IN ({gone_marks.LIVE_SESSIONS})")
                  + _SOURCES.format(kept="COALESCE(MAX(gone_kept.n), 0)",
                                    join=gone_marks.KEPT_OF_SOURCE))
SELECT_SOURCES_BEFORE_IDS = _SOURCES.format(
    kept=f"COALESCE(SUM(CASE WHEN {gone_marks.gone('m')} THEN m.sessions END), 0)", join="")
"""The sources of a ledger older than ``import_mark_sessions`` (no mark names sessions)."""
GONE_NAMING = gone_marks.naming("g.session_id IN (SELECT value FROM json_each(?))")
SESSIONS_OF_MARK = "SELECT session_id FROM import_mark_sessions WHERE location = ? AND item = ?"
COUNT_MESSAGES = ("SELECT count(*) FROM messages "
                  "WHERE session_id IN (SELECT value FROM json_each(?))")


def _missing_table(error: sqlite3.OperationalError) -> bool:
    return "no such table" in str(error)


def _read_state(key: SourceKey) -> Callable[[sqlite3.Connection], SourceState]:
    def work(connection: sqlite3.Connection) -> SourceState:
        try:
            row = connection.execute(SELECT_SOURCE, (key.location,)).fetchone()
            rows = connection.execute(SELECT_MARKS, (key.location,)).fetchall()
        except sqlite3.OperationalError as error:
            if _missing_table(error):
                return SourceState(key=key)  # nothing was ever imported into this file
            raise
        ids = _mark_sessions(connection, key.location)
        marks = tuple(Mark(item=r[0], fingerprint=r[1], sessions=r[2], messages=r[3],
                           session_ids=tuple(ids.get(r[0], ()))) for r in rows)
        return source_state(key, row, marks)
    return work


def source_state(key: SourceKey, row: Sequence[Any] | None, marks: tuple[Mark, ...]
                 ) -> SourceState:
    """A source's state from its ``import_sources`` row (``kind, first, last, cursor``;
    None when never stamped) and its marks; its key names the kind it was imported as."""
    if row is None:
        return SourceState(key=key, marks=marks)
    return SourceState(key=SourceKey(kind=row[0], location=key.location),
                       first_imported_at=row[1], last_imported_at=row[2],
                       cursor=row[3], marks=marks, sessions=sum(m.sessions for m in marks),
                       messages=sum(m.messages for m in marks),
                       kept_gone=kept_only_gone(marks))


def _mark_sessions(connection: sqlite3.Connection, location: str) -> dict[str, list[str]]:
    """The session ids of each item of ``location`` (none in a ledger older than them)."""
    ids: dict[str, list[str]] = {}
    try:
        for item, session_id in connection.execute(SELECT_MARK_SESSIONS, (location,)):
            ids.setdefault(item, []).append(session_id)
    except sqlite3.OperationalError as error:
        if not _missing_table(error):
            raise
    return ids


def _write(key: SourceKey, marks: Sequence[Mark], now: float, cursor: str | None = None
           ) -> Callable[[sqlite3.Connection], None]:
    """Stamp the source, keep ``marks`` and set ``cursor`` (unless None), all in one
    transaction: a crash never leaves a stamp without the cursor it belongs to."""
    def work(connection: sqlite3.Connection) -> None:
        with immediate(connection):
            for statement in SCHEMA:
                connection.execute(statement)
            connection.execute(STAMP_SOURCE, (key.location, key.kind, now, now))
            connection.executemany(KEEP_MARK, [
                (key.location, m.item, m.fingerprint, m.sessions, m.messages) for m in marks])
            connection.executemany(FORGET_SESSIONS, [(key.location, m.item) for m in marks])
            connection.executemany(KEEP_SESSION, [
                (key.location, m.item, session_id) for m in marks for session_id in m.session_ids])
            if cursor is not None:
                connection.execute(SET_CURSOR, (cursor, now, key.location))
    return work


def _forget(key: SourceKey, items: Sequence[str]) -> Callable[[sqlite3.Connection], None]:
    def work(connection: sqlite3.Connection) -> None:
        pairs = [(key.location, item) for item in items]
        with immediate(connection):
            for statement in SCHEMA:
                connection.execute(statement)
            connection.executemany(FORGET_MARK, pairs)
            connection.executemany(FORGET_SESSIONS, pairs)
    return work


def _let_go(ids: Sequence[str]) -> Callable[[sqlite3.Connection], None]:
    """Take ``ids`` out of the gone marks naming them, read and written under one write lock."""
    def work(connection: sqlite3.Connection) -> None:
        with immediate(connection):
            for statement in SCHEMA:
                connection.execute(statement)
            found = [(r[0], Mark(item=r[1], fingerprint=r[2], sessions=r[3], messages=r[4],
                                 session_ids=tuple(i for (i,) in connection.execute(
                                     SESSIONS_OF_MARK, (r[0], r[1])))))
                     for r in connection.execute(GONE_NAMING, (json_list(ids),)).fetchall()]
            forgotten, narrowed = gone_marks.letting_go(found, set(ids), lambda left: int(
                connection.execute(COUNT_MESSAGES, (json_list(left),)).fetchone()[0]))
            connection.executemany(FORGET_MARK, forgotten)
            connection.executemany(FORGET_SESSIONS, forgotten)
            connection.executemany(KEEP_MARK, [(where, m.item, m.fingerprint, m.sessions,
                                                m.messages) for where, m in narrowed])
            connection.executemany(FORGET_SESSIONS, [(where, m.item) for where, m in narrowed])
            connection.executemany(KEEP_SESSION, [(where, m.item, i) for where, m in narrowed
                                                  for i in m.session_ids])
    return work


def _read_sources(connection: sqlite3.Connection) -> tuple[SourceState, ...]:
    try:
        rows = connection.execute(SELECT_SOURCES).fetchall()
    except sqlite3.OperationalError as error:
        if not _missing_table(error):
            raise
        try:  # no import_mark_sessions yet (or no ledger at all)
            rows = connection.execute(SELECT_SOURCES_BEFORE_IDS).fetchall()
        except sqlite3.OperationalError as again:
            if _missing_table(again):
                return ()
            raise
    return tuple(SourceState(key=SourceKey(kind=r[1], location=r[0]), first_imported_at=r[2],
                             last_imported_at=r[3], cursor=r[4], sessions=r[5], messages=r[6],
                             kept_gone=r[7])
                 for r in rows)


class SqliteImportLedger:
    """An :class:`ImportLedger` in the session store's SQLite file, on its connection thread."""

    def __init__(self, store: SqliteStore) -> None:
        """Share ``store``'s connection (and its read-only mode)."""
        self.store = store

    def state(self, key: SourceKey) -> FutureResult[SourceState, StoreUnavailable]:
        """What is remembered of ``key`` (with its marks)."""
        return self.store.run(_read_state(key))

    def keep(self, key: SourceKey, marks: Sequence[Mark], *, now: float
             ) -> FutureResult[None, StoreUnavailable]:
        """Remember ``marks`` and stamp the source, in one transaction."""
        return self._writing(_write(key, tuple(marks), now))

    def advance(self, key: SourceKey, cursor: str, *, now: float
                ) -> FutureResult[None, StoreUnavailable]:
        """Remember that a whole import of ``key`` finished, up to ``cursor`` (one transaction)."""
        return self._writing(_write(key, (), now, cursor))

    def forget(self, key: SourceKey, items: Sequence[str]
               ) -> FutureResult[None, StoreUnavailable]:
        """Drop the marks of ``items`` (and their session ids), in one transaction."""
        return self._writing(_forget(key, tuple(items)))

    def sources(self) -> FutureResult[tuple[SourceState, ...], StoreUnavailable]:
        """Every source imported so far, most recently imported first."""
        return self.store.run(_read_sources)

    def let_go(self, session_ids: Sequence[str]) -> FutureResult[None, StoreUnavailable]:
        """Take ``session_ids`` out of every gone mark naming them, in one transaction."""
        return self._writing(_let_go(tuple(session_ids)))

    def _writing(self, work: Callable[[sqlite3.Connection], None]
                 ) -> FutureResult[None, StoreUnavailable]:
        if self.store.readonly:
            return FutureResult.from_failure(StoreUnavailable(
                f"the store at {self.store.path} was opened read-only; it cannot import"))
        return self.store.run(work, write=True)


@attrs.define
class MemoryImportLedger:
    """An :class:`ImportLedger` in this process's memory (for the in-memory store, tests)."""

    stamps: dict[str, tuple[SourceKey, float, float, str]] = attrs.field(factory=dict)
    marks: dict[str, dict[str, Mark]] = attrs.field(factory=dict)
    stored: Mapping[str, Sized] = attrs.field(factory=dict)
    """The store's messages by session (what :meth:`let_go` counts): none without a store."""
    closed: Callable[[], bool] = attrs.field(default=never_closed, repr=False, eq=False)
    """Whether the store it belongs to was closed: then it refuses, as the store does."""
    lock: AbstractContextManager[Any] = attrs.field(factory=threading.RLock, repr=False,
                                                    eq=False)
    """Held for each call: the store's own lock, so that a listing from another thread does
    not read the dicts while an import changes them, nor :meth:`let_go` count ``stored``
    while the store writes it."""

    def state(self, key: SourceKey) -> FutureResult[SourceState, StoreUnavailable]:
        """What is remembered of ``key`` (with its marks)."""
        return in_turn(self.lock, self.closed,
                       lambda: self._state(key.location, key, with_marks=True))

    def _state(self, location: str, key: SourceKey, *, with_marks: bool,
               held: Collection[str] = ()) -> SourceState:
        marks: Mapping[str, Mark] = self.marks.get(location, {})
        stamp = self.stamps.get(location)
        if stamp is None:
            return SourceState(key=key, marks=tuple(marks.values()) if with_marks else ())
        stamped, first, last, cursor = stamp
        return SourceState(key=stamped, first_imported_at=first, last_imported_at=last,
                           cursor=cursor, marks=tuple(marks.values()) if with_marks else (),
                           sessions=sum(m.sessions for m in marks.values()),
                           messages=sum(m.messages for m in marks.values()),
                           kept_gone=kept_only_gone(marks.values(), held))

    def keep(self, key: SourceKey, marks: Sequence[Mark], *, now: float
             ) -> FutureResult[None, StoreUnavailable]:
        """Remember ``marks`` and stamp the source."""
        def work() -> None:
            self._stamp(key, now)
            self.marks.setdefault(key.location, {}).update({m.item: m for m in marks})
        return in_turn(self.lock, self.closed, work)

    def advance(self, key: SourceKey, cursor: str, *, now: float
                ) -> FutureResult[None, StoreUnavailable]:
        """Remember that a whole import of ``key`` finished, up to ``cursor``."""
        def work() -> None:
            _, first, _, _ = self._stamp(key, now)
            self.stamps[key.location] = (key, first, now, cursor)
        return in_turn(self.lock, self.closed, work)

    def forget(self, key: SourceKey, items: Sequence[str]
               ) -> FutureResult[None, StoreUnavailable]:
        """Drop the marks of ``items``."""
        def work() -> None:
            kept = self.marks.get(key.location, {})
            for item in items:
                kept.pop(item, None)
        return in_turn(self.lock, self.closed, work)

    def _stamp(self, key: SourceKey, now: float) -> tuple[SourceKey, float, float, str]:
        _, first, _, cursor = self.stamps.get(key.location, (key, now, now, ""))
        self.stamps[key.location] = (key, first, now, cursor)
        return self.stamps[key.location]

    def sources(self) -> FutureResult[tuple[SourceState, ...], StoreUnavailable]:
        """Every source imported so far, most recently imported first."""
        def work() -> tuple[SourceState, ...]:
            live = {i for kept in self.marks.values() for mark in kept.values()
                    if not mark.gone for i in mark.session_ids}
            found = [self._state(location, stamp[0], with_marks=False, held=live)
                     for location, stamp in self.stamps.items()]
            found.sort(key=lambda s: (-(s.last_imported_at or 0.0), s.key.location))
            return tuple(found)
        return in_turn(self.lock, self.closed, work)

    def let_go(self, session_ids: Sequence[str]) -> FutureResult[None, StoreUnavailable]:
        """Take ``session_ids`` out of every gone mark naming them."""
        removed = set(session_ids)

        def work() -> None:
            found = [(location, mark) for location, kept in self.marks.items()
                     for mark in kept.values()
                     if mark.gone and not removed.isdisjoint(mark.session_ids)]
            forgotten, narrowed = gone_marks.letting_go(found, removed, lambda left: sum(
                len(self.stored.get(i, ())) for i in left))
            for location, item in forgotten:
                self.marks[location].pop(item, None)
            for location, mark in narrowed:
                self.marks[location][mark.item] = mark
        return in_turn(self.lock, self.closed, work)
