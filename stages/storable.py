"""What a store writes of a batch of conversations: each one's texts mended, its start
dated, and what no store can hold refused before anything is written. Every store's
ingest takes its batch from :func:`storable`, so all of them hold the same.

>>> from harkback.stages.records import Message, Session
>>> batch = storable([Conversation(Session(id="s"), (Message(
...     session_id="s", position=0, role="user", content="caf\\udce9", timestamp=5.0),))])
>>> batch[0].messages[0].content, batch[0].session.started_at
('caf�', 5.0)
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from harkback.stages.record_checks import briefly, unheld
from harkback.stages.records import Conversation


def storable(conversations: Iterable[Conversation]) -> tuple[Conversation, ...]:
    """What a store writes of ``conversations``: each
    :meth:`~harkback.stages.records.Conversation.mended` and :func:`dated`, one per session
    id (the last given wins, in the place of the first).

    Every store takes its batch from here, so all of them hold the same texts: SQLite and
    PostgreSQL cannot encode a lone surrogate (a library caller's own reader may leave
    one), and the memory store must not keep what the others cannot. For the same reason
    a text field holding something else (``None``, a number) is refused here, before any
    store writes, with a ``TypeError`` naming the field: memory kept it, SQLite failed as
    "store unavailable" and PostgreSQL stored ``5`` as ``'5'``. A NUL character in a key
    or filter (SQLite stored it, then could not read it) and a position no store holds are
    refused too (``ValueError``, :mod:`~harkback.stages.record_checks`): nothing is written.

    >>> from harkback.stages.records import Session
    >>> [c.session.id for c in storable([Conversation(Session(id="a\\udc80")),
    ...                                  Conversation(Session(id="b"))])]
    ['a\ufffd', 'b']
    >>> storable([Conversation(Session(id="s", title=None))])
    Traceback (most recent call last):
    TypeError: Session.title must be text (str), got None (session 's')
    >>> storable([Conversation(Session(id="s\\x00x"))])
    Traceback (most recent call last):
    ValueError: id: a session id cannot hold a NUL character (session 's\\x00x')
    """
    if isinstance(conversations, Conversation):
        raise TypeError("ingest takes a list of Conversation records, got one "
                        "Conversation: ingest([conversation])")
    batch: dict[str, Conversation] = {}
    for conversation in conversations:
        if not isinstance(conversation, Conversation):  # a JSON line's dict, a Session
            raise TypeError("ingest takes Conversation records (a Session and its "
                            f"Messages), got {type(conversation).__name__}")
        conversation = dated(conversation.mended())
        held = unheld(conversation)
        if held is not None:
            raise ValueError(f"{held[0]}: {held[1]} (session {briefly(conversation.session.id)})")
        batch[conversation.session.id] = conversation
    return tuple(batch.values())


def dated(conversation: Conversation) -> Conversation:
    """``conversation`` with a start: a session given none starts at its first message's
    time (or, with no message time, at its end), so ``--since``/``--until`` and the
    newest-first listing place it rather than leave it out unseen.

    >>> from harkback.stages.records import Message, Session
    >>> talk = Conversation(Session(id="s"), (Message(session_id="s", position=0,
    ...     role="user", content="hi", timestamp=50.0),))
    >>> dated(talk).session.started_at, dated(Conversation(Session(id="e", ended_at=9.0))
    ...                                          ).session.started_at
    (50.0, 9.0)
    """
    if conversation.session.started_at is not None:
        return conversation
    times = [m.timestamp for m in conversation.messages if m.timestamp is not None]
    start = min(times) if times else conversation.session.ended_at
    if start is None:
        return conversation
    return Conversation(attrs.evolve(conversation.session, started_at=start),
                        conversation.messages)
