"""Hermes rows as harkback records: sessions, their lineage, and visible messages.

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
keeps its text parts, an image as ``[image]``. Message positions are Hermes message ids,
so they stay stable as a session grows and a hit names the Hermes message it came from
(a message whose id is past 2**31 - 1, what every store holds, is left out and named).

>>> decode_content('\\x00json:[{"type": "text", "text": "look"}, {"type": "image_url"}]')
'look\\n[image]'
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
import time
from collections.abc import Callable, Iterable, Iterator, Mapping

from harkback.adapters.sources.encodings import (
    NOT_UTF8,
    escaped,
    json_loads,
    replaced,
    undecoded,
)
from harkback.adapters.sources.importing import Tally, clip_arguments, clip_tool_output, iso_epoch
from harkback.adapters.sources.transcript_lines import EARLIEST_TIME, FUTURE_SLACK_S
from harkback.stages.record_checks import MOST_POSITION, briefly
from harkback.stages.records import ROLES, Message, Session, ToolCall

Row = Mapping[str, object]
"""A row of a Hermes table, by column name."""

SENTINEL = "\x00json:"
RESET_REASONS = frozenset({"session_reset", "session_switch", "idle", "daily", "suspended",
                           "resume_pending_expired", "new_session"})
DELEGATE_SOURCES = frozenset({"subagent", "delegate"})
COMPACTION_PREFIXES = ("[CONTEXT COMPACTION", "[CONTEXT SUMMARY]:")
REVIEW_PREFIX = "Review the conversation above"

_MEMORY_CONTEXT = re.compile(r"<memory-context>.*?</memory-context>\s*", re.DOTALL)
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
_IMAGE_PARTS = frozenset({"image_url", "input_image", "image"})


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
        elif value.get("type") in _IMAGE_PARTS:  # its bytes never stored: the turn stays
            yield "[image]"
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
        raw = column_text(raw)
    if not isinstance(raw, str):
        return str(raw)
    if not raw.startswith(SENTINEL):
        return raw
    try:
        value = json_loads(raw[len(SENTINEL):])
    except (ValueError, RecursionError):
        return None
    return "\n".join(t for t in _texts(value) if t)


def _json(value: object) -> object:
    """Decode a JSON TEXT column, once more if it was stored double-encoded."""
    for _ in range(2):
        if not isinstance(value, str | bytes):
            return value
        try:
            value = json_loads(value if isinstance(value, str) else column_text(value))
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
        calls.append(ToolCall(id=column_text(call.get("id")),
                              name=column_text(function.get("name")), arguments=arguments))
    return tuple(calls)


def readable(row: Row) -> tuple[dict[str, object], str]:
    """``row`` with the bytes of its text that are not UTF-8 (escaped as
    :meth:`HermesDb.read <harkback.adapters.sources.hermes_db.HermesDb.read>` reads them,
    or in a BLOB) replaced by U+FFFD, and what was replaced where (``""``: nothing).

    >>> readable({"id": 7, "content": "caf\\udce9", "title": b"R\\xe9union"})
    ({'id': 7, 'content': 'caf\ufffd', 'title': 'R\ufffdunion'}, '2 byte(s) in content, title ...')
    """
    clean, count, columns = mended(row, undecoded)
    return clean, replaced(count, ", ".join(columns)) if count else ""


def mended(row: Row, mend: Callable[[str], tuple[str, int]]
           ) -> tuple[dict[str, object], int, list[str]]:
    """``row`` with each text (a BLOB read as UTF-8 first) mended by ``mend``; how many
    characters it mended, and in which columns.

    >>> mended({"id": 7, "title": b"R\\xe9union"}, undecoded)
    ({'id': 7, 'title': 'R\ufffdunion'}, 1, ['title'])
    """
    clean: dict[str, object] = {}
    columns: list[str] = []
    count = 0
    for column, value in row.items():
        if isinstance(value, bytes):
            value = escaped(value)
        if isinstance(value, str):
            value, found = mend(value)
            if found:
                columns.append(column)
                count += found
        clean[column] = value
    return clean, count, columns


def column_text(value: object) -> str:
    """A column's value as text (``""`` for NULL); bytes that are not UTF-8 become U+FFFD
    one for one, as :func:`readable` makes them (which names them), so ids agree.

    >>> column_text(None), column_text(7), column_text(b"caf\\xe9\\x82")
    ('', '7', 'caf\ufffd\ufffd')
    """
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = escaped(value)
    return undecoded(value)[0] if isinstance(value, str) else str(value)


# --- sessions and lineage -----------------------------------------------------------------

def lineage_parent(row: Row, parent: Row | None) -> str | None:
    """The parent harkback keeps for a Hermes session row (None: its own conversation)."""
    parent_id = column_text(row.get("parent_session_id")) or None
    if parent_id is None or parent_id == column_text(row.get("id")):
        return None
    found = markers(row.get("model_config"))
    if "_delegate_from" in found or column_text(row.get("source")) in DELEGATE_SOURCES:
        return parent_id
    if found & {"_branched_from", "_reset_from"}:
        return None
    if parent is None:
        return parent_id  # parent not in the file: resolve ends the walk here anyway
    reason = column_text(parent.get("end_reason"))
    if reason == "branched" or reason in RESET_REASONS:
        return None
    key = column_text(row.get("session_key"))
    if key and key == column_text(parent.get("session_key")) and reason not in ("compression",
                                                                           "compressed"):
        return None  # a reset child from before the markers: same chat lane, fresh start
    return parent_id


def row_time(value: object, what: str, tally: Tally | None, *, now: float | None = None
             ) -> float | None:
    """The epoch seconds of a Hermes time column, or None; one that cannot be right
    (unreadable, before 2020 or more than a day ahead, as for transcripts) is ignored and
    named in ``tally`` (``what`` says whose), so it never moves its session.

    >>> tally = Tally(file="state.db")
    >>> row_time(1772547300.0, "x", tally), row_time(1.7e12, "message 4 of session s", tally)
    (1772547300.0, None)
    >>> tally.named[0].describe()
    'state.db: time out of range: message 4 of session s: 1700000000000.0 is not a time a \
session can have (before 2020 or in the future)'
    """
    if value is None or value == "":
        return None
    seconds = iso_epoch(value)
    latest = (time.time() if now is None else now) + FUTURE_SLACK_S
    if seconds is not None and EARLIEST_TIME <= seconds <= latest:
        return seconds
    if tally is not None:
        why = ("is not epoch seconds or an ISO 8601 time"
               if seconds is None and not isinstance(value, int | float)
               else "is not a time a session can have (before 2020 or in the future)")
        # cut by the one rule (60 characters and "…"), as every echo of a value is
        tally.skip("time out of range", f"{what}: {briefly(value)} {why}", "ignored")
    return None


def session_from_row(row: Row, parent: Row | None, tally: Tally | None = None) -> Session:
    """A harkback session from a Hermes ``sessions`` row (an empty source counts as cli).

    Times that cannot be right are unknown and named in ``tally`` (see :func:`row_time`).
    """
    session_id = column_text(row.get("id"))
    return Session(
        id=session_id, source=column_text(row.get("source")) or "cli",
        model=column_text(row.get("model")), title=column_text(row.get("title")),
        started_at=row_time(row.get("started_at"), f"started_at of session {session_id}",
                            tally),
        ended_at=row_time(row.get("ended_at"), f"ended_at of session {session_id}", tally),
        parent_session_id=lineage_parent(row, parent),
        end_reason=column_text(row.get("end_reason")))


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
    if column_text(row.get("display_kind")) == "hidden":
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
    for stored in rows:
        row, damage = readable(stored)
        reason = _hidden(row)
        if reason is not None:
            tally.add(reason)
            continue
        role = column_text(row.get("role"))
        if role not in ROLES:
            tally.skip(f"message with role {briefly(role)}",
                       f"message {row.get('id')} of session {session_id} dropped", "dropped")
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
            tally.skip("unreadable tool_calls",
                       f"message {row.get('id')} of session {session_id} kept without its "
                       "tool calls", "ignored")
            calls = ()
        calls = tuple(ToolCall(id=c.id, name=c.name, arguments=clip_arguments(c.arguments, tally))
                      for c in calls)
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
        if position > MOST_POSITION:  # a Message refuses it: the whole import stopped
            tally.skip("message id past what a store holds",
                       f"message {position} of session {session_id} dropped", "dropped")
            continue
        if damage:  # named only for a message kept: the rest is left out anyway
            tally.skip(NOT_UTF8, f"message {position} of session {session_id}: {damage}",
                       "repaired")
        out.append(Message(session_id=session_id, position=position, role=role,
                           content=text, tool_name=column_text(row.get("tool_name")),
                           tool_call_id=column_text(row.get("tool_call_id")), tool_calls=calls,
                           timestamp=row_time(row.get("timestamp"),
                                              f"message {position} of session {session_id}",
                                              tally)))
    return tuple(out)
