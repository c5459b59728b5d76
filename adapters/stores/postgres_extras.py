"""The PostgreSQL store's summary cache and import ledger: tables of the same database, the
rows of the SQLite ones (:mod:`~harkback.adapters.stores.summary_cache`,
:mod:`~harkback.adapters.stores.import_ledger`).

A read-only store only reads them: its cache never keeps (the next lookup misses), its
ledger refuses to keep marks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import psycopg
from returns.future import FutureResult

from harkback.adapters.stores import gone_marks
from harkback.adapters.stores.import_ledger import source_state
from harkback.adapters.stores.postgres_writes import check_version
from harkback.adapters.stores.summary_cache import (
    keeps_no_secret,
    key_params,
    summary_from_row,
    summary_row,
)
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.ports import SummaryKey
from harkback.stages.records import Summary

if TYPE_CHECKING:
    from harkback.adapters.stores.postgres import PostgresStore

Connection = psycopg.Connection[tuple[Any, ...]]

_KEY = "root_session_id, content, query, model, prompt_version"
_CACHED = (f"SELECT kind, text, note, cited, prompt_tokens, completion_tokens "
           f"FROM summary_cache WHERE ({_KEY}) = (%s, %s, %s, %s, %s)")
_KEEP_SUMMARY = (
    f"INSERT INTO summary_cache ({_KEY}, kind, text, note, cited, prompt_tokens, "
    "completion_tokens, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
    f"ON CONFLICT ({_KEY}) DO UPDATE SET kind = excluded.kind, text = excluded.text, "
    "note = excluded.note, cited = excluded.cited, prompt_tokens = excluded.prompt_tokens, "
    "completion_tokens = excluded.completion_tokens, created_at = excluded.created_at")

_STAMP = ("INSERT INTO import_sources (location, kind, first_imported_at, last_imported_at) "
          "VALUES (%s, %s, %s, %s) ON CONFLICT (location) DO UPDATE SET kind = excluded.kind, "
          "last_imported_at = excluded.last_imported_at")
_MARK = ("INSERT INTO import_marks (location, item, fingerprint, sessions, messages) "
         "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (location, item) DO UPDATE SET "
         "fingerprint = excluded.fingerprint, sessions = excluded.sessions, "
         "messages = excluded.messages")
_FORGET_SESSIONS = ("DELETE FROM import_mark_sessions WHERE location = %s "
                    "AND item = ANY(%s::text[])")
_KEEP_SESSIONS = ("INSERT INTO import_mark_sessions (location, item, session_id) "
                  "SELECT %s, item, session_id FROM unnest(%s::text[], %s::text[]) "
                  "AS k(item, session_id) ON CONFLICT DO NOTHING")
_SOURCES = (
    gone_marks.kept_only_gone(
        f"NOT EXISTS ({gone_marks.LIVE_SESSIONS} AND l.session_id = g.session_id)")
    + "SELECT s.location, s.kind, s.first_imported_at, s.last_imported_at, s.cursor, "
    "COALESCE(SUM(m.sessions), 0), COALESCE(SUM(m.messages), 0), "
    "COALESCE(MAX(gone_kept.n), 0) "
    "FROM import_sources AS s LEFT JOIN import_marks AS m ON m.location = s.location "
    f"{gone_marks.KEPT_OF_SOURCE} "
    'GROUP BY s.location ORDER BY s.last_imported_at DESC, s.location COLLATE "C"')
_GONE_NAMING = gone_marks.naming("g.session_id = ANY(%s::text[])")
_SESSIONS_OF_MARK = ("SELECT session_id FROM import_mark_sessions WHERE location = %s "
                     'AND item = %s ORDER BY session_id COLLATE "C"')
# Every write of marks takes ROW EXCLUSIVE on import_marks before it touches their sessions:
# while this is held, no other transaction can change a mark between its read and its write.
_HOLD_MARKS = "LOCK TABLE import_marks IN SHARE ROW EXCLUSIVE MODE"


CACHE_LOCK_TIMEOUT = "SET LOCAL lock_timeout = '100ms'"
"""How long a cache statement waits for a lock (as the SQLite cache's busy timeout): a
table locked by a migration or a rewrite held each search with a model for the 60 s
read timeout, past its deadline, the summaries' lookups then a miss anyway."""


class PostgresSummaryCache:
    """A :class:`~harkback.stages.ports.SummaryCache` in the store's database."""

    def __init__(self, store: PostgresStore) -> None:
        """Use ``store``'s connections (and its read-only mode)."""
        self.store = store

    def cached_summary(self, key: SummaryKey) -> FutureResult[Summary | None, StoreUnavailable]:
        """The summary kept under ``key``, or None."""
        def work(connection: Connection) -> Summary | None:
            connection.execute(CACHE_LOCK_TIMEOUT)
            row = connection.execute(_CACHED, key_params(key)).fetchone()
            return None if row is None else summary_from_row(tuple(row))
        return self.store.run(work)

    def keep_summary(self, key: SummaryKey, summary: Summary
                     ) -> FutureResult[None, StoreUnavailable]:
        """Keep ``summary``; on a read-only store, or for a question holding a secret
        (:func:`keeps_no_secret`), do nothing (the next lookup misses)."""
        if self.store.readonly or not keeps_no_secret(key):
            return FutureResult.from_value(None)
        row = summary_row(key, summary, time.time())
        return self.store.run(lambda connection: _keep(connection, _KEEP_SUMMARY, row,
                                                       lock_timeout=True), long=True)


def _count_messages(connection: Connection, ids: Sequence[str]) -> int:
    """How many messages the sessions ``ids`` hold."""
    row = connection.execute("SELECT count(*) FROM messages WHERE session_id = ANY(%s::text[])",
                             (list(ids),)).fetchone()
    return int(row[0]) if row else 0


def _keep(connection: Connection, statement: str, params: Sequence[Any], *,
          lock_timeout: bool = False) -> None:
    with connection.transaction():
        if lock_timeout:
            connection.execute(CACHE_LOCK_TIMEOUT)
        check_version(connection)  # migrated by another harkback meanwhile: nothing kept
        connection.execute(statement, params)


def _forget(connection: Connection, location: str, items: list[str]) -> None:
    """Drop the marks of ``items`` at ``location`` and the session ids they name."""
    connection.execute("DELETE FROM import_marks WHERE location = %s "
                       "AND item = ANY(%s::text[])", (location, items))
    connection.execute(_FORGET_SESSIONS, (location, items))


class PostgresImportLedger:
    """An :class:`~harkback.stages.imports.ImportLedger` in the store's database."""

    def __init__(self, store: PostgresStore) -> None:
        """Use ``store``'s connections (and its read-only mode)."""
        self.store = store

    def state(self, key: SourceKey) -> FutureResult[SourceState, StoreUnavailable]:
        """What is remembered of ``key`` (with its marks)."""
        def work(connection: Connection) -> SourceState:
            row = connection.execute(
                "SELECT kind, first_imported_at, last_imported_at, cursor FROM import_sources "
                "WHERE location = %s", (key.location,)).fetchone()
            ids: dict[str, list[str]] = {}
            for item, session_id in connection.execute(
                    "SELECT item, session_id FROM import_mark_sessions WHERE location = %s "
                    'ORDER BY item, session_id COLLATE "C"', (key.location,)):
                ids.setdefault(item, []).append(session_id)
            marks = tuple(Mark(item=r[0], fingerprint=r[1], sessions=r[2], messages=r[3],
                               session_ids=tuple(ids.get(r[0], ())))
                          for r in connection.execute(
                              "SELECT item, fingerprint, sessions, messages FROM import_marks "
                              "WHERE location = %s", (key.location,)))
            return source_state(key, row, marks)
        return self.store.run(work)

    def keep(self, key: SourceKey, marks: Sequence[Mark], *, now: float
             ) -> FutureResult[None, StoreUnavailable]:
        """Remember ``marks`` and stamp the source, in one transaction."""
        return self._writing(key, tuple(marks), now, None)

    def advance(self, key: SourceKey, cursor: str, *, now: float
                ) -> FutureResult[None, StoreUnavailable]:
        """Remember that a whole import of ``key`` finished, up to ``cursor``."""
        return self._writing(key, (), now, cursor)

    def forget(self, key: SourceKey, items: Sequence[str]
               ) -> FutureResult[None, StoreUnavailable]:
        """Drop the marks of ``items`` (and their session ids), in one transaction."""
        wanted = list(dict.fromkeys(items))
        return self._transaction(lambda connection: _forget(connection, key.location, wanted))

    def sources(self) -> FutureResult[tuple[SourceState, ...], StoreUnavailable]:
        """Every source imported so far, most recently imported first."""
        def work(connection: Connection) -> tuple[SourceState, ...]:
            return tuple(
                SourceState(key=SourceKey(kind=r[1], location=r[0]), first_imported_at=r[2],
                            last_imported_at=r[3], cursor=r[4], sessions=int(r[5]),
                            messages=int(r[6]), kept_gone=int(r[7]))
                for r in connection.execute(_SOURCES))
        return self.store.run(work)

    def _writing(self, key: SourceKey, marks: tuple[Mark, ...], now: float,
                 cursor: str | None) -> FutureResult[None, StoreUnavailable]:
        pairs = [(m.item, session_id) for m in marks for session_id in m.session_ids]

        def work(connection: Connection) -> None:
            connection.execute(_STAMP, (key.location, key.kind, now, now))
            with connection.cursor() as cursor_:
                cursor_.executemany(_MARK, [(key.location, m.item, m.fingerprint,
                                             m.sessions, m.messages) for m in marks])
            if marks:
                connection.execute(_FORGET_SESSIONS, (key.location, [m.item for m in marks]))
            if pairs:
                connection.execute(_KEEP_SESSIONS, (key.location, [p[0] for p in pairs],
                                                    [p[1] for p in pairs]))
            if cursor is not None:
                connection.execute(
                    "UPDATE import_sources SET cursor = %s, last_imported_at = %s "
                    "WHERE location = %s", (cursor, now, key.location))
        return self._transaction(work)

    def let_go(self, session_ids: Sequence[str]) -> FutureResult[None, StoreUnavailable]:
        """Take ``session_ids`` out of every gone mark naming them: read and written in one
        transaction holding the marks, so a mark another harkback keeps meanwhile waits."""
        removed = list(dict.fromkeys(session_ids))

        def work(connection: Connection) -> None:
            connection.execute(_HOLD_MARKS)
            found = [(r[0], Mark(item=r[1], fingerprint=r[2], sessions=r[3], messages=r[4],
                                 session_ids=tuple(i for (i,) in connection.execute(
                                     _SESSIONS_OF_MARK, (r[0], r[1])))))
                     for r in connection.execute(_GONE_NAMING, (removed,)).fetchall()]
            forgotten, narrowed = gone_marks.letting_go(
                found, set(removed), lambda ids: _count_messages(connection, ids))
            for where, item in forgotten:
                _forget(connection, where, [item])
            for where, mark in narrowed:
                connection.execute(_MARK, (where, mark.item, mark.fingerprint,
                                           mark.sessions, mark.messages))
                connection.execute(_FORGET_SESSIONS, (where, [mark.item]))
                connection.execute(_KEEP_SESSIONS, (where, [mark.item] * len(
                    mark.session_ids), list(mark.session_ids)))
        return self._transaction(work)

    def _transaction(self, work: Callable[[Connection], None]
                     ) -> FutureResult[None, StoreUnavailable]:
        """Run ``work`` as one transaction of a write to the ledger, on a database still of
        this schema (migrated by another harkback meanwhile: nothing written); a read-only
        store refuses."""
        if self.store.readonly:
            return self._refused()

        def checked(connection: Connection) -> None:
            with connection.transaction():
                check_version(connection)
                work(connection)
        return self.store.run(checked, long=True)

    def _refused(self) -> FutureResult[None, StoreUnavailable]:
        return FutureResult.from_failure(StoreUnavailable(
            f"the store at {self.store.where} was opened read-only; it cannot import"))
