"""Read-back: one page of a stored session's transcript, found by message id.

A message's id is ``SESSION_ID:POSITION``: its session, a colon, and its position in that
session. Search results carry these ids (``matched_message_ids``); a hit can lie in a
sub-agent or continuation session of the result's lineage, so the id names its session.
``--around`` also takes a bare position of the session being shown.

>>> message_id("cors", 3)
'cors:3'
>>> parse_message_id("cors:3", "cors"), parse_message_id("7", "cors")
(<Success: 3>, <Success: 7>)

A page is read as a window of the session (:mod:`~harkback.stages.message_window`): the
store reads that page's messages and counts the rest, so a page of a session of 50,000
messages costs what a page of a short one does.
"""

from __future__ import annotations

from datetime import tzinfo
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from harkback.stages.defaults import MAX_PAGE_LIMIT, PAGE_LIMIT
from harkback.stages.errors import NotFound, QueryRejected, StoreUnavailable
from harkback.stages.id_hints import HINTS, not_found
from harkback.stages.message_window import MessageWindow, WindowQuery
from harkback.stages.ports import SessionStore
from harkback.stages.records import Message, Session, mended
from harkback.stages.result import when_text
from harkback.stages.shown_number import shown_number
from harkback.stages.stage import as_result

ReadError = QueryRejected | NotFound | StoreUnavailable
"""Everything reading a page can fail with: a bad request (usage), nothing there, the store."""
POSITION_DIGITS = 18
"""The most digits of a message's position: the stores keep it in a 64-bit integer."""


def message_id(session_id: str, position: int) -> str:
    """The id of the message at ``position`` of ``session_id``."""
    return f"{session_id}:{position}"


def parse_message_id(text: str, session_id: str) -> Result[int, QueryRejected]:
    """The position that ``text`` (``SESSION:POSITION`` or ``POSITION``) names in ``session_id``.

    The position is after the last colon, so session ids may hold colons themselves.

    >>> parse_message_id("a:b:2", "a:b")
    <Success: 2>
    >>> parse_message_id("other:2", "cors").failure().reason
    "message id 'other:2' is of session 'other', not 'cors' (show that session)"
    >>> parse_message_id("x", "cors").failure().reason
    "message id 'x' is not SESSION_ID:POSITION or POSITION"
    >>> parse_message_id("1" * 19, "cors").failure().reason.endswith("(at most 18 digits)")
    True
    """
    head, colon, tail = text.strip().rpartition(":")
    if not (tail.isascii() and tail.isdigit()):
        return Failure(QueryRejected(f"message id {text!r} is not SESSION_ID:POSITION or "
                                     "POSITION"))
    if colon and head != session_id:
        return Failure(QueryRejected(f"message id {text!r} is of session {head!r}, not "
                                     f"{session_id!r} (show that session)"))
    if len(tail.lstrip("0")) > POSITION_DIGITS:
        # int() refuses more than 4,300 digits: an internal error, in MCP a protocol error.
        return Failure(QueryRejected(f"message id {text!r} names a position past any "
                                     f"message (at most {POSITION_DIGITS} digits)"))
    return Success(int(tail))


@attrs.frozen(kw_only=True)
class PageRequest:
    """Which page of which session: centred on a message id, or from an offset (ids
    :func:`~harkback.stages.records.mended` as the stores hold them)."""

    session_id: str = attrs.field(converter=mended)
    around: str | None = attrs.field(default=None, converter=attrs.converters.optional(mended))
    offset: int | None = None
    limit: int = PAGE_LIMIT


