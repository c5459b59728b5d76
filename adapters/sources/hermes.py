"""Hermes Agent sessions as harkback conversations, imported incrementally.

Reads a Hermes ``state.db`` (any schema era from v9 to v30, through
:class:`~harkback.adapters.sources.hermes_db.HermesDb`, strictly read-only) and never uses
Hermes' own full-text tables: harkback indexes the text itself. How rows become
sessions (their lineage as Hermes means it) and which messages are visible is
:mod:`~harkback.adapters.sources.hermes_rows`.

**Incremental.** The import ledger keeps the highest message id read (the cursor)
and, per session, a fingerprint of its row (and of the lineage decision). The next
import reads, in one read transaction, every session row (they are small), the
highest message id (the new cursor) and the ids of sessions holding messages between
the two cursors, and then re-reads only the sessions that are new, whose row changed,
or that gained messages.

>>> [p.name for p in database_files(Path("/nowhere"))]
[]
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources import importing
from harkback.adapters.sources.hermes_db import HermesDb
from harkback.adapters.sources.hermes_rows import (
    column_text,
    fingerprint,
    messages_from_rows,
    session_from_row,
)
from harkback.adapters.sources.importing import ImportPlan, ImportUnit, Tally, Units
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.records import Conversation, Session

KIND = "hermes"
REOPENS = 3
"""How often an import reopens a file that Hermes wrote while it was read without locks."""
SKIPPED_SESSION_COLUMNS = frozenset({"system_prompt"})
"""Columns never read: large, and meaningless for recall."""

MESSAGE_COLUMNS = ("id", "role", "content", "tool_name", "tool_call_id", "tool_calls",
                   "timestamp", "active", "compacted", "display_kind", "_compressed_summary")


def _quoted(columns: Iterable[str]) -> str:
    return ", ".join('"' + c.replace('"', '""') + '"' for c in columns)


@attrs.frozen
class Snapshot:
    """Every session row, the sessions with messages past the cursor, the highest id."""

    sessions: tuple[dict[str, object], ...]
    fresh: frozenset[str]
    top: int


def read_snapshot(connection: sqlite3.Connection, session_columns: frozenset[str],
                  cursor: int) -> Snapshot:
    """Read the session rows and which sessions gained messages after ``cursor``.

    One read transaction, and ``fresh`` bounded by ``top`` besides: a message Hermes
    commits meanwhile is either below the new cursor with its session re-read, or
    above it and read next time; never below it and missed.
    """
    columns = sorted(session_columns - SKIPPED_SESSION_COLUMNS)
    connection.execute("BEGIN")
    try:
        result = connection.execute(f"SELECT {_quoted(columns)} FROM sessions")
        names = [d[0] for d in result.description]
        sessions = tuple(dict(zip(names, row, strict=True)) for row in result)
        top = int(connection.execute("SELECT COALESCE(MAX(id), 0) FROM messages")
                  .fetchone()[0] or 0)
        fresh = frozenset(column_text(r[0]) for r in connection.execute(
            "SELECT DISTINCT session_id FROM messages WHERE id > ? AND id <= ?", (cursor, top)))
    finally:
        if connection.in_transaction:
            connection.execute("COMMIT")
    return Snapshot(sessions, fresh, top)


def read_messages(connection: sqlite3.Connection, message_columns: frozenset[str],
                  session_id: str) -> Iterator[dict[str, object]]:
    """One session's rows in id order (the order Hermes gives them; timestamps are not)."""
    columns = [c for c in MESSAGE_COLUMNS if c in message_columns]
    result = connection.execute(
        f"SELECT {_quoted(columns)} FROM messages WHERE session_id = ? ORDER BY id",
        (session_id,))
    names = [d[0] for d in result.description]
    for row in result:
        yield dict(zip(names, row, strict=True))


class Todo(NamedTuple):
    """A session to read: as its row describes it, its fingerprint, what its row lost."""

    session: Session
    mark: str
    left_out: tuple[tuple[str, int], ...]


def database_files(path: Path) -> list[Path]:
    """The Hermes databases at ``path``: the file itself, or a Hermes home's ``state.db``
    and every ``profiles/<name>/state.db`` beside it."""
    if path.is_file():
        return [path]
    found = [path / "state.db"] if (path / "state.db").is_file() else []
    return found + sorted(p for p in path.glob("profiles/*/state.db") if p.is_file())


