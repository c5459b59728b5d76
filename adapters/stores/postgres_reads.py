"""Reading sessions back from the PostgreSQL store: by id, children, messages, recent roots,
and title search.

Orders match the SQLite store's: ids compare byte by byte (``COLLATE "C"``, whatever the
database's locale) and an unknown start sorts last. Title search scores each candidate
with FTS5's BM25 over the titles alone, as the in-memory store does
(:mod:`~harkback.adapters.stores.memory_titles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import psycopg

from harkback.adapters.stores import search_plan, sqlite_stats
from harkback.adapters.stores.memory_match import idf, units_of
from harkback.adapters.stores.postgres_memo import CountMemo
from harkback.adapters.stores.postgres_search import census, fit, scope_filters
from harkback.adapters.stores.postgres_text import matching, restore, storable
from harkback.adapters.stores.postgres_writes import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    SESSION_FIELDS,
    read_text,
)
from harkback.adapters.stores.sql.loops import is_root
from harkback.adapters.stores.sql.rows import (
    PREVIEW_READS,
    message_from_row,
    preview,
    session_from_row,
)
from harkback.stages.long_text import loaded_start
from harkback.stages.ports import MatchQuery, RecentQuery
from harkback.stages.query import AllOf, Node
from harkback.stages.records import Message, Session, SessionOverview, TitleHit
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
    return tuple(session_from_row(read_text(row)) for row in rows)


def children(connection: Connection, ids: Sequence[str]) -> tuple[Session, ...]:
    """Sessions whose parent is one of ``ids``, earliest first (unknown start last)."""
    rows = connection.execute(
        f"SELECT {_S_COLUMNS} FROM sessions AS s WHERE s.parent_session_id = ANY(%s::text[]) "
        f'ORDER BY {_STARTED}, s.id COLLATE "C"', (_ids(ids),)).fetchall()
    return tuple(session_from_row(read_text(row)) for row in rows)


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
    read = tuple(message_from_row(read_text(row)) for row in rows)
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
    return tuple(SessionOverview(session=session_from_row(read_text(row[:width])),
                                 message_count=int(row[width]),
                                 preview=preview(read_text((row[width + 1] or "",))[0]))
                 for row in rows)


def search_titles(connection: Connection, query: MatchQuery, memo: CountMemo | None = None
                  ) -> tuple[TitleHit, ...]:
    """Sessions whose title or source matches, best BM25 first, then newest, then by id;
    a unit in more than ``max_scored`` titles selects none."""
    cap = query.max_scored
    (_, _, documents, tokens), counts = census(
        connection, "sessions", search_plan.selecting_units(query.expression), cap, memo)
    common = frozenset(u for u, n in counts.items() if cap is not None and n > cap)
    expression: Node | None = query.expression
    within: Node | None = None
    if common:
        expression = search_plan.narrow(query.expression, common)
        within = None if search_plan.is_disjunction(query.expression) else query.expression
    if expression is None or not documents:
        return ()
    leaves = units_of(expression)
    selecting = set(search_plan.selecting_units(expression))
    idfs = [idf(documents, counts[u]) if u in selecting else 0.0 for u in leaves]
    matched, values = matching(
        "s", expression if within is None else AllOf((expression, within)))
    scope, scoped = scope_filters(query)
    conditions = [matched, *scope]
    params: list[Any] = [*values, *scoped]
    for bound, operator in ((query.since, ">="), (query.until, "<=")):
        if bound is not None:
            conditions.append(f"s.started_at {operator} %s")
            params.append(bound)
    # Only what a hit carries: every title found is scored here (2,000 and more for a
    # question at 1M messages), and whole sessions cost a fifth of it.
    rows = connection.execute(
        f"SELECT s.id, s.title, s.source, s.started_at FROM sessions AS s "
        f"WHERE {' AND '.join(conditions)}", params).fetchall()
    found = []
    for row in rows:
        session_id, title, source, started_at = read_text(row)
        score = fit(Session(id=session_id, title=title, source=source).text_for_search(),
                    expression, within, leaves, idfs, tokens / documents)
        if score is None:
            continue
        found.append(TitleHit(session_id=session_id, title=title, source=source,
                              started_at=started_at, score=score))
    found.sort(key=lambda h: (-h.score, h.started_at is None, -(h.started_at or 0.0),
                              h.session_id))
    return tuple(found[:max(query.limit, 0)])


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
