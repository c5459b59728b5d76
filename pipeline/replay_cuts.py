"""Where a copy of copies passes from one earlier session to the next.

A Codex fork of a fork copies the first fork's rollout, which holds its own copy of the
parent as the parent was when the first fork was made; the parent then goes on (the normal
case: a fork is made from a session still in use). The store holds the parent with those
later messages, and the first fork as its continuation (its own messages only), so the
copy is no prefix of the two stored one after the other: compared so, message by message
in order, it read as other messages (stored whole, every copied message twice, exit 3).
:func:`as_copied` cuts each session but the last where the copy passes to the next one,
so the copy lines up with what the store holds of them.

>>> from harkback.stages.records import Message
>>> def said(texts): return [Message(session_id="s", position=n, role="user", content=t)
...                          for n, t in enumerate(texts)]
>>> [m.content for m in as_copied(said("abxy"), [said("abcd"), said("xy")])]
['a', 'b', 'x', 'y']
"""

from __future__ import annotations

from collections.abc import Sequence

from harkback.stages.records import Message
from harkback.stages.redact.scrub import redact


def as_copied(copied: Sequence[Message], stored: Sequence[Sequence[Message]]
              ) -> list[Message]:
    """The messages ``stored`` of each session a copy holds (oldest first), each session
    but the last cut where ``copied`` passes to the next one; all of them one after the
    other when the copy passes nowhere so (it is then compared as it is, and differs).

    >>> said = lambda texts: [Message(session_id="s", position=n, role="user", content=t)
    ...                       for n, t in enumerate(texts)]
    >>> [m.content for m in as_copied(said("abce"), [said("abcd"), said("ce")])]
    ['a', 'b', 'c', 'e']
    """
    cut = _cut(copied, 0, stored)
    return cut if cut is not None else [m for messages in stored for m in messages]


def _cut(copied: Sequence[Message], start: int, stored: Sequence[Sequence[Message]]
         ) -> list[Message] | None:
    """``stored`` as ``copied`` holds them from ``start`` (None: it holds them so nowhere)."""
    if not stored:
        return []
    first, rest = stored[0], stored[1:]
    if not rest:  # the last: whatever the copy holds past it is weighed as such
        return list(first)
    common = 0
    while (common < len(first) and start + common < len(copied)
           and _same(copied[start + common], first[common])):
        common += 1
    after = next((messages[0] for messages in rest if messages), None)
    # The longest cut first; a later message of the first session may say what the next
    # one's first does (the same request typed in both), so each cut that could be is tried.
    for held in range(common, -1, -1):
        at = start + held
        if at == len(copied) or after is None or _same(copied[at], after):
            tail = _cut(copied, at, rest)
            if tail is not None:
                return [*first[:held], *tail]
    return None


def _same(read: Message, stored: Message) -> bool:
    """Whether ``read`` says what ``stored`` does (its text perhaps redacted otherwise)."""
    return read.role == stored.role and (
        read.content == stored.content or redact(read.content)[0] == redact(stored.content)[0])
