"""Sessions and messages in SQL rows: the statements that read them, and rows turned into
records and records into rows.

>>> statement = sessions_by_id(["s1", "s2"])
>>> statement.params
('["s1", "s2"]',)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import cast

import attrs

from harkback.adapters.stores.sql.loops import is_root
from harkback.adapters.stores.sql.schema import MESSAGE_COLUMNS, SESSION_COLUMNS
from harkback.adapters.stores.sql.statement import (
    SCOPE,
    Row,
    SqlValue,
    Statement,
    json_list,
    scope,
)
from harkback.adapters.stores.sql.tool_calls import decode_tool_calls, encode_tool_calls
from harkback.stages.first_request import PREVIEW_READS, preview
from harkback.stages.id_hints import folded
from harkback.stages.long_text import loaded_start
from harkback.stages.ports import RecentQuery
from harkback.stages.record_checks import a_role, at_least_zero, epoch_or_none, non_empty
from harkback.stages.records import (
    EARLIEST_EPOCH,
    LATEST_EPOCH,
    ROLES,
    Message,
    MessageHit,
    Role,
    Session,
    SessionOverview,
)

_PREVIEW_BYTES = 4 * PREVIEW_READS
"""Bytes of UTF-8 that hold at least the first :data:`PREVIEW_READS` characters."""


def sessions_by_id(ids: Iterable[str]) -> Statement:
    """The sessions with these ids, in the order asked (duplicates and unknown ids dropped)."""
    return Statement(
        f"SELECT {', '.join('s.' + c for c in SESSION_COLUMNS.split(', '))} "
        "FROM json_each(?) AS j JOIN sessions AS s ON s.id = j.value ORDER BY j.key",
        (json_list(ids),))


def like_start(text: str) -> str:
    r"""A ``LIKE`` pattern (escaped by a backslash) of what starts with ``text``, its ASCII
    capitals lowered (:func:`~harkback.stages.id_hints.folded`).

    >>> like_start("A_b%")
    'a\\_b\\%%'
    """
    escaped = re.sub(r"([\\%_])", r"\\\1", folded(text))
    return f"{escaped}%"


LIKE_CHARS = 1000
"""How much of an id a ``LIKE`` pattern of SQLite holds: it refuses one of over 50,000
bytes ("pattern too complex"), and an escaped character takes up to 4 (an emoji)."""


def ids_alike(session_id: str) -> Statement:
    """Session ids starting with the first :data:`LIKE_CHARS` characters of ``session_id``,
    ASCII case aside (SQLite's ``LIKE`` folds just that case), in code point order
    (``BINARY``: UTF-8 bytes): the caller checks the rest, and stops reading when it has
    enough."""
    return Statement("SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' ORDER BY id",
                     (like_start(session_id[:LIKE_CHARS]),))


def children_of(ids: Iterable[str]) -> Statement:
    """Sessions whose parent is one of ``ids``, earliest first (unknown start last)."""
    return Statement(
        f"SELECT {SESSION_COLUMNS} FROM sessions "
        "WHERE parent_session_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY started_at IS NULL, started_at, id", (json_list(ids),))


def messages_of(session_ids: Iterable[str], longest: int | None = None) -> Statement:
    """All messages of these sessions, by session start (unknown last), then position; with
    ``longest``, a content of more bytes than ``longest`` characters can take is NULL (read
    by :func:`message_start`)."""
    columns = ", ".join("m." + c for c in MESSAGE_COLUMNS.split(", "))
    if longest is not None:
        # A longer one is left out rather than cut here: cutting it after asking its size
        # reads a huge text twice (80 MB more for 84 MB). A short one costs nothing more.
        columns = columns.replace("m.content", (
            f"CASE WHEN length(CAST(m.content AS BLOB)) <= {4 * longest} THEN m.content END"), 1)
    return Statement(
        f"SELECT {columns} FROM messages AS m JOIN sessions AS s ON s.id = m.session_id "
        "WHERE m.session_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY s.started_at IS NULL, s.started_at, m.session_id, m.position",
        (json_list(session_ids),))


def window_counts(session_id: str, around: int | None) -> Statement:
    """How many messages ``session_id`` holds, how many come before position ``around``,
    and whether it holds that one (0 or 1): ranges of the (session_id, position) index, no
    message read. Counted apart, not as ``count(CASE ...)`` in one walk: a bare range count
    is a third of the work (2 ms instead of 6 for 50,000 messages)."""
    return Statement(
        "SELECT (SELECT count(*) FROM messages WHERE session_id = ?1), "
        "(SELECT count(*) FROM messages WHERE session_id = ?1 AND position < ?2), "
        "EXISTS (SELECT 1 FROM messages WHERE session_id = ?1 AND position = ?2)",
        (session_id, around))


def window_rows(session_id: str, start: int, limit: int) -> Statement:
    """The ``limit`` messages of ``session_id`` from its ``start``-th, by position: the
    index finds the first one's position (reading no message), then reads from there."""
    return Statement(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND position >= "
        "(SELECT position FROM messages WHERE session_id = ? ORDER BY position "
        "LIMIT 1 OFFSET ?) ORDER BY position LIMIT ?", (session_id, session_id, start, limit))


def recent(query: RecentQuery) -> Statement:
    """Root sessions newest first, with their message count and first user message (a
    loop of parents is listed by one member: :mod:`~harkback.adapters.stores.sql.loops`);
    the other sessions instead for ``query.parts``."""
    # Written out, not "(? = 0 OR started_at IS NULL)": with the OR, the sessions_started
    # index only orders a walk over every session (~4 ms for 60k) where a seek finds the
    # undated ones (what every bounded search and listing counts, stages/undated.py).
    undated = "AND s.started_at IS NULL " if query.undated else ""
    # SCOPE's "? = '[]' OR s.source IN ..." keeps the sessions_source index out (as the OR
    # above would sessions_started's): asked for, the sources are named again without it.
    sources = "AND s.source IN (SELECT value FROM json_each(?)) " if query.sources else ""
    # The counts and previews are computed only for the rows that survive the LIMIT.
    # SQLite sorts NULL below every value, so "started_at DESC" already puts unknown
    # starts last, and in this form the sessions_started index serves the LIMIT.
    return Statement(
        f"SELECT {SESSION_COLUMNS}, "
        "(SELECT COUNT(*) FROM messages AS m WHERE m.session_id = r.id), "
        # Cut as bytes: SQLite's substr of a text stops at a NUL, which a message may hold.
        f"(SELECT substr(CAST(m.content AS BLOB), 1, {_PREVIEW_BYTES}) FROM messages AS m "
        "  WHERE m.session_id = r.id AND m.role = 'user' ORDER BY m.position LIMIT 1) "
        f"FROM (SELECT {SESSION_COLUMNS} FROM sessions AS s "
        f"      WHERE {'NOT ' if query.parts else ''}{is_root()} "
        "        AND s.id NOT IN (SELECT value FROM json_each(?)) "
        "        AND s.source NOT IN (SELECT value FROM json_each(?)) "
        "        AND (? IS NULL OR s.started_at >= ?) AND (? IS NULL OR s.started_at <= ?) "
        f"        {undated}{sources}AND {SCOPE} "
        "      ORDER BY s.started_at DESC, s.id LIMIT ?) AS r "
        "ORDER BY r.started_at DESC, r.id",
        (json_list(query.exclude_roots), json_list(query.hidden_sources),
         query.since, query.since, query.until, query.until,
         *((json_list(query.sources),) if query.sources else ()),
         *scope(query.sources, query.projects), query.limit))


def session_row(session: Session) -> tuple[SqlValue, ...]:
    """A session as the values of :data:`~harkback.adapters.stores.sql.writes.UPSERT_SESSION`."""
    return (session.id, session.source, session.model, session.title, session.started_at,
            session.ended_at, session.parent_session_id, session.end_reason, session.project)


def message_row(row_id: int, message: Message) -> tuple[SqlValue, ...]:
    """A message as the values of :data:`~harkback.adapters.stores.sql.writes.UPSERT_MESSAGE`."""
    return (row_id, message.session_id, message.position, message.role, message.content,
            message.tool_name, message.tool_call_id, encode_tool_calls(message.tool_calls),
            message.timestamp)


def session_from_row(row: Row) -> Session:
    """A session from the columns ``id, source, model, title, started_at, ended_at, ...``.

    >>> session_from_row(("s1", "cli", "", b"a title", None, None, None, "", ""))
    Traceback (most recent call last):
    TypeError: its title is stored as bytes, not as text
    """
    if not (row[0].__class__ is row[1].__class__ is row[2].__class__ is row[3].__class__
            is row[7].__class__ is row[8].__class__ is str  # on every read: one cheap check,
            and (row[6] is None or row[6].__class__ is str)):  # the field named on failing
        for name, text in zip(_SESSION_TEXTS, (*row[:4], *row[6:9]), strict=True):
            if text.__class__ is not str and (text is not None or name != "parent_session_id"):
                raise TypeError(f"its {name} is stored as {type(text).__name__}, not as text")
    return Session(id=row[0], source=row[1], model=row[2], title=row[3], started_at=row[4],
                   ended_at=row[5], parent_session_id=row[6], end_reason=row[7], project=row[8])


_SESSION_TEXTS = ("id", "source", "model", "title", "parent_session_id", "end_reason", "project")
_CHECKED = {"session_id": non_empty, "position": at_least_zero, "role": a_role,
            "timestamp": epoch_or_none}
"""The validators :func:`message_from_row` checks inline, by field."""


def settable(cls: type[Message]) -> bool:
    """Whether setting ``cls``'s slots after :func:`message_from_row`'s inline checks
    makes what ``cls(...)`` does: its fields are the columns, validated by
    :data:`_CHECKED` only, with no converter and no post-init. A field or a check added
    to Message turns the shortcut off (every row goes through ``Message(...)``), where it
    would have been skipped without a word.

    >>> settable(Message), settable(attrs.make_class("M", ["session_id"]))
    (True, False)
    """
    fields = [(a.name, a.validator, a.converter) for a in attrs.fields(cls)]
    return (not hasattr(cls, "__attrs_post_init__")
            and fields == [(name, _CHECKED.get(name), None)
                           for name in MESSAGE_COLUMNS.split(", ")])


_SETTABLE = settable(Message)
_NEW = object.__new__
(_SET_SESSION_ID, _SET_POSITION, _SET_ROLE, _SET_CONTENT, _SET_TOOL_NAME, _SET_TOOL_CALL_ID,
 _SET_TOOL_CALLS, _SET_TIMESTAMP) = (vars(Message)[name].__set__
                                     for name in MESSAGE_COLUMNS.split(", "))
"""The setters of a :class:`~harkback.stages.records.Message`'s slots (what its ``__init__``
calls), in the order of :data:`~harkback.adapters.stores.sql.schema.MESSAGE_COLUMNS`."""


def message_from_row(row: Row) -> Message:
    """A message from the columns ``session_id, position, role, content, ...``: what
    ``Message(...)`` makes of them, and fails as it does.

    >>> message_from_row(("s1", 0, "user", "hi", "", "", None, 1.5))
    Message(session_id='s1', position=0, role='user', content='hi', tool_name='', \
tool_call_id='', tool_calls=(), timestamp=1.5)
    """
    session_id, position, role, timestamp = row[0], row[1], row[2], row[7]
    if (_SETTABLE and session_id and position.__class__ is int and position >= 0 and role in ROLES
            and row[3].__class__ is str
            and (timestamp is None or (timestamp.__class__ is float
                                       and EARLIEST_EPOCH <= timestamp <= LATEST_EPOCH))):
        # Values Message's validators pass (record_checks), as nearly all of a store's are:
        # its slots are set without them. A search makes ~200 messages, and the validators
        # and the keyword call were half of each one's ~3 us. Anything else (a position 1.5
        # an older harkback stored, an empty id) goes through Message(...) below.
        message = _NEW(Message)
        _SET_SESSION_ID(message, session_id)
        _SET_POSITION(message, position)
        _SET_ROLE(message, role)
        _SET_CONTENT(message, row[3])
        _SET_TOOL_NAME(message, row[4])
        _SET_TOOL_CALL_ID(message, row[5])
        _SET_TOOL_CALLS(message, decode_tool_calls(row[6]) if row[6] else ())
        _SET_TIMESTAMP(message, timestamp)
        return message
    for text in row[3:6]:
        # Message and Session take any value: a text stored as bytes failed when printed.
        if text.__class__ is not str:
            raise TypeError(f"its text is stored as {type(text).__name__}, not as text")
    return Message(session_id=session_id, position=position, role=cast(Role, role),
                   content=row[3], tool_name=row[4], tool_call_id=row[5],
                   tool_calls=decode_tool_calls(row[6]), timestamp=timestamp)


def message_start(session_id: str, position: int, longest: int) -> Statement:
    """The first bytes of a message's content, enough for ``longest`` characters and one
    more, cut as bytes (SQLite's substr of a text stops at a NUL, which a message may hold).

    >>> message_start("s1", 0, 10).params
    ('s1', 0)
    """
    return Statement(f"SELECT substr(CAST(content AS BLOB), 1, {4 * longest + 1}) "
                     "FROM messages WHERE session_id = ? AND position = ?", (session_id, position))


def message_start_from_row(row: Row, start: bytes | None, longest: int) -> Message:
    """A message from a :func:`messages_of` row read with ``longest``, its content that of
    the row or else the ``start`` :func:`message_start` read, whole or its first ``longest``
    characters (:func:`~harkback.stages.long_text.loaded_start`)."""
    if row[3] is not None and len(row[3]) <= longest:
        return message_from_row(row)
    # A character the byte cut split lies past the first ``longest``.
    text = row[3] if row[3] is not None else (start or b"").decode("utf-8", "replace")
    return message_from_row((*row[:3], loaded_start(text, longest), *row[4:]))


_HIT_FIELDS = ("session_id", "position", "role", "content", "score", "timestamp", "source",
               "length")


def hit_settable(cls: type[MessageHit]) -> bool:
    """Whether setting ``cls``'s slots makes what ``cls(...)`` does (:func:`hit_from_row`):
    its fields are :data:`_HIT_FIELDS`, none checked or converted, its slots only those,
    and no hook runs around ``__init__``. A field, a check, a cached hash or a hook added
    to MessageHit turns the shortcut off.

    >>> hit_settable(MessageHit), hit_settable(attrs.make_class("H", ["session_id"]))
    (True, False)
    """
    return (not hasattr(cls, "__attrs_post_init__") and not hasattr(cls, "__attrs_pre_init__")
            and getattr(cls, "__slots__", ()) == (*_HIT_FIELDS, "__weakref__")
            and [(a.name, a.validator, a.converter) for a in attrs.fields(cls)]
            == [(name, None, None) for name in _HIT_FIELDS])


_HIT_SETTABLE = hit_settable(MessageHit)
(_SET_HIT_SESSION_ID, _SET_HIT_POSITION, _SET_HIT_ROLE, _SET_HIT_CONTENT, _SET_HIT_SCORE,
 _SET_HIT_TIMESTAMP, _SET_HIT_SOURCE, _SET_HIT_LENGTH) = (vars(MessageHit)[name].__set__
                                                          for name in _HIT_FIELDS)


def hit_from_row(row: Row, text: str, length: int | None = None) -> MessageHit:
    """A hit from a :func:`~harkback.adapters.stores.sql.fulltext.search` or
    :func:`~harkback.adapters.stores.sql.fulltext.newest` row and its text (:func:`hit_text`),
    with the whole text's ``length`` in tokens when that is cut; score ``-bm25``, higher
    is better.

    >>> hit_from_row(("s1", 2, "user", 1.5, "cli", -3.0, 7), "hi")
    MessageHit(session_id='s1', position=2, role='user', content='hi', score=3.0, \
timestamp=1.5, source='cli', length=None)
    """
    if _HIT_SETTABLE:
        # MessageHit checks nothing, so its slots are set as its __init__ sets them, without
        # the keyword call: ~2.2 -> ~0.8 us a hit, 300 a search.
        hit = _NEW(MessageHit)
        _SET_HIT_SESSION_ID(hit, row[0])
        _SET_HIT_POSITION(hit, row[1])
        _SET_HIT_ROLE(hit, row[2])
        _SET_HIT_CONTENT(hit, text)
        _SET_HIT_SCORE(hit, -row[5])
        _SET_HIT_TIMESTAMP(hit, row[3])
        _SET_HIT_SOURCE(hit, row[4])
        _SET_HIT_LENGTH(hit, length)
        return hit
    return MessageHit(session_id=row[0], position=row[1], role=cast(Role, row[2]),
                      content=text, timestamp=row[3], source=row[4], score=-row[5],
                      length=length)


def hit_text(start: bytes | None) -> str:
    """A hit's text from the first :data:`~harkback.adapters.stores.sql.fulltext.HIT_BYTES`
    bytes of its UTF-8 (:func:`~harkback.adapters.stores.sql.fulltext.hit_texts`): the
    whole text when it has no more than :data:`~harkback.stages.long_text.LONGEST_READ`
    characters, else more than that many (to be cut to them).

    >>> hit_text("naïve".encode())
    'naïve'
    """
    # A character the byte cut split lies past the first LONGEST_READ characters (four
    # bytes at most each), which are all that is kept.
    return (start or b"").decode("utf-8", "replace")


def overview_from_row(row: Row) -> SessionOverview:
    """An overview from a :func:`recent` row."""
    # A character the byte cut split lies past the first PREVIEW_READS, which preview reads.
    start = (row[10] or b"").decode("utf-8", "replace")
    return SessionOverview(session=session_from_row(row), message_count=row[9],
                           preview=preview(start))

