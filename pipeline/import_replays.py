"""A resume's copy of the earlier session, compared with what the store holds of it.

A Claude Code session resumed into a new file (or forked), and a Codex fork, first copy the
earlier session's lines; reading it leaves them out when that session is stored or being
imported (:mod:`~harkback.adapters.sources.replays`), and the new session continues it. They
were left out unseen: a copy holding other messages than the store (the earlier file changed
since, a stored text from another copy) lost them, and one holding more (the earlier
file deleted before its last lines were imported) lost those. So each
:class:`~harkback.adapters.sources.importing.Replay` is compared with the store (role, time
and text, as :func:`~harkback.pipeline.import_claims.weigh` compares two files; a copy
stamped as it was written, Codex's, by role, text and order: :func:`in_order`), with each
session it copies in turn (a resume of a resume copies both; each is stored with its project
line under its own first request, taken away to compare; a Codex fork of a fork holds the
parent as it was when the first fork was made: :mod:`~harkback.pipeline.replay_cuts`):

- every copied message held there: left out, as read;
- some going on past them: those the store lacks are kept, first in the new session (still
  its continuation), counted;
- one where the store holds another message: while a file in the folder still holds the
  earlier session, left out (that file's text stands; the store's may be an older
  harkback's reading of it); once none does, the new session is stored whole, as read (no
  continuation: the two disagree), and named like damaged input (exit 3).

>>> def msg(p, text): return Message(session_id="s", position=p, role="user", content=text)
>>> bare([msg(0, "hi\\n\\n[project: /w]"), msg(1, "[project: /x]")])[0].content
'hi'
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources.importing import ImportUnit, Replay, Tally
from harkback.adapters.sources.replays import COPIED
from harkback.pipeline.import_claims import message_key, weigh
from harkback.pipeline.replay_cuts import as_copied
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore
from harkback.stages.project_note import without_note
from harkback.stages.records import Conversation, Message
from harkback.stages.stage import as_result

KEPT = "message copied from an earlier session (not stored there: kept)"
"""What a copied message the store lacks is counted as, kept in the new session."""


def bare(messages: Sequence[Message]) -> tuple[Message, ...]:
    """``messages`` numbered from 0, the project line under the first request holding one
    taken away (a copy may open at another request than the session it copies; a session
    stored with the copied messages the store lacked first holds it under its own first
    request, after them).

    >>> def msg(p, text): return Message(session_id="s", position=p, role="user", content=text)
    >>> [m.content for m in bare([msg(4, "kept"), msg(5, "own\\n\\n[project: /w]")])]
    ['kept', 'own']
    """
    found: list[Message] = []
    noted = False
    for position, message in enumerate(messages):
        content = message.content
        if not noted and message.role == "user":
            content = without_note(content)
            noted = content != message.content
        found.append(attrs.evolve(message, position=position, content=content))
    return tuple(found)


async def settled_replays(unit: ImportUnit, store: SessionStore
                          ) -> Result[ImportUnit, StoreUnavailable]:
    """``unit`` with each replay's copy compared with the store (see above)."""
    if not unit.replays:
        return Success(unit)
    batch = {c.session.id: c for c in unit.conversations}
    wanted = sorted({s for r in unit.replays for s in r.sources if s not in batch})
    found = as_result(await store.messages(wanted).awaitable())
    if isinstance(found, Failure):
        return Failure(found.failure())
    held: dict[str, list[Message]] = {}
    for message in found.unwrap():
        held.setdefault(message.session_id, []).append(message)
    for session_id, conversation in batch.items():  # read in this unit: as it is stored now
        held[session_id] = list(conversation.messages)
    tally = Tally(named=list(unit.skipped), skips=unit.skips)
    tally.merge(unit.left_out)
    for replay in unit.replays:
        read = batch.get(replay.whole.session.id)
        if read is None or any(s not in batch for s in replay.pending):
            continue  # a file read later in this import holds them: it stores them
        # Each session's project line taken away: one a resume continues is stored with
        # its own under its first request, which the copy holds without it.
        earlier = [bare(sorted(held.get(s, ()), key=lambda m: m.position))
                   for s in replay.sources]
        if any(earlier):  # else not stored yet: its file is read with this
            batch[read.session.id] = _settled(replay, read, earlier, tally)
    return Success(attrs.evolve(unit, conversations=tuple(batch.values()),
                                left_out=tally.items(), skipped=tuple(tally.named),
                                skips=tally.skips, replays=()))


def _settled(replay: Replay, read: Conversation, stored: Sequence[Sequence[Message]],
             tally: Tally) -> Conversation:
    """The session ``read`` (its copied lines left out) as its copy compares with the
    messages ``stored`` of each session it copies."""
    count = len(replay.whole.messages) - len(read.messages)
    if count <= 0:
        return read
    copied = bare(replay.whole.messages[:count])
    if replay.timed:
        earlier = bare([m for messages in stored for m in messages])
    else:  # a copy stamped as it was written: its order stands for its times
        copied, earlier = in_order(copied), in_order(bare(as_copied(copied, stored)))
    standing = weigh(copied, {m.position: m for m in earlier})
    # A copy of a session whose file is still in the folder says nothing that file does
    # not: it differs only from what the store made of it (an older harkback stored slash
    # commands as their tags, and keeps that text until the file changes), so it stays
    # left out. Once that file is gone, the copy is all there is of them.
    if standing == "within" or (standing == "other" and replay.filed):
        return read
    # Not all stored there: the lines read as such are counted as what became of them.
    _uncount(tally, replay.counted, replay.lines)
    if standing == "other":
        tally.at(replay.path)
        tally.skip("copied lines differ", f"the lines {read.session.id!r} copies from "
                   f"{', '.join(map(repr, replay.sources))} are not those stored there; "
                   "stored whole, as read", "kept")
        return replay.whole
    keys = {message_key(m) for m in earlier} | {message_key(m, redacted=True) for m in earlier}
    lacking = [read_as for read_as, m in zip(bare(replay.whole.messages[:count]), copied,
                                              strict=True)
               if message_key(m) not in keys and message_key(m, redacted=True) not in keys]
    tally.add(COPIED, count - len(lacking))
    tally.add(KEPT, len(lacking))
    session_id = read.session.id
    return Conversation(read.session, tuple(
        attrs.evolve(m, session_id=session_id, position=i)
        for i, m in enumerate((*lacking, *read.messages))))


def in_order(messages: Sequence[Message]) -> tuple[Message, ...]:
    """``messages`` (numbered from 0) each timed by its place: compared so, two copies agree
    where role, text and order do, whenever each was written.

    >>> [m.timestamp for m in in_order(bare([Message(session_id="s", position=4, role="user",
    ...                                              timestamp=9.0)]))]
    [0.0]
    """
    return tuple(attrs.evolve(m, timestamp=float(m.position)) for m in messages)


def _uncount(tally: Tally, reason: str, count: int) -> None:
    """``count`` fewer of ``reason`` in ``tally`` (none left: not named at all).

    >>> tally = Tally({"a": 3}); _uncount(tally, "a", 3); tally.counts
    {}
    """
    left = tally.counts.get(reason, 0) - count
    if left > 0:
        tally.counts[reason] = left
    else:
        tally.counts.pop(reason, None)
