"""A window of one session's messages: what ``harkback show`` and the MCP ``read_session``
tool print a page of, read from a store without reading the rest of the session.

A window is ``limit`` messages in position order, from the ``offset``-th (0 is the first,
whatever its position), or centred on the message at position ``around`` (shifted to stay
full near either end of the session). The store answers with the window, how many
messages the session holds, and where the message ``around`` names is (None: nowhere),
from its index on (session, position) rather than from every message of the session.

>>> from harkback.stages.records import Message
>>> chat = [Message(session_id="s", position=p, role="user", content="") for p in range(9)]
>>> window = window_of(chat, WindowQuery(session_id="s", limit=3, around=7))
>>> [m.position for m in window.messages], window.offset, window.total, window.around_index
([6, 7, 8], 6, 9, 7)
>>> page_bounds(total=100, limit=20, around_index=50)
(40, 60)
>>> page_bounds(total=100, limit=20, around_index=95)
(80, 100)
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from harkback.stages.records import Message


@attrs.frozen(kw_only=True)
class WindowQuery:
    """Which messages of ``session_id`` to read: ``limit`` of them from index ``offset``,
    or, when ``around`` (a position) is given, the ``limit`` centred on that message."""

    session_id: str
    limit: int = attrs.field(validator=attrs.validators.ge(1))
    offset: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    around: int | None = None


@attrs.frozen(kw_only=True)
class MessageWindow:
    """A window of one session's messages, in position order: the first at index ``offset``
    of the session's ``total`` messages; ``around_index`` is the index of the message the
    query's ``around`` named (None when it named none, or the session lacks it: then the
    window is empty)."""

    messages: tuple[Message, ...]
    offset: int
    total: int
    around_index: int | None = None


def page_bounds(*, total: int, limit: int, offset: int = 0,
                around_index: int | None = None) -> tuple[int, int]:
    """The ``[start, stop)`` indices of a page: from ``offset``, or centred on
    ``around_index`` (shifted to stay full near either end of the session).

    >>> page_bounds(total=100, limit=20, around_index=3)
    (0, 20)
    >>> page_bounds(total=5, limit=20, around_index=4), page_bounds(total=5, limit=2, offset=4)
    ((0, 5), (4, 5))
    """
    start = offset
    if around_index is not None:
        start = max(0, min(around_index - limit // 2, total - limit))
    return start, min(total, start + limit)


def window_start(query: WindowQuery, total: int, around_index: int | None) -> int:
    """The index the window of ``query`` starts at, in a session of ``total`` messages
    where the message ``query.around`` names is at ``around_index`` (``total`` when it is
    named and missing: nothing is read).

    >>> window_start(WindowQuery(session_id="s", limit=4, around=9), 100, 50)
    48
    >>> window_start(WindowQuery(session_id="s", limit=4, around=9), 100, None)
    100
    """
    if query.around is None:
        return query.offset
    if around_index is None:
        return total
    return page_bounds(total=total, limit=query.limit, around_index=around_index)[0]


def window_of(messages: Sequence[Message], query: WindowQuery) -> MessageWindow:
    """The window of ``query`` cut from all of a session's ``messages`` in position order
    (the in-memory store holds them all; the others read only the window)."""
    around_index = None if query.around is None else next(
        (i for i, m in enumerate(messages) if m.position == query.around), None)
    start = window_start(query, len(messages), around_index)
    return MessageWindow(messages=tuple(messages[start:start + query.limit]), offset=start,
                         total=len(messages), around_index=around_index)