@attrs.frozen
class HermesImporter:
    """Imports one Hermes ``state.db`` (see the module for what is read and how)."""

    path: Path

    @property
    def key(self) -> SourceKey:
        """The source: kind ``hermes`` and the database's resolved path."""
        return SourceKey(kind=KIND, location=str(self.path))

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan importing the sessions that are new or changed since ``state``."""
        opened = HermesDb.open(self.path)
        if isinstance(opened, Failure):
            return Failure(opened.failure())
        db = opened.unwrap()
        cursor = int(state.cursor) if state.cursor.isdigit() else 0
        try:
            snapshot = db.read(lambda c: read_snapshot(c, db.session_columns, cursor))
        except sqlite3.Error as error:
            db.close()
            return Failure(StoreUnavailable(f"cannot read the Hermes database {db.path}: "
                                            f"{error}"))
        notes = list(db.notes)
        if snapshot.top < cursor:
            notes.append(f"{db.path} holds fewer messages than at the last import; "
                         "every session was read again")
            full = True
        rows = {column_text(r.get("id")): r for r in snapshot.sessions if column_text(r.get("id"))}
        marks = state.marks_by_item()
        todo: list[Todo] = []
        for session_id, row in rows.items():
            parent = rows.get(column_text(row.get("parent_session_id")))
            tally = Tally()
            session = session_from_row(row, parent, tally)
            mark = fingerprint(row, session)
            old = marks.get(session_id)
            if full or old is None or old.fingerprint != mark or session_id in snapshot.fresh:
                todo.append(Todo(session, mark, tally.items()))
        return Success(ImportPlan(total=len(todo), units=self._units(db, todo),
                                  unchanged=len(rows) - len(todo), cursor=str(snapshot.top),
                                  notes=tuple(notes)))

    def _units(self, db: HermesDb, todo: Sequence[Todo]) -> Units:
        reopens = REOPENS
        start = 0
        try:
            while start < len(todo):
                try:
                    unit, end = _read_unit(db, todo, start)
                    problem = None
                except sqlite3.Error as error:
                    unit, end, problem = None, start, error
                if unit is not None and not db.changed_since_open():
                    yield Success(unit)
                    start = end
                    continue
                if not db.changed_since_open():
                    yield Failure(StoreUnavailable(
                        f"cannot read session {todo[start].session.id} of {db.path}: {problem}"))
                    return
                # Hermes wrote while this unlocked read ran: read the unit again, this time
                # through the locks of a reader that joins its WAL (or a new snapshot).
                db.close()
                reopened = HermesDb.open(self.path)
                if isinstance(reopened, Failure) or reopens == 0:
                    yield Failure(reopened.failure() if isinstance(reopened, Failure)
                                  else StoreUnavailable(f"{db.path} kept changing while it "
                                                        "was read; run the import again"))
                    return
                db, reopens = reopened.unwrap(), reopens - 1
        finally:
            db.close()


def _read_unit(db: HermesDb, todo: Sequence[Todo], start: int
               ) -> tuple[ImportUnit, int]:
    """Read sessions from ``todo[start]`` on until a unit is full; return it and where it ended."""
    conversations: list[Conversation] = []
    marks: list[Mark] = []
    tally = Tally()
    messages = size = 0
    index = start
    while (index < len(todo) and len(marks) < importing.UNIT_ITEMS
           and messages < importing.UNIT_MESSAGES and size < importing.UNIT_BYTES):
        session, mark, session_left_out = todo[index]
        conversation, left_out = db.read(
            partial(_conversation, columns=db.message_columns, session=session))
        conversations.append(conversation)
        tally.merge(session_left_out)
        tally.merge(left_out)
        marks.append(Mark(item=session.id, fingerprint=mark, sessions=1,
                          messages=len(conversation.messages)))
        messages += len(conversation.messages)
        size += sum(len(m.content) + sum(len(c.arguments) for c in m.tool_calls)
                    for m in conversation.messages)  # characters: near enough to bytes
        index += 1
    return ImportUnit(conversations=tuple(conversations), marks=tuple(marks),
                      left_out=tally.items(), work=len(marks)), index


def _conversation(connection: sqlite3.Connection, columns: frozenset[str], session: Session
                  ) -> tuple[Conversation, tuple[tuple[str, int], ...]]:
    # A fresh tally per attempt, so a retried read does not count twice.
    tally = Tally()
    messages = messages_from_rows(session.id, read_messages(connection, columns, session.id),
                                  tally)
    return Conversation(session, messages), tally.items()
