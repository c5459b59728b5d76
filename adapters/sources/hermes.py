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
or that gained messages. Before any of that, it compares the size and mtime of the
database and its ``-wal`` file with those of the last import (kept as the mark
:data:`STAMP_ITEM`): an unchanged file is not opened at all.

**Hidden and archived sessions.** Hermes' session list leaves out sessions flagged
``hidden`` (Bot Mode) and, by default, ``archived``; so does the import (archived
ones are read with ``archived=True``), and every session whose lineage passes through
one. A session flagged after it was imported is in the plan's ``withdrawn``, so a sync
removes it (the user's choice); un-flagged, it is read again. One deleted from the file
is in its ``gone``: a sync keeps it unless told to prune.

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

from harkback.adapters.file_kinds import special_kind
from harkback.adapters.sources import importing
from harkback.adapters.sources.encodings import NOT_UTF8, undecoded
from harkback.adapters.sources.hermes_db import HermesDb, no_file_at
from harkback.adapters.sources.hermes_db import database_files as database_files
from harkback.adapters.sources.hermes_ids import id_text, readable_session
from harkback.adapters.sources.hermes_rows import (
    column_text,
    fingerprint,
    messages_from_rows,
    session_from_row,
)
from harkback.adapters.sources.importing import (
    ImportPlan,
    ImportUnit,
    Tally,
    Units,
    path_text,
)
from harkback.adapters.sqlite_files import holds_frames, side_file
from harkback.stages.errors import SourceUnreadable, StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.records import Conversation, Session

KIND = "hermes"
REOPENS = 3
"""How often an import reopens a file that Hermes wrote while it was read without locks."""
SKIPPED_SESSION_COLUMNS = frozenset({"system_prompt"})
"""Columns never read: large, and meaningless for recall."""

STAMP_ITEM = "(state.db file stamp)"
"""The ledger item holding the file's size and mtime at the last import (not a session id:
Hermes ids hold no spaces)."""

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
        fresh = frozenset(id_text(r[0]) for r in connection.execute(
            "SELECT DISTINCT session_id FROM messages WHERE id > ? AND id <= ?", (cursor, top)))
    finally:
        if connection.in_transaction:
            connection.execute("COMMIT")
    return Snapshot(sessions, fresh, top)


def read_messages(connection: sqlite3.Connection, message_columns: frozenset[str],
                  session_id: object) -> Iterator[dict[str, object]]:
    """One session's rows in id order (the order Hermes gives them; timestamps are not).

    ``session_id`` is the id as read from the file: text holding bytes that are not UTF-8
    (escaped, see :meth:`HermesDb.read`), or a BLOB, is matched as those bytes in TEXT.
    """
    columns = [c for c in MESSAGE_COLUMNS if c in message_columns]
    key, param = "?", session_id
    if isinstance(session_id, str) and undecoded(session_id)[1]:
        # The bytes as stored (surrogateescape undoes the escape of a UTF-8 decode).
        param = session_id.encode("utf-8", "surrogateescape")
    if isinstance(param, bytes):
        # Cast back to the TEXT the messages name their session in (a BLOB never equals
        # TEXT in SQLite: a session id bound as bytes would find none of its messages).
        key = "CAST(? AS TEXT)"
    result = connection.execute(
        f"SELECT {_quoted(columns)} FROM messages WHERE session_id = {key} ORDER BY id",
        (param,))
    names = [d[0] for d in result.description]
    for row in result:
        yield dict(zip(names, row, strict=True))


class Todo(NamedTuple):
    """A session to read: as its row describes it, its fingerprint, what its row lost, and
    its id as the file holds it (see :func:`read_messages`)."""

    session: Session
    mark: str
    left_out: Tally
    key: object


def file_stamp(path: Path) -> str:
    """Size and mtime of ``path`` and of its ``-wal`` file (beside the file a symlink
    names, where SQLite keeps it): any commit changes one of them."""
    parts = []
    for file in (path, side_file(path, "-wal")):
        try:
            stat = file.stat()
        except FileNotFoundError:
            parts.append("-")
            continue
        parts.append(f"{stat.st_size}:{stat.st_mtime_ns}")
    return "/".join(parts)


def is_empty(path: Path) -> bool:
    """Whether ``path`` is an empty store: 0 bytes, with no ``-wal`` file holding commits
    (SQLite creates a database's file empty and writes it at the first commit). The
    ``-wal`` is looked at once: one Hermes removes meanwhile is none, not an error."""
    return path.stat().st_size == 0 and not holds_frames(side_file(path, "-wal"))


def flag_reason(row: dict[str, object], *, archived: bool) -> str | None:
    """Why Hermes' own list leaves a session row out: ``hidden``, ``archived`` or None.

    >>> flag_reason({"hidden": 1, "archived": 0}, archived=False)
    'hidden session'
    >>> flag_reason({"archived": 1}, archived=True) is None
    True
    """
    if row.get("hidden") == 1:
        return "hidden session"
    if row.get("archived") == 1 and not archived:
        return "archived session"
    return None


@attrs.frozen
class HermesImporter:
    """Imports one Hermes ``state.db`` (see the module for what is read and how);
    ``archived`` sessions too when asked."""

    path: Path
    archived: bool = False

    @property
    def key(self) -> SourceKey:
        """The source: kind ``hermes`` and the database's resolved path."""
        return SourceKey(kind=KIND, location=path_text(self.path))

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan importing the sessions that are new or changed since ``state``."""
        if special_kind(self.path) is not None:  # a FIFO is 0 bytes: not "empty", not read
            return Failure(SourceUnreadable(no_file_at(self.path)))
        try:
            stamp = f"{file_stamp(self.path)} archived={int(self.archived)}"
            empty = is_empty(self.path)
        except OSError as error:
            return Failure(SourceUnreadable(f"cannot read {self.path}: "
                                            f"{error.strerror or error}"))
        if empty:
            # Not opened at all, so nothing is written to it; nothing removed either.
            return Success(ImportPlan(total=0, units=importing.no_units(), notes=(
                f"{self.path} is empty (a profile Hermes has not written to yet): "
                "nothing to import",)))
        marks = state.marks_by_item()
        old_stamp = marks.pop(STAMP_ITEM, None)
        if not full and old_stamp is not None and old_stamp.fingerprint == stamp:
            return Success(ImportPlan(total=0, units=importing.no_units(), unchanged=sum(
                m.sessions for m in marks.values() if not m.gone), gone=tuple(
                item for item, m in marks.items() if m.gone)))
        opened = HermesDb.open(self.path)
        if isinstance(opened, Failure):
            return Failure(opened.failure())
        db = opened.unwrap()
        cursor = int(state.cursor) if state.cursor.isdigit() else 0
        try:
            snapshot = db.read(lambda c: read_snapshot(c, db.session_columns, cursor))
        except sqlite3.Error as error:
            db.close()
            return Failure(SourceUnreadable(f"cannot read the Hermes database {db.path}: "
                                            f"{error}"))
        notes = list(db.notes)
        if snapshot.top < cursor:
            notes.append(f"{db.path} holds fewer messages than at the last import; "
                         "every session was read again")
            full = True
        rows, stored, tallies = _session_rows(snapshot.sessions, str(db.path))
        read: dict[str, Todo] = {}
        for session_id, row in rows.items():
            tally = tallies[session_id]
            session = session_from_row(row, rows.get(column_text(row.get("parent_session_id"))),
                                       tally)
            # The row as stored: its fingerprint is the one imports before this one kept.
            raw = stored[session_id]
            read[session_id] = Todo(session, fingerprint(raw, session), tally, raw.get("id"))
        flagged = self._flagged(rows, read)
        todo = [t for session_id, t in read.items() if session_id not in flagged and (
            full or session_id in snapshot.fresh or session_id not in marks
            or marks[session_id].fingerprint != t.mark)]
        gone = tuple(item for item in marks if item not in rows)
        left_out = Tally()
        for reason in flagged.values():
            left_out.add(reason)
        final = ImportUnit(marks=(Mark(item=STAMP_ITEM, fingerprint=stamp),),
                           left_out=left_out.items())
        return Success(ImportPlan(total=len(todo), units=self._units(db, todo, final),
                                  unchanged=len(rows) - len(todo) - len(flagged),
                                  cursor=str(snapshot.top), notes=tuple(notes), gone=gone,
                                  withdrawn=tuple(item for item in marks if item in flagged)))

    def _flagged(self, rows: dict[str, dict[str, object]], read: dict[str, Todo]
                 ) -> dict[str, str]:
        """The sessions left out as Hermes' list leaves them out, with why: flagged
        themselves, or a lineage (parents as harkback keeps them) through a flagged one."""
        # Each session's verdict is kept as soon as known, so a walk ends where an earlier
        # one passed: a chain of continuations is walked once, not once per member (10,000
        # of them took a minute, at every sync of the file).
        verdicts: dict[str, str | None] = {}
        for session_id in rows:
            path: dict[str, None] = {}  # the sessions walked, in order
            verdict: str | None = None
            step: str | None = session_id
            while step is not None and step in rows and step not in path:
                if step in verdicts:
                    verdict = verdicts[step]
                    break
                path[step] = None
                verdict = flag_reason(rows[step], archived=self.archived)
                if verdict is not None:
                    break
                step = read[step].session.parent_session_id
            verdicts.update(dict.fromkeys(path, verdict))
        return {sid: why for sid in rows if (why := verdicts[sid]) is not None}

    def _units(self, db: HermesDb, todo: Sequence[Todo], final: ImportUnit) -> Units:
        reopens = REOPENS
        start = 0
        last: ImportUnit | None = final
        try:
            while start < len(todo):
                try:
                    unit, end = _read_unit(db, todo, start)
                    problem = None
                except sqlite3.Error as error:
                    unit, end, problem = None, start, error
                if unit is not None and not db.changed_since_open():
                    start = end
                    if start >= len(todo):  # the last unit carries the file's stamp
                        unit, last = _joined(unit, last), None
                    yield Success(unit)
                    continue
                if not db.changed_since_open():
                    yield Failure(SourceUnreadable(
                        f"cannot read session {todo[start].session.id} of {db.path}: {problem}"))
                    return
                # Hermes wrote while this unlocked read ran: read the unit again, this time
                # through the locks of a reader that joins its WAL (or a new snapshot).
                db.close()
                reopened = HermesDb.open(self.path)
                if isinstance(reopened, Failure) or reopens == 0:
                    yield Failure(reopened.failure() if isinstance(reopened, Failure)
                                  else SourceUnreadable(f"{db.path} kept changing while it "
                                                        "was read; run the import again"))
                    return
                db, reopens = reopened.unwrap(), reopens - 1
            if last is not None:
                yield Success(last)
        finally:
            db.close()


def _session_rows(rows: Iterable[dict[str, object]], file: str
                  ) -> tuple[dict[str, dict[str, object]], dict[str, dict[str, object]],
                             dict[str, Tally]]:
    """Session rows by id, readable (see :func:`readable_session`), as stored, and a tally each
    naming what was replaced; rows without an id are left out."""
    clean: dict[str, dict[str, object]] = {}
    stored: dict[str, dict[str, object]] = {}
    tallies: dict[str, Tally] = {}
    for row in rows:
        tally = Tally(file=file)
        text, damage, written = readable_session(row)
        session_id = column_text(text.get("id"))
        if not session_id:
            continue
        if damage:
            tally.skip(NOT_UTF8, f"session {session_id}: {damage}", "repaired")
        for reason, said in written:
            tally.skip(reason, f"session {session_id}: {said}", "renamed")
        clean[session_id], stored[session_id], tallies[session_id] = text, row, tally
    return clean, stored, tallies


def _joined(unit: ImportUnit, more: ImportUnit | None) -> ImportUnit:
    if more is None:
        return unit
    tally = Tally()
    tally.merge(unit.left_out)
    tally.merge(more.left_out)
    return attrs.evolve(unit, conversations=unit.conversations + more.conversations,
                        marks=unit.marks + more.marks, left_out=tally.items(),
                        skipped=unit.skipped + more.skipped, skips=unit.skips + more.skips,
                        work=unit.work + more.work)


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
        session, mark, session_left_out, key = todo[index]
        conversation, left_out = db.read(
            partial(_conversation, columns=db.message_columns, session=session, key=key,
                    file=str(db.path)))
        conversations.append(conversation)
        for counted in (session_left_out, left_out):  # damaged input is named, not only counted
            tally.merge(counted.items())
            tally.merge_skips(counted.named, counted.skips)
        # The item is the row's id, as the next plan reads it; the session's, as stored.
        marks.append(Mark(item=session.id, fingerprint=mark, sessions=1,
                          messages=len(conversation.messages),
                          session_ids=(conversation.session.id,)))
        messages += len(conversation.messages)
        size += sum(len(m.content) + sum(len(c.arguments) for c in m.tool_calls)
                    for m in conversation.messages)  # characters: near enough to bytes
        index += 1
    return ImportUnit(conversations=tuple(conversations), marks=tuple(marks),
                      left_out=tally.items(), skipped=tuple(tally.named), skips=tally.skips,
                      work=len(marks)), index


def _conversation(connection: sqlite3.Connection, columns: frozenset[str], session: Session,
                  key: object, file: str) -> tuple[Conversation, Tally]:
    # A fresh tally per attempt, so a retried read does not count twice.
    tally = Tally(file=file)
    messages = messages_from_rows(session.id, read_messages(connection, columns, key), tally)
    return importing.nul_free(Conversation(session, messages), tally), tally
