"""The ingest format: one session per JSON line, read into a :class:`Conversation`.

A line holds ``{"id", "source", "model", "title", "started_at", "ended_at",
"parent_session_id", "end_reason", "project", "messages": [...]}``; each message holds
``{"role", "content", "timestamp", "tool_name", "tool_call_id", "tool_calls":
[{"id", "type": "function", "function": {"name", "arguments"}}]}``.

Rules: ``id`` is a non-empty string and ``role`` one of user, assistant, tool, system;
every other field may be missing or ``null``; ids, ``source`` and ``project`` hold no NUL.
Times are epoch seconds or ISO 8601 strings (a time without an offset is UTC).
``content`` may also be a list of OpenAI-style parts, whose text parts are joined.
Tool-call ``arguments`` may be a string or any JSON value (kept as a JSON string).
Message positions follow the order of the list. Unknown keys are ignored. Anything else that does
not fit is a :class:`BadRecord` naming the field, never an exception.

>>> line = ('{"id": "s1", "source": "cli", "started_at": "2026-03-03T14:15:00Z",'
...         ' "messages": [{"role": "user", "content": "hi"}]}')
>>> conv = parse_line(line, 1).unwrap()
>>> conv.session.started_at, conv.messages[0].content
(1772547300.0, 'hi')
>>> parse_line('{"id": "s1", "messages": [{"role": "bot"}]}', 7).failure().message()
"line 7: messages[0].role: expected one of user, assistant, tool, system, got 'bot'"
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, TypeVar

import attrs
from returns.result import Failure, Result, Success

from harkback.stages.errors import BadRecord
from harkback.stages.ingest_fields import (
    Invalid,
    content,
    kind,
    optional_str,
    read_time,
    tool_call,
)
from harkback.stages.record_checks import briefly, nul_key
from harkback.stages.records import (
    ROLES,
    Conversation,
    Message,
    Role,
    Session,
    ToolCall,
    mended,
)

T = TypeVar("T")

Notes = list[str] | None
"""Where a lenient read notes what it dropped; None reads strictly (the first problem fails)."""


def _or_noted(notes: Notes, read: Callable[[], T], default: T, outcome: str) -> T:
    """``read()``; when it finds a problem and ``notes`` is a list, note it and use ``default``."""
    if notes is None:
        return read()
    try:
        return read()
    except Invalid as error:
        notes.append(f"{error} ({outcome})")
        return default


def _message(value: object, session_id: str, position: int, notes: Notes = None) -> Message:
    where = f"messages[{position}]"
    if not isinstance(value, dict):
        raise Invalid(where, f"expected an object, got {kind(value)}")
    role = value.get("role")
    if role not in ROLES:
        raise Invalid(where + ".role", f"expected one of {', '.join(ROLES)}, got {briefly(role)}")
    calls = value.get("tool_calls")
    if calls is None:
        calls = []
    if not isinstance(calls, list):
        raise Invalid(where + ".tool_calls", f"expected a list, got {kind(calls)}")
    checked_role: Role = role
    return Message(
        session_id=session_id, position=position, role=checked_role,
        content=content(value.get("content"), where + ".content"),
        tool_name=optional_str(value, "tool_name", where + "."),
        tool_call_id=optional_str(value, "tool_call_id", where + "."),
        tool_calls=tuple(tool_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)),
        timestamp=_or_noted(notes, lambda: read_time(value, "timestamp", where + "."), None,
                            "time ignored"),
    )


def _conversation(obj: object, notes: Notes = None) -> Conversation:
    if not isinstance(obj, dict):
        raise Invalid("session", f"expected a JSON object, got {kind(obj)}")
    session_id = obj.get("id")
    if not isinstance(session_id, str) or not session_id.strip():
        raise Invalid("id", f"expected a non-empty string, got {briefly(session_id)}")
    session_id = mended(session_id)
    parent = optional_str(obj, "parent_session_id", "") or None

    def not_its_own(parent: str | None) -> str | None:
        if parent == session_id:
            raise Invalid("parent_session_id", "a session cannot be its own parent")
        return parent

    # Read leniently, the link alone is left out: the session is kept, as a root.
    parent = _or_noted(notes, partial(not_its_own, parent), None, "parent ignored")
    messages = obj.get("messages")
    if messages is None:
        messages = []
    if not isinstance(messages, list):
        raise Invalid("messages", f"expected a list, got {kind(messages)}")
    session = Session(
        id=session_id,
        source=optional_str(obj, "source", ""),
        model=optional_str(obj, "model", ""),
        title=optional_str(obj, "title", ""),
        started_at=_or_noted(notes, lambda: read_time(obj, "started_at", ""), None, "time ignored"),
        ended_at=_or_noted(notes, lambda: read_time(obj, "ended_at", ""), None, "time ignored"),
        parent_session_id=parent,
        end_reason=optional_str(obj, "end_reason", ""),
        project=optional_str(obj, "project", ""),
    )
    kept: list[Message] = []
    for index, value in enumerate(messages):
        message = _or_noted(notes, partial(_message, value, session_id, index, notes), None,
                            "message dropped")
        if message is not None:
            kept.append(message)
    # SQLite ends a text at a NUL: a key holding one was stored, never read again (storable).
    if held := nul_key(conversation := Conversation(session, tuple(kept))):
        raise Invalid(*held)
    return conversation


def conversation_from_json(obj: object) -> Result[Conversation, BadRecord]:
    """Read one decoded JSON value as a conversation, or say which field is wrong.

    >>> conv = conversation_from_json({"id": "s", "messages": [{"role": "user"}]}).unwrap()
    >>> conv.messages[0].position, conv.messages[0].content
    (0, '')
    >>> conversation_from_json({"id": ""}).failure().reason
    "id: expected a non-empty string, got ''"
    """
    try:
        return Success(_conversation(obj))
    except Invalid as error:
        return Failure(BadRecord(str(error)))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def whole_number(digits: str) -> int | float:
    """A JSON integer as :func:`json.loads` reads it, but one longer than Python converts
    (4,300 digits by default) as the float it rounds to, so the line holding it is still read.

    Such a number is valid JSON; refusing it lost the whole line (a message, a session)
    for one field nobody searches. As a time it is then out of range, ignored and named.

    >>> whole_number("42"), whole_number("-" + "9" * 5000)
    (42, -inf)
    """
    limit = sys.get_int_max_str_digits()  # 0: no limit (PYTHONINTMAXSTRDIGITS=0)
    return int(digits) if limit == 0 or len(digits.lstrip("-")) <= limit else float(digits)


def parse_line(line: str, line_number: int) -> Result[Conversation, BadRecord]:
    """Read one line of an ingest file; a failure carries ``line_number``.

    >>> parse_line('{"id": "s", "started_at": NaN}', 3).failure().message()
    'line 3: invalid JSON: NaN is not valid JSON'
    >>> parse_line('{"id": "s", "ended_at": "yesterday"}', 4).failure().message()
    "line 4: ended_at: not an ISO 8601 time: 'yesterday'"
    """
    return _decode(line, line_number).bind(conversation_from_json).alt(
        lambda bad: BadRecord(bad.reason, line_number))


@attrs.frozen
class ReadLine:
    """A line read leniently: its conversation, and what was dropped or ignored in it."""

    conversation: Conversation
    dropped: tuple[BadRecord, ...] = ()


def read_line(line: str, line_number: int) -> Result[ReadLine, BadRecord]:
    """Read one line of an ingest file as :func:`parse_line` does, but a bad message is
    dropped and a bad time ignored, each noted, instead of failing the whole session.

    Positions stay those of the line's list, so a dropped message leaves a gap.

    >>> read = read_line('{"id": "s", "messages": [{"role": "bot"}, {"role": "user",'
    ...                  ' "timestamp": 12e99}]}', 5).unwrap()
    >>> [(m.position, m.timestamp) for m in read.conversation.messages]
    [(1, None)]
    >>> [bad.message() for bad in read.dropped]  # doctest: +NORMALIZE_WHITESPACE
    ["line 5: messages[0].role: expected one of user, assistant, tool, system, got 'bot'
      (message dropped)", 'line 5: messages[1].timestamp: epoch seconds must be finite and
      between the years 1 and 9999 (milliseconds? divide by 1000), got 1.2e+100 (time ignored)']
    """
    # NaN and Infinity (Python's json.dumps writes them) are read as numbers here, so that
    # one in a time is that time ignored and the session kept, not the whole line skipped.
    decoded = _decode(line, line_number, constants=True)
    if isinstance(decoded, Failure):
        return decoded
    notes: list[str] = []
    try:
        conversation = _conversation(decoded.unwrap(), notes)
    except Invalid as error:
        return Failure(BadRecord(str(error), line_number))
    return Success(ReadLine(conversation, tuple(BadRecord(note, line_number) for note in notes)))


def _decode(line: str, line_number: int, *, constants: bool = False
            ) -> Result[Any, BadRecord]:
    if not line.strip():
        return Failure(BadRecord("empty line", line_number))
    try:
        if constants:
            return Success(json.loads(line, parse_int=whole_number))
        return Success(json.loads(line, parse_constant=_reject_constant,
                                  parse_int=whole_number))
    except json.JSONDecodeError as error:
        return Failure(BadRecord(f"invalid JSON: {_where(error, line)}", line_number))
    except ValueError as error:  # NaN/Infinity
        return Failure(BadRecord(f"invalid JSON: {error}", line_number))
    except RecursionError:
        return Failure(BadRecord("invalid JSON: nested too deeply", line_number))


def _where(error: json.JSONDecodeError, line: str) -> str:
    """What JSON found wrong, and where in the line (json's "line 2" was the line's end).

    >>> parse_line('{"id":\\n', 6).failure().message()
    'line 6: invalid JSON: Expecting value: the line ends before its JSON does'
    """
    if not line[error.pos:].strip():
        return f"{error.msg}: the line ends before its JSON does"
    return f"{error.msg} at column {error.colno}"


def parse_lines(lines: Iterable[str], *, first_line: int = 1
                ) -> Iterator[Result[Conversation, BadRecord]]:
    """Read the lines of an ingest file lazily, skipping blank lines; numbering starts at 1.

    >>> [r.unwrap().session.id for r in parse_lines(['{"id": "a"}', "", '{"id": "b"}'])]
    ['a', 'b']
    """
    for number, line in enumerate(lines, start=first_line):
        if line.strip():
            yield parse_line(line, number)


def _tool_call_to_json(call: ToolCall) -> dict[str, object]:
    return {"id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": call.arguments}}


def _message_to_json(message: Message) -> dict[str, object]:
    out: dict[str, object] = {"role": message.role, "content": message.content}
    # Empty optional fields are left out: they read back as their defaults.
    if message.timestamp is not None:
        out["timestamp"] = message.timestamp
    if message.tool_name:
        out["tool_name"] = message.tool_name
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    if message.tool_calls:
        out["tool_calls"] = [_tool_call_to_json(c) for c in message.tool_calls]
    return out


def conversation_to_json(conv: Conversation) -> dict[str, object]:
    """The ingest-format object of a conversation (the inverse of :func:`conversation_from_json`).

    Message positions are not written: they follow from the order of the list.

    >>> conv = conversation_from_json({"id": "s", "source": "cli"}).unwrap()
    >>> conversation_to_json(conv)["source"]
    'cli'
    >>> conversation_from_json(conversation_to_json(conv)).unwrap() == conv
    True
    """
    session = conv.session
    return {
        "id": session.id, "source": session.source, "model": session.model,
        "title": session.title, "started_at": session.started_at,
        "ended_at": session.ended_at, "parent_session_id": session.parent_session_id,
        "end_reason": session.end_reason,
        "project": session.project,
        "messages": [_message_to_json(m) for m in conv.messages],
    }
