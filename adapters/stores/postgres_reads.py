"""Reading sessions back from the PostgreSQL store: by id, children, messages, recent roots,
and the store's counts (title search: :mod:`~harkback.adapters.stores.postgres_titles`).

Orders match the SQLite store's: ids compare byte by byte (``COLLATE "C"``, whatever the
database's locale) and an unknown start sorts last.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import psycopg

from harkback.adapters.stores import sqlite_stats
from harkback.adapters.stores.damaged_rows import session_reader
from harkback.adapters.stores.postgres_search import scope_filters
from harkback.adapters.stores.postgres_text import restore, storable
from harkback.adapters.stores.postgres_writes import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    SESSION_FIELDS,
    read_text,
    stored_message,
    stored_session,
)
from harkback.adapters.stores.sql.links import LINK_COLUMNS, link_from_row
from harkback.adapters.stores.sql.loops import is_root
from harkback.stages.first_request import PREVIEW_READS, preview
from harkback.stages.long_text import loaded_start
from harkback.stages.ports import RecentQuery
from harkback.stages.records import Message, Session, SessionLink, SessionOverview
from harkback.stages.stats import SourceCount, StoreStats, by_source

Connection = psycopg.Connection[tuple[Any, ...]]

_S_COLUMNS = ", ".join(f"s.{c}" for c in SESSION_COLUMNS.split(", "))
_M_COLUMNS = ", ".join(f"m.{c}" for c in MESSAGE_COLUMNS.split(", "))
_STARTED = "s.started_at IS NULL, s.started_at"


def _ids(ids: Sequence[str]) -> list[str]:
    return [storable(i) for i in dict.fromkeys(ids)]


def sessions(connection: Connection, ids: Sequence[str]) -> tuple[Session, ...]:
    """The sessions with these ids, in the order asked; unknown ids are left out."""
    rows = connection.execute(
        f"SELECT {_S_COLUMNS} FROM unnest(%s::text[]) WITH ORDINALITY AS j(id, place) "
        "JOIN sessions AS s ON s.id = j.id ORDER BY j.place", (_ids(ids),)).fetchall()
    return tuple(stored_session(row) for row in rows)


def session_links(connection: Connection, ids: Sequence[str]) -> tuple[SessionLink, ...]:
    """The links of the sessions with these ids, in the order asked; unknown ids are left
    out (:mod:`~harkback.adapters.stores.sql.links`)."""
    rows = connection.execute(
        f"SELECT {', '.join('s.' + c for c in LINK_COLUMNS)} "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS j(id, place) "
        "JOIN sessions AS s ON s.id = j.id ORDER BY j.place", (_ids(ids),)).fetchall()
    return tuple(_read_link(read_text(row)) for row in rows)


_read_link = session_reader(link_from_row)


def children(connection: Connection, ids: Sequence[str]) -> tuple[Session, ...]:
    """Sessions whose parent is one of ``ids``, earliest first (unknown start last)."""
    rows = connection.execute(
        f"SELECT {_S_COLUMNS} FROM sessions AS s WHERE s.parent_session_id = ANY(%s::text[]) "
        f'ORDER BY {_STARTED}, s.id COLLATE "C"', (_ids(ids),)).fetchall()
    return tuple(stored_session(row) for row in rows)


def messages(connection: Connection, session_ids: Sequence[str], longest: int | None = None
             ) -> tuple[Message, ...]:
    """All messages of these sessions, by session start (unknown last), then position; with
    ``longest``, of a content only its start (:func:`~harkback.stages.long_text.loaded_start`)."""
    columns = _M_COLUMNS if longest is None else _M_COLUMNS.replace(
        # Twice: a stored NUL takes two characters (postgres_text); one more shows it is longer.
        "m.content", f"substr(m.content, 1, {2 * longest + 1})", 1)
    rows = connection.execute(
        f"SELECT {columns} FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        f'WHERE m.session_id = ANY(%s::text[]) ORDER BY {_STARTED}, m.session_id COLLATE "C", '
        "m.position", (_ids(session_ids),)).fetchall()
    read = tuple(stored_message(row) for row in rows)
    if longest is None:
        return read
    return tuple(m if len(m.content) <= longest else attrs.evolve(
        m, content=loaded_start(m.content, longest)) for m in read)


_IS_ROOT = is_root(' COLLATE "C"')


def recent(connection: Connection, query: RecentQuery) -> tuple[SessionOverview, ...]:
    """Root sessions (no parent, or a parent not stored, or the first of a loop of parents:
    :mod:`~harkback.adapters.stores.sql.loops`) newest first, unknown start last, with their
    message count and first user message; the other sessions instead for ``query.parts``."""
    scope, scoped = scope_filters(query)
    bounds = [(f"s.started_at {operator} %s", at) for operator, at
              in ((">=", query.since), ("<=", query.until)) if at is not None]
    rooted = f"NOT {_IS_ROOT}" if query.parts else _IS_ROOT
    where = " AND ".join([rooted, "s.id <> ALL(%s::text[])", *scope, *(b for b, _ in bounds)])
    values = [_ids(query.exclude_roots), *scoped, *(at for _, at in bounds), max(query.limit, 0)]
    # The dated roots and the undated ones apart, each in an order of the sessions_started
    # index (walked backwards for the dated), so each reads only its first rows: no index
    # has the order "started_at DESC NULLS LAST", and as one part every root was read and
    # sorted (0.2 s at 58k sessions). A time bound leaves the undated out.
    parts = [f"SELECT {_S_COLUMNS} FROM sessions AS s WHERE {where} AND s.started_at {part} "
             "LIMIT %s" for part, wanted in (
                 ('IS NOT NULL ORDER BY s.started_at DESC, s.id COLLATE "C"', not query.undated),
                 ('IS NULL ORDER BY s.id COLLATE "C"', not bounds)) if wanted]
    if not parts:
        return ()
    order = 'started_at DESC NULLS LAST, id COLLATE "C"'
    rows = connection.execute(
        f"SELECT r.*, (SELECT count(*) FROM messages AS m WHERE m.session_id = r.id), "
        # Twice what preview reads: a stored NUL takes two characters (postgres_text).
        f"(SELECT substr(m.content, 1, {2 * PREVIEW_READS}) FROM messages AS m "
        "  WHERE m.session_id = r.id AND m.role = 'user' ORDER BY m.position LIMIT 1) "
        f"FROM (SELECT * FROM ({' UNION ALL '.join(f'({part})' for part in parts)}) AS u "
        f"      ORDER BY u.{order} LIMIT %s) AS r ORDER BY r.{order}",
        [*values * len(parts), max(query.limit, 0)]).fetchall()
    width = len(SESSION_FIELDS)
    return tuple(SessionOverview(session=stored_session(row[:width]),
                                 message_count=int(row[width]),
                                 preview=preview(read_text((row[width + 1] or "",))[0]))
                 for row in rows)


SOURCE_NAMES = (
    "WITH RECURSIVE held (source) AS (SELECT min(source) FROM sessions UNION ALL "
    "SELECT (SELECT min(s.source) FROM sessions AS s WHERE s.source > held.source) "
    "FROM held WHERE held.source IS NOT NULL) SELECT source FROM held WHERE source IS NOT NULL")
"""The sources held, one step of the sessions_source index each: PostgreSQL has no skip
scan, and its DISTINCT reads every session (or every entry of the index)."""


def source_names(connection: Connection) -> tuple[str, ...]:
    """The sources the database holds sessions of, sorted in Python (as SQLite's are, not
    by the database's collation); the sessions read, not the messages."""
    return tuple(sorted(restore(str(row[0])) for row in connection.execute(SOURCE_NAMES)))


def stats(connection: Connection) -> StoreStats:
    """What the database holds (the SQLite store's counts, in one transaction); its size on
    disk is the database's (``pg_database_size``)."""
    with connection.transaction():
        rows = connection.execute(sqlite_stats.SESSIONS_BY_SOURCE).fetchall()
        messages: dict[Any, Any] = dict(
            connection.execute(sqlite_stats.MESSAGES_BY_SOURCE).fetchall())
        vectors = tuple((str(name), int(n))
                        for name, n in connection.execute(sqlite_stats.VECTORS_BY_MODEL))
        found = connection.execute(
            "SELECT (SELECT count(*) FROM summary_cache), (SELECT version FROM harkback_schema), "
            "pg_database_size(current_database())").fetchone()
    assert found is not None
    sources = by_source(SourceCount(restore(str(source)), int(n), int(messages.get(source, 0)))
                        for source, n, _low, _high in rows)
    starts = [r[2] for r in rows if r[2] is not None] + [r[3] for r in rows if r[3] is not None]
    return StoreStats(sessions=sum(s.sessions for s in sources),
                      messages=sum(s.messages for s in sources), sources=sources,
                      oldest=min(starts, default=None), newest=max(starts, default=None),
                      bytes_on_disk=int(found[2]), vectors=vectors,
                      cached_summaries=int(found[0]), schema_version=int(found[1]))