def check_request(request: PageRequest) -> Result[int | None, QueryRejected]:
    """A request that can be read (the position ``around`` names, if any), or why not.

    >>> check_request(PageRequest(session_id="s", limit=0)).failure().reason
    'page size must be between 1 and 200, got 0'
    >>> check_request(PageRequest(session_id="s", around="s:4"))
    <Success: 4>
    >>> check_request(PageRequest(session_id="s", offset="2")).failure().reason
    "offset must be a whole number, got '2'"
    """
    if not request.session_id:
        return Failure(QueryRejected("a session id is needed"))
    if isinstance(request.session_id, bool) or not isinstance(request.session_id, str | int):
        # A library caller's b"s1" raised TypeError from SQLite's JSON list of ids (a number
        # is looked up as before, and not found).
        return Failure(QueryRejected(
            f"a session id must be text, got {type(request.session_id).__name__}"))
    if isinstance(request.session_id, str) and "\x00" in request.session_id:
        # SQLite's JSON lists end a text at a NUL: 's\0x' read session 's', and the other
        # stores found none. No session id should hold one (`harkback ingest` refuses it).
        return Failure(QueryRejected(
            f"a session id cannot hold a NUL character, got {request.session_id!r}"))
    # A library caller's offset="2" (or limit=None: only the offset may be left out)
    # raised TypeError from deep in the page's arithmetic.
    for name, given, optional in (("page size", request.limit, False),
                                  ("offset", request.offset, True)):
        if not (given is None and optional) and (
                isinstance(given, bool) or not isinstance(given, int)):
            return Failure(QueryRejected(f"{name} must be a whole number, got {given!r}"[:80]))
    if not 1 <= request.limit <= MAX_PAGE_LIMIT:
        return Failure(QueryRejected(f"page size must be between 1 and {MAX_PAGE_LIMIT}, "
                                     f"got {shown_number(request.limit)}"))
    if request.offset is not None and request.offset < 0:
        return Failure(QueryRejected(f"offset must be 0 or more, got "
                                     f"{shown_number(request.offset)}"))
    if request.around is None:
        return Success(None)
    if request.offset is not None:
        return Failure(QueryRejected("give a message to centre on or an offset, not both"))
    return parse_message_id(request.around, request.session_id)


def page_of(request: PageRequest, around: int | None, window: MessageWindow
            ) -> Result[MessageWindow, NotFound]:
    """``window``, read for ``request`` (centred on the position ``around``), or why it
    holds no page.

    An offset at or past the end of the session, or a message the session lacks, is
    :class:`NotFound` (a missing thing, as an unknown session id is); an empty session
    reads as one empty page, at offset 0.
    """
    if around is not None and window.around_index is None:
        return Failure(NotFound(f"session {request.session_id!r} has no message "
                                f"{message_id(request.session_id, around)!r}"))
    offset = request.offset or 0
    total = window.total
    if offset >= total and (total or offset):
        size = f"{total:,} message{'' if total == 1 else 's'}"
        return Failure(NotFound(f"offset {shown_number(offset)} is past the end of session "
                                f"{request.session_id!r} ({size})"))
    return Success(window)


@attrs.frozen(kw_only=True)
class SessionPage:
    """A page of one session's transcript, with its lineage (parent and children).

    ``parent_id`` is the parent the session names (None for a root); ``parent`` is
    that session when it is stored.
    """

    session: Session
    parent_id: str | None
    parent: Session | None
    children: tuple[Session, ...]
    messages: tuple[Message, ...]
    offset: int
    limit: int
    total: int

    @property
    def next_offset(self) -> int | None:
        """Where the next page starts, or None when this page reaches the end."""
        stop = self.offset + len(self.messages)
        return stop if stop < self.total else None

    def to_payload(self, tz: tzinfo | None = None) -> dict[str, Any]:
        """The JSON form: ``{"success": true, "mode": "show", "session", "lineage",
        "messages", "offset", "limit", "total", "next_offset"}`` (``tz`` formats ``when``)."""
        s = self.session
        parent = None
        if self.parent_id is not None:
            parent = {"session_id": self.parent_id, "stored": self.parent is not None,
                      "title": self.parent.title if self.parent else ""}
        return {
            "success": True, "mode": "show",
            "session": {"session_id": s.id, "title": s.title, "source": s.source,
                        "model": s.model, "project": s.project,
                        "when": when_text(s.started_at, tz),
                        "started_at": s.started_at, "ended_at": s.ended_at,
                        "message_count": self.total},
            "lineage": {"parent": parent,
                        "children": [{"session_id": c.id, "title": c.title, "source": c.source,
                                      "when": when_text(c.started_at, tz),
                                      "started_at": c.started_at} for c in self.children]},
            "offset": self.offset, "limit": self.limit, "total": self.total,
            "next_offset": self.next_offset,
            "messages": [_message_payload(m, tz) for m in self.messages],
        }


def _message_payload(message: Message, tz: tzinfo | None) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": message_id(message.session_id, message.position), "position": message.position,
        "role": message.role, "when": when_text(message.timestamp, tz),
        "timestamp": message.timestamp, "content": message.content}
    if message.tool_name:
        payload["tool_name"] = message.tool_name
    if message.tool_calls:
        payload["tool_calls"] = [{"name": c.name, "arguments": c.arguments}
                                 for c in message.tool_calls]
    return payload


