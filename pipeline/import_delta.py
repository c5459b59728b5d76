"""How a batch of conversations differs from what the store holds (:func:`compare`), and
those counts set right by what the write then found (:func:`settled`).

>>> compare([], [], []).sessions_added
0
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from harkback.stages.ports import IngestReport
from harkback.stages.records import Conversation, Message, Session
from harkback.stages.storable import dated
from harkback.stages.tails import Tail, tail_of


@attrs.frozen(kw_only=True)
class Delta:
    """How a batch of conversations differs from what the store holds."""

    changed: tuple[Conversation, ...] = ()
    sessions_added: int = 0
    sessions_updated: int = 0
    sessions_unchanged: int = 0
    messages_added: int = 0
    messages_updated: int = 0
    messages_removed: int = 0
    messages_kept: int = 0
    """Stored messages past the end of a file read shorter, kept (:mod:`.import_cut`)."""
    cut: tuple[str, ...] = ()
    """Notes naming each file read shorter than when last read."""
    replaced: tuple[str, ...] = ()
    """Notes naming each stored session that a copy from another source replaced."""
    raced: int = 0
    """Sessions another import stored between this one's comparison and its write
    (:func:`settled`), counted among the updated ones."""
    stored: frozenset[str] = frozenset()
    """The ids of the sessions written (added, updated, or stored again after another
    process removed them: :mod:`.import_restore`): what a sync embeds."""
    read: frozenset[str] = frozenset()
    """The ids of the sessions compared, written or found stored unchanged: what an ingest
    or import embeds (those already embedded cost a look-up), so that one run again
    embeds what an earlier run stopped before, or stored without an embedder."""

    def plus(self, other: Delta) -> Delta:
        """The counts and notes of both added up (``changed`` is left empty: it is per batch).

        >>> Delta(sessions_added=1).plus(Delta(sessions_added=2, messages_added=3)).messages_added
        3
        """
        return Delta(**{name: getattr(self, name) + getattr(other, name) for name in COUNTS},
                     stored=self.stored | other.stored, read=self.read | other.read)


COUNTS = tuple(a.name for a in attrs.fields(Delta) if a.name not in ("changed", "stored", "read"))
"""The names of what :meth:`Delta.plus` adds up."""


def compare(batch: Sequence[Conversation], stored: Sequence[Session],
            stored_messages: Sequence[Message]) -> Delta:
    """Compare ``batch`` with the stored sessions and messages of the same ids.

    A message is identified by its session and position; the last conversation of an
    id in ``batch`` wins, as in the store's ingest. A session id stored from another
    source is replaced too, but never without a word: two sources that use the same id
    (two ingest files numbering their sessions 1, 2, 3) would otherwise lose one silently.

    >>> from harkback.stages.records import Message, Session
    >>> old = Message(session_id="s", position=0, role="user", content="hi")
    >>> new = Conversation(Session(id="s"), (old, attrs.evolve(old, position=1)))
    >>> d = compare([new], [Session(id="s")], [old])
    >>> d.sessions_updated, d.messages_added, d.messages_updated
    (1, 1, 0)
    """
    sessions = {s.id: s for s in stored}
    before: dict[str, dict[int, Message]] = {}
    for message in stored_messages:
        before.setdefault(message.session_id, {})[message.position] = message
    delta = Delta()
    changed: list[Conversation] = []
    replaced: list[str] = []
    # Dated as the store dates it (a session given no start starts at its first
    # message): compared undated, it differed from its stored self on every read.
    for conversation in {c.session.id: dated(c) for c in batch}.values():
        session = conversation.session
        held = sessions.get(session.id)
        if held is not None and held.source != session.source:
            replaced.append(f"session {session.id!r} was stored from source {held.source!r}; "
                            f"the copy from source {session.source!r} replaced it")
        old = before.get(session.id, {})
        now = {m.position: m for m in conversation.messages}
        added = sum(1 for p in now if p not in old)
        updated = sum(1 for p, m in now.items() if p in old and old[p] != m)
        removed = sum(1 for p in old if p not in now)
        is_new = session.id not in sessions
        differs = is_new or sessions[session.id] != session or bool(added + updated + removed)
        delta = delta.plus(Delta(
            sessions_added=int(is_new), sessions_updated=int(differs and not is_new),
            sessions_unchanged=int(not differs), messages_added=added, messages_updated=updated,
            messages_removed=removed))
        if differs:
            changed.append(conversation)
    return attrs.evolve(delta, changed=tuple(changed), replaced=tuple(replaced))


def split_tails(changed: Sequence[Conversation], stored: Sequence[Session],
                stored_messages: Sequence[Message]) -> tuple[tuple[Tail, ...],
                                                             tuple[Conversation, ...]]:
    """``changed`` (compared with ``stored``, as :func:`compare` gives it) split in the tails
    of stored sessions that kept some of their first messages, and the rest: new sessions,
    sessions that changed from their first message, or whose source changed (written whole).

    >>> from harkback.stages.records import Message
    >>> hi = Message(session_id="s", position=0, role="user", content="hi")
    >>> grown = Conversation(Session(id="s"), (hi, attrs.evolve(hi, position=1)))
    >>> tails, whole = split_tails([grown], [Session(id="s")], [hi])
    >>> [(t.since, t.kept, len(t.conversation.messages)) for t in tails], whole
    ([(1, 1, 1)], ())
    """
    sources = {s.id: s.source for s in stored}
    before: dict[str, dict[int, Message]] = {}
    for message in stored_messages:
        before.setdefault(message.session_id, {})[message.position] = message
    tails: list[Tail] = []
    whole: list[Conversation] = []
    for conversation in changed:
        session = conversation.session
        tail = (tail_of(conversation, before.get(session.id, {}))
                if sources.get(session.id, object()) == session.source else None)
        if tail is not None and tail.kept:
            tails.append(tail)
        else:
            whole.append(conversation)
    return tuple(tails), tuple(whole)


def settled(delta: Delta, compared: Sequence[Session], report: IngestReport) -> Delta:
    """``delta`` counted as the write found the store (``report``): a session that was not
    stored when it was compared (``compared``), but was when written, was stored meanwhile
    by another import (of the same history, run at the same time). This run's copy
    replaced it: it is counted updated, its messages too, not added twice
    (:func:`raced_note` says so). The ids of the sessions written are kept (``stored``).

    >>> from harkback.stages.records import Message
    >>> chat = Conversation(Session(id="s"), (Message(session_id="s", position=0,
    ...                                                role="user", content="hi"),))
    >>> d = settled(compare([chat], [], []), [], IngestReport(updated=1, replaced={"s"}))
    >>> d.sessions_added, d.sessions_updated, d.messages_added, d.messages_updated
    (0, 1, 0, 1)
    """
    delta = attrs.evolve(delta, stored=delta.stored | {c.session.id for c in delta.changed})
    before = {s.id for s in compared}
    raced = [c for c in delta.changed
             if c.session.id in report.replaced and c.session.id not in before]
    if not raced:
        return delta
    late = compare(raced, [], [])
    return attrs.evolve(
        delta, sessions_added=delta.sessions_added - late.sessions_added,
        sessions_updated=delta.sessions_updated + late.sessions_added,
        messages_added=delta.messages_added - late.messages_added,
        messages_updated=delta.messages_updated + late.messages_added,
        raced=delta.raced + len(raced))


def raced_note(delta: Delta) -> tuple[str, ...]:
    """The note an import's outcome ends with when another import stored some of its
    sessions at the same time (see :func:`settled`).

    >>> raced_note(Delta(raced=2))[0][:59]
    '2 session(s) were stored by another import running at the s'
    """
    if not delta.raced:
        return ()
    return (f"{delta.raced} session(s) were stored by another import running at the same "
            "time; this run's copy replaced them (counted updated, not added)",)
