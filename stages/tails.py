"""A stored session that only grew, written by its tail: the port a store may offer so that a
sync of a huge transcript with one appended line writes that line, not the whole session.

:func:`tail_of` finds where a new copy of a session first differs from the stored one
(:class:`Tail`); a :class:`TailWriter` writes from there on, leaving the unchanged messages
before it as they are. The result is the store an ``ingest`` of the whole conversation
gives (tests/adapters/stores/store_contract.py checks it on every backend).

>>> from harkback.stages.records import Message, Session
>>> hi = Message(session_id="s", position=0, role="user", content="hi")
>>> new = Conversation(Session(id="s"), (hi, attrs.evolve(hi, position=1, content="yes")))
>>> tail = tail_of(new, {0: hi})
>>> tail.since, tail.kept, [m.content for m in tail.conversation.messages]
(1, 1, ['yes'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import IngestReport
from harkback.stages.records import Conversation, Message
from harkback.stages.storable import storable


@attrs.frozen(kw_only=True)
class Tail:
    """A stored session's new copy from position ``since`` on: ``conversation`` holds the
    session (as it is now) and its messages at positions ``since`` and after; ``below``,
    the messages the store held below ``since`` when compared (by position), equal to the
    new copy's. The write checks the store still holds them."""

    conversation: Conversation
    since: int
    below: tuple[Message, ...]

    @property
    def kept(self) -> int:
        """How many messages below ``since`` the tail keeps."""
        return len(self.below)


def tail_of(conversation: Conversation, stored: Mapping[int, Message]) -> Tail:
    """The part of ``conversation`` that differs from its ``stored`` messages (by position):
    every message from the first position where a message was added, changed or removed.

    >>> from harkback.stages.records import Message, Session
    >>> hi = Message(session_id="s", position=0, role="user", content="hi")
    >>> tail_of(Conversation(Session(id="s"), (hi,)), {0: hi, 1: hi}).since
    1
    """
    now = {m.position: m for m in conversation.messages}
    differ = [p for p, m in now.items() if stored.get(p) != m]
    differ += [p for p in stored if p not in now]
    # Nothing differs: only the session row may have changed; the tail starts past the end.
    since = min(differ) if differ else max((*now, *stored), default=-1) + 1
    return Tail(conversation=Conversation(conversation.session, tuple(
        m for m in conversation.messages if m.position >= since)), since=since,
        below=tuple(stored[p] for p in sorted(stored) if p < since))


def mended_tails(tails: Sequence[Tail]) -> tuple[Tail, ...]:
    """What a store writes of ``tails``: each conversation as
    :func:`~harkback.stages.storable.storable` makes it (texts mended, refused when not
    text), one tail per session id (the last given wins)."""
    last = {t.conversation.session.id: t for t in tails}
    mended = storable(t.conversation for t in last.values())
    return tuple(attrs.evolve(t, conversation=c) for t, c in zip(last.values(), mended,
                                                                  strict=True))


@runtime_checkable
class TailWriter(Protocol):
    """A store that writes sessions by their :class:`Tail` (the SQLite, PostgreSQL and
    memory stores; a store without it is written whole by ``ingest``)."""

    def ingest_tails(self, tails: Sequence[Tail]
                     ) -> FutureResult[IngestReport | None, StoreUnavailable]:
        """Write every tail in one transaction: each session's row (its title indexed as
        by ``ingest``) and its messages from ``since`` on replace what was stored there,
        as ``ingest`` of the whole session would (a message whose searchable text is
        unchanged keeps its index row, and its vectors unless its content changed); the
        messages below ``since`` stay as they are. When a tail's session is not stored,
        or holds below ``since`` other messages than the tail's ``below`` (another writer
        changed one since it was compared, if only its text), nothing is written and the
        result is None."""
        ...
