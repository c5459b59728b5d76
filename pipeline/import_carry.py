"""A copy of a session that goes on past it, stored as its continuation.

A Claude Code session copied into another project folder and resumed there (``claude
--resume`` from another directory, or the file copied by hand) is a second file holding
the session's id: its first messages are the stored session's, then it goes on. Kept
aside whole (``ID@NAME``), its shared messages were stored twice and every sync while
the person worked there was named as damaged input (exit 3). It is the conversation
carrying on, as a resume into a new file is (:mod:`~harkback.adapters.sources.replays`):
its messages past those the stored session holds are stored as a continuation of it,
``ID@NAME`` with the session as its parent, and the shared ones are left out (counted).
The file's mark says it left them out, so a sync reads it again should the session leave
the store (then it is stored whole).

>>> def msg(p, text, sid="s"): return Message(session_id=sid, position=p, role="user",
...                                           content=text)
>>> copy = Conversation(Session(id="s@b"), tuple(msg(p, t, "s@b") for p, t in enumerate("abc")))
>>> def same(a, b): return a.content == b.content
>>> went_on = continued(copy, {0: msg(0, "a"), 1: msg(1, "b")}, "s", same=same)
>>> went_on.session.parent_session_id, [(m.position, m.content) for m in went_on.messages]
('s', [(0, 'c')])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs

from harkback.stages.records import Conversation, Message, Session

COPIED_MESSAGE = "message copied from another file (stored there)"
"""What a shared message of a copy stored as a continuation is counted as, left out."""


def leading(read: Sequence[Message], stored: Mapping[int, Message],
            same: Callable[[Message, Message], bool]) -> int:
    """How many of the first messages ``read`` are the ``stored`` ones at their places
    (``same``: by role, time and text).

    >>> def msg(p, text): return Message(session_id="s", position=p, role="user",
    ...                                  content=text)
    >>> leading([msg(0, "a"), msg(1, "x")], {0: msg(0, "a"), 1: msg(1, "b")},
    ...         lambda a, b: a.content == b.content)
    1
    """
    count = 0
    for index, message in enumerate(read):
        there = stored.get(index)
        if there is None or not same(there, message):
            break
        count += 1
    return count


def continued(conversation: Conversation, stored: Mapping[int, Message], parent: str, *,
              same: Callable[[Message, Message], bool]) -> Conversation | None:
    """``conversation`` as a continuation of ``parent`` (whose messages are ``stored``):
    its messages past the first ones ``parent`` holds (``same``: whether a message read is
    a stored one), numbered from 0 (None when it shares none, or holds nothing more)."""
    shared = leading(conversation.messages, stored, same)
    if shared == 0 or shared >= len(conversation.messages):
        return None
    session_id = conversation.session.id
    rest = tuple(attrs.evolve(m, session_id=session_id, position=i)
                 for i, m in enumerate(conversation.messages[shared:]))
    times = [m.timestamp for m in rest if m.timestamp is not None]
    session: Session = attrs.evolve(
        conversation.session, parent_session_id=parent,
        started_at=min(times, default=conversation.session.started_at),
        ended_at=max(times, default=conversation.session.ended_at))
    return Conversation(session, rest)
