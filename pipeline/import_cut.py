"""A file read shorter than when last read keeps the stored messages past its new end.

Agents only append to a transcript: one that is shorter than when it was last read is
damaged, rotated, or an older copy put back. Read as it is, its sessions would lose
every stored message past the cut (``149000 removed``), against "deleted at the source
means kept". :func:`kept_past_cut` puts those messages back into the copies read, so the
store keeps them (found and shown as before) and the comparison counts them unchanged;
a ``sync --prune`` mirrors the file instead, as it removes sessions whose files are gone.

>>> from harkback.stages.records import Message, Session
>>> hi = Message(session_id="s", position=0, role="user", content="hi")
>>> read = Conversation(Session(id="s"), (hi,))
>>> cut = [("/t.jsonl", ("s",), "shorter")]
>>> kept = kept_past_cut([read], [hi, attrs.evolve(hi, position=1)], cut)
>>> [m.position for m in kept.conversations[0].messages], kept.kept
([0, 1], 1)
>>> kept.notes
('/t.jsonl is shorter than when last read: 1 stored message(s) kept',)
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources.replays import Cut
from harkback.pipeline.terminal import one_line
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message, Session
from harkback.stages.stage import as_result


@attrs.frozen(kw_only=True)
class Kept:
    """The conversations to store, the messages past a cut they keep, and a note per file."""

    conversations: tuple[Conversation, ...]
    kept: int = 0
    notes: tuple[str, ...] = ()


def kept_past_cut(batch: Sequence[Conversation], stored: Sequence[Message],
                  cut: Sequence[tuple[str, tuple[str, ...], Cut]], *, keep: bool = True,
                  sessions: Sequence[Session] = (), behind: Sequence[Message] = ()) -> Kept:
    """``batch`` with each session of a ``cut`` file (its path, session ids, and why it may
    hold less: :data:`~harkback.adapters.sources.replays.Cut`) holding the ``stored``
    messages at positions its copy no longer has; with ``keep`` False (``sync --prune``)
    ``batch`` as read. A file shorter now, or new to the source and holding less than the
    store (an older copy, a backup imported to recover), is named (kept or removed) and its
    kept messages counted; one cut before and read again, grown, keeps them unsaid. A
    message at a position the copy still has is the copy's (updated, as ever). A session
    ``sessions`` (those stored) hold from another source is replaced, not mixed with it.
    ``behind`` are the stored messages of sessions a file read shorter no longer yields at
    all (emptied): left in the store as they are, named and counted kept, ``sync --prune``
    too (it removes a session only when its file is gone)."""
    if not cut:
        return Kept(conversations=tuple(batch))
    owner = {sid: path for path, ids, _ in cut for sid in ids}
    said = {path: why for path, _, why in cut if why != "once"}
    # Two sources that use one id (the import names the replacing) are two conversations.
    source_of = {s.id: s.source for s in sessions}
    held: dict[str, set[int]] = {}
    for conversation in batch:
        session = conversation.session
        if session.id in owner and source_of.get(session.id, session.source) == session.source:
            held.setdefault(conversation.session.id, set()).update(
                m.position for m in conversation.messages)
    past: dict[str, list[Message]] = {}
    for message in stored:
        if message.session_id in held and message.position not in held[message.session_id]:
            past.setdefault(message.session_id, []).append(message)
    by_file: dict[str, int] = {}
    for sid, messages in past.items():
        if owner[sid] in said:
            by_file[owner[sid]] = by_file.get(owner[sid], 0) + len(messages)
    left: dict[str, int] = {}
    for message in behind:
        if owner.get(message.session_id) in said and message.session_id not in held:
            left[owner[message.session_id]] = left.get(owner[message.session_id], 0) + 1
    if keep:
        by_file = {path: by_file.get(path, 0) + left.get(path, 0) for path in {**by_file, **left}}
    what = "kept" if keep else "removed (sync --prune)"
    notes = tuple(f"{one_line(path)} {_WHY[said[path]]}: {n} stored message(s) {what}"
                  for path, n in by_file.items())
    if not keep:
        notes += tuple(f"{one_line(path)} {_WHY[said[path]]}: {n} stored message(s) kept"
                       for path, n in left.items())
        return Kept(conversations=tuple(batch), kept=sum(left.values()), notes=notes)
    return Kept(conversations=tuple(_with_past(c, past[c.session.id]) if c.session.id in past
                                    else c for c in batch),
                kept=sum(by_file.values()), notes=notes)


def _with_past(conversation: Conversation, past: Sequence[Message]) -> Conversation:
    """``conversation`` holding the stored messages ``past`` its end, and ending when the
    last of them was said (an older copy read ended it there: the session moved back in
    ``recent`` while every message stayed)."""
    times = [m.timestamp for m in past if m.timestamp is not None]
    session = conversation.session
    ended = max((t for t in (session.ended_at, *times) if t is not None), default=None)
    return Conversation(attrs.evolve(session, ended_at=ended), tuple(
        sorted((*conversation.messages, *past), key=lambda m: m.position)))


async def left_behind(cut: Sequence[tuple[str, tuple[str, ...], Cut]], read: Sequence[str],
                      store: SessionStore, source: str
                      ) -> Result[tuple[Message, ...], StoreUnavailable]:
    """The stored messages of the sessions of ``source`` that files read shorter (``cut``)
    held and no longer yield (not ``read``): a transcript emptied to nothing."""
    yielded = set(read)
    ids = list(dict.fromkeys(sid for _, held, why in cut if why in ("shorter", "rewritten")
                             for sid in held if sid not in yielded))
    if not ids:
        return Success(())
    sessions = as_result(await store.sessions(ids).awaitable())
    if isinstance(sessions, Failure):
        return Failure(sessions.failure())
    ours = [s.id for s in sessions.unwrap() if s.source == source]
    if not ours:
        return Success(())
    return as_result(await store.messages(ours).awaitable()).map(tuple)


_WHY = {"shorter": "is shorter than when last read",
        "rewritten": "holds other lines than when last read (rewritten)",
        "new": "holds less of its session than the store (an older copy?)"}