def cited_elsewhere(request: PageRequest) -> str | None:
    """The session ``request.around`` names when it is a message id of another session.

    >>> cited_elsewhere(PageRequest(session_id="root", around="root/agent-1:4"))
    'root/agent-1'
    >>> cited_elsewhere(PageRequest(session_id="root", around="root:4")) is None
    True
    """
    head, colon, tail = (request.around or "").strip().rpartition(":")
    cited = colon and head and head != request.session_id and tail.isascii() and tail.isdigit()
    return head if cited else None


async def _descends(store: SessionStore, session_id: str, ancestor_id: str
                    ) -> Result[bool, StoreUnavailable]:
    # Up the parents one at a time, stopping at the ancestor: a loop or a gap ends it.
    seen = {session_id}
    current = session_id
    while True:
        found = as_result(await store.sessions((current,)).awaitable())
        if isinstance(found, Failure):
            return Failure(found.failure())
        parent = next((s.parent_session_id for s in found.unwrap()), None)
        if parent is None or parent in seen:
            return Success(False)
        if parent == ancestor_id:
            return Success(True)
        seen.add(parent)
        current = parent


async def _to_read(store: SessionStore, request: PageRequest
                   ) -> Result[PageRequest, ReadError]:
    """``request``, or, when ``around`` cites a message of a session below the one asked
    (a search result's root, and its hit in a sub-agent or continuation, which
    ``matched_message_ids`` names), the same request of that session."""
    other = cited_elsewhere(request)
    if other is None:
        return Success(request)
    below = attrs.evolve(request, session_id=other)
    checked = check_request(below)  # what is wrong with the rest, before the store is read
    if isinstance(checked, Failure):
        return Failure(checked.failure())
    descends = await _descends(store, other, request.session_id)
    if isinstance(descends, Failure):
        return Failure(descends.failure())
    return Success(below) if descends.unwrap() else Success(request)


async def _not_found(store: SessionStore, session_id: str) -> str:
    """The line for ``session_id`` not stored, naming stored ids alike (none when the
    store cannot say: the session is not found either way)."""
    # A store written before the port named ids_alike (a library caller's own) has none:
    # it gives no hint, as a failing one does, not an AttributeError for a plain miss.
    alike_of = getattr(store, "ids_alike", None)
    if not isinstance(session_id, str) or not callable(alike_of):
        return not_found(session_id, ())  # a caller's number is looked up, and not found
    alike = as_result(await alike_of(session_id, HINTS).awaitable())
    return not_found(session_id, alike.value_or(()))


async def read_page(store: SessionStore, request: PageRequest
                    ) -> Result[SessionPage, ReadError]:
    """Read one page of ``request.session_id`` from ``store`` (reads only, writes nothing),
    or of the session below it whose message ``around`` cites."""
    to_read = await _to_read(store, request)
    if isinstance(to_read, Failure):
        return Failure(to_read.failure())
    request = to_read.unwrap()
    checked = check_request(request)
    if isinstance(checked, Failure):
        return Failure(checked.failure())
    found = as_result(await store.sessions((request.session_id,)).awaitable())
    if isinstance(found, Failure):
        return Failure(found.failure())
    if not found.unwrap():
        return Failure(NotFound(await _not_found(store, request.session_id)))
    session = found.unwrap()[0]
    checked_around = checked.unwrap()
    window = as_result(await store.message_window(WindowQuery(
        session_id=session.id, limit=request.limit, offset=request.offset or 0,
        around=checked_around)).awaitable())
    children = as_result(await store.children((session.id,)).awaitable())
    parents: Result[tuple[Session, ...], StoreUnavailable] = Success(())
    if session.parent_session_id is not None:
        parents = as_result(await store.sessions((session.parent_session_id,)).awaitable())
    for outcome in (window, children, parents):
        if isinstance(outcome, Failure):
            return Failure(outcome.failure())
    page = page_of(request, checked_around, window.unwrap())
    if isinstance(page, Failure):
        return Failure(page.failure())
    read = page.unwrap()
    # a session naming itself as parent is no child of its own
    kids = tuple(c for c in children.unwrap() if c.id != session.id)
    return Success(SessionPage(
        session=session, parent_id=session.parent_session_id,
        parent=next(iter(parents.unwrap()), None), children=kids,
        messages=read.messages, offset=read.offset, limit=request.limit, total=read.total))
