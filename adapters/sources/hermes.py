"""Hermes Agent sessions as harkback conversations, imported incrementally.

Reads a Hermes ``state.db`` (any schema era from v9 to v30, through
:class:`~harkback.adapters.sources.hermes_db.HermesDb`, strictly read-only) and never uses
Hermes' own full-text tables: harkback indexes the text itself.

**Lineage as Hermes means it.** A child session's ``parent_session_id`` means one of
five things. Delegated sub-agent sessions (marker ``_delegate_from`` in
``model_config``, or source ``subagent``/``delegate``), compression continuations
(the parent ended with ``compression``) and any link Hermes does not qualify keep
their parent, so resolve traces their hits to the root the user remembers. ``tool``
sessions (third-party integrations driving Hermes) keep their source ``tool``, which
a search hides by default (``hidden_sources``), as Hermes keeps them out of its own
session discovery: their content is found only by a search that unhides ``tool``,
and then traces to their parent's root like any other child. A ``/branch`` child
(marker ``_branched_from``, or a parent that ended ``branched``) and a fresh-reset
child (``/new``, idle or daily reset: marker ``_reset_from``, a parent that ended
with a reset reason, or, for rows from before the markers, the parent's non-empty
``session_key``) are conversations of their own: their ``parent_session_id`` is not
carried into harkback (``None``), which makes them lineage roots; the link stays in
Hermes' file.

**Visibility.** ``active`` NULL counts as live. Rewound rows (``active=0,
compacted=0``) and ``display_kind='hidden'`` rows are left out; rows archived by
in-place compaction (``active=0, compacted=1``) are kept and searchable. Compaction
summaries (``_compressed_summary=1``, or text starting ``[CONTEXT COMPACTION`` or
``[CONTEXT SUMMARY]:``) are left out: they restate history that is imported anyway
and would otherwise match in its place. Background review prompts of old builds and
the reply after each are left out too, and ``<memory-context>`` blocks are removed,
as Hermes does on replay. Multimodal content (``\\x00json:`` + a JSON list of parts)
keeps its text parts. Message positions are Hermes message ids, so they stay stable
as a session grows and a hit names the Hermes message it came from.

**Incremental.** The import ledger keeps the highest message id read (the cursor)
and, per session, a fingerprint of its row (and of the lineage decision). The next
import reads, in one read transaction, every session row (they are small), the
highest message id (the new cursor) and the ids of sessions holding messages between
the two cursors, and then re-reads only the sessions that are new, whose row changed,
or that gained messages.

>>> decode_content('\\x00json:[{"type": "text", "text": "look"}, {"type": "image_url"}]')
'look'
>>> lineage_parent({"id": "c", "parent_session_id": "p", "model_config": None},
...                {"id": "p", "end_reason": "compression"})
'p'
>>> lineage_parent({"id": "c", "parent_session_id": "p", "model_config": None},
...                {"id": "p", "end_reason": "new_session"}) is None
True
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import NamedTuple

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources.hermes_db import HermesDb
from harkback.adapters.sources.importing import (
    UNIT_ITEMS,
    UNIT_MESSAGES,
    ImportPlan,
    ImportUnit,
    Tally,
    Units,
    clip_tool_output,
    iso_epoch,
)
from harkback.adapters.stores.import_ledger import Mark, SourceKey, SourceState
from harkback.stages.errors import StoreUnavailable
from harkback.stages.records import ROLES, Conversation, Message, Session, ToolCall

Row = Mapping[str, object]

KIND = "hermes"
SENTINEL = "\x00json:"
RESET_REASONS = frozenset({"session_reset", "session_switch", "idle", "daily", "suspended",
                           "resume_pending_expired", "new_session"})
DELEGATE_SOURCES = frozenset({"subagent", "delegate"})
COMPACTION_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
REVIEW_PREFIX = "Review the conversation above"
REOPENS = 3
"""How often an import reopens a file that Hermes wrote while it was read without locks."""
SKIPPED_SESSION_COLUMNS = frozenset({"system_prompt"})
"""Columns never read: large, and meaningless for recall."""

MESSAGE_COLUMNS = ("id", "role", "content", "tool_name", "tool_call_id", "tool_calls",
                   "timestamp", "active", "compacted", "display_kind", "_compressed_summary")

_MEMORY_CONTEXT = re.compile(r"<memory-context>.*?</memory-context>\s*", re.DOTALL)
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


# --- content ------------------------------------------------------------------------------

def _texts(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for part in value:
            yield from _texts(part)
    elif isinstance(value, dict):
        text = value.get("text")
        if isinstance(text, str) and value.get("type", "text") in _TEXT_PARTS:
            yield text
        elif "content" in value:
            yield from _texts(value["content"])


def decode_content(raw: object) -> str | None:
    """The text of a ``messages.content`` value; None when multimodal JSON is unreadable.

    >>> decode_content("plain"), decode_content(None), decode_content("\\x00json:{oops")
    ('plain', '', None)
    """
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    if not isinstance(raw, str):
        return str(raw)
    if not raw.startswith(SENTINEL):
        return raw
    try:
        value = json.loads(raw[len(SENTINEL):])
    except (ValueError, RecursionError):
        return None
    return "\n".join(t for t in _texts(value) if t)


def _json(value: object) -> object:
    """Decode a JSON TEXT column, once more if it was stored double-encoded."""
    for _ in range(2):
        if not isinstance(value, str | bytes):
            return value
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value


def markers(model_config: object) -> frozenset[str]:
    """The lineage markers (``_branched_from``, ``_delegate_from``, ``_reset_from``) set.

    >>> sorted(markers('{"temperature": 0.2, "_delegate_from": "p"}'))
    ['_delegate_from']
    """
    decoded = _json(model_config)
    if not isinstance(decoded, dict):
        return frozenset()
    return frozenset(k for k in ("_branched_from", "_delegate_from", "_reset_from")
                     if decoded.get(k))


def tool_calls(raw: object) -> tuple[ToolCall, ...] | None:
    """Tool calls from a ``tool_calls`` JSON column (None when unreadable).

    >>> tool_calls('[{"id": "c1", "function": {"name": "bash", "arguments": {"cmd": "ls"}}}]')
    (ToolCall(id='c1', name='bash', arguments='{"cmd": "ls"}'),)
    """
    if raw is None or raw == "":
        return ()
    decoded = _json(raw)
    if not isinstance(decoded, list):
        return None
    calls = []
    for call in decoded:
        if not isinstance(call, dict):
            return None
        nested = call.get("function")
        # Some rows hold the flat shape {"id", "name", "arguments"}.
        function: dict[str, object] = nested if isinstance(nested, dict) else call
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = "" if arguments is None else json.dumps(arguments, ensure_ascii=False)
        calls.append(ToolCall(id=_text(call.get("id")), name=_text(function.get("name")),
                              arguments=arguments))
    return tuple(calls)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


# --- sessions and lineage -----------------------------------------------------------------

def lineage_parent(row: Row, parent: Row | None) -> str | None:
    """The parent harkback keeps for a Hermes session row (None: its own conversation)."""
    parent_id = _text(row.get("parent_session_id")) or None
    if parent_id is None or parent_id == _text(row.get("id")):
        return None
    found = markers(row.get("model_config"))
    if "_delegate_from" in found or _text(row.get("source")) in DELEGATE_SOURCES:
        return parent_id
    if found & {"_branched_from", "_reset_from"}:
        return None
    if parent is None:
        return parent_id  # parent not in the file: resolve ends the walk here anyway
    reason = _text(parent.get("end_reason"))
    if reason == "branched" or reason in RESET_REASONS:
        return None
    key = _text(row.get("session_key"))
    if key and key == _text(parent.get("session_key")) and reason not in ("compression",
                                                                           "compressed"):
        return None  # a reset child from before the markers: same chat lane, fresh start
    return parent_id


def session_from_row(row: Row, parent: Row | None, tally: Tally | None = None) -> Session:
    """A harkback session from a Hermes ``sessions`` row (an empty source counts as cli).

    Times out of range (Hermes writes epoch seconds) are unknown and counted in ``tally``.
    """
    return Session(
        id=_text(row.get("id")), source=_text(row.get("source")) or "cli",
        model=_text(row.get("model")), title=_text(row.get("title")),
        started_at=iso_epoch(row.get("started_at"), tally),
        ended_at=iso_epoch(row.get("ended_at"), tally),
        parent_session_id=lineage_parent(row, parent), end_reason=_text(row.get("end_reason")))


def fingerprint(row: Row, session: Session) -> str:
    """A digest of a session row and of how it was read (its lineage decision included)."""
    items = sorted((k, repr(v)) for k, v in row.items())
    digest = hashlib.blake2b(digest_size=12)
    digest.update(json.dumps([items, session.parent_session_id], ensure_ascii=False).encode())
    return digest.hexdigest()


# --- messages -----------------------------------------------------------------------------

def _hidden(row: Row) -> str | None:
    """Why a row is not history: rewound or hidden (live and archived rows give None)."""
    active = row.get("active")
    if active is not None and active == 0 and row.get("compacted") != 1:
        return "rewound message"
    if _text(row.get("display_kind")) == "hidden":
        return "hidden message"
    return None


def _is_compaction_summary(row: Row, text: str) -> bool:
    return row.get("_compressed_summary") == 1 or text.lstrip().startswith(COMPACTION_PREFIXES)


def _is_review_prompt(text: str) -> bool:
    head = text.lstrip()
    return head.startswith(REVIEW_PREFIX) and ("skill" in head or "memory" in head)


def messages_from_rows(session_id: str, rows: Iterable[Row], tally: Tally
                       ) -> tuple[Message, ...]:
    """The visible messages of one session's rows (in id order); the rest is counted."""
    out: list[Message] = []
    after_review = False
    for row in rows:
        reason = _hidden(row)
        if reason is not None:
            tally.add(reason)
            continue
        role = _text(row.get("role"))
        if role not in ROLES:
            tally.add(f"message with role {role!r}")
            continue
        text = decode_content(row.get("content"))
        if text is None:
            tally.add("unreadable multimodal content")
            text = ""
        if _is_compaction_summary(row, text):
            tally.add("compaction summary")
            continue
        if role == "user" and _is_review_prompt(text):
            tally.add("background review prompt or reply")
            after_review = True
            continue
        if after_review and role == "assistant":
            tally.add("background review prompt or reply")
            after_review = False
            continue
        after_review = False
        if role in ("user", "assistant") and "<memory-context>" in text:
            text = _MEMORY_CONTEXT.sub("", text)
        calls = tool_calls(row.get("tool_calls"))
        if calls is None:
            tally.add("unreadable tool_calls")
            calls = ()
        if not text.strip() and not calls:
            tally.add("empty message")
            continue
        if role == "tool":
            text, clipped = clip_tool_output(text)
            if clipped:
                tally.add("tool output clipped")
        position = row.get("id")
        if not isinstance(position, int) or position < 0:
            tally.add("message without an id")
            continue
        out.append(Message(session_id=session_id, position=position, role=role,
                           content=text, tool_name=_text(row.get("tool_name")),
                           tool_call_id=_text(row.get("tool_call_id")), tool_calls=calls,
                           timestamp=iso_epoch(row.get("timestamp"), tally)))
    return tuple(out)


# --- reading ------------------------------------------------------------------------------

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
        fresh = frozenset(_text(r[0]) for r in connection.execute(
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
        rows = {_text(r.get("id")): r for r in snapshot.sessions if _text(r.get("id"))}
        marks = state.marks_by_item()
        todo: list[Todo] = []
        for session_id, row in rows.items():
            parent = rows.get(_text(row.get("parent_session_id")))
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
    messages = 0
    index = start
    while index < len(todo) and len(marks) < UNIT_ITEMS and messages < UNIT_MESSAGES:
        session, mark, session_left_out = todo[index]
        conversation, left_out = db.read(
            partial(_conversation, columns=db.message_columns, session=session))
        conversations.append(conversation)
        tally.merge(session_left_out)
        tally.merge(left_out)
        marks.append(Mark(item=session.id, fingerprint=mark, sessions=1,
                          messages=len(conversation.messages)))
        messages += len(conversation.messages)
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
