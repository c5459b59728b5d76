"""Where a transcript's messages are stored once it was cut shorter and written on.

A file read shorter than when last read keeps its stored messages past the cut
(:mod:`~harkback.pipeline.import_cut`). Its mark then remembers, per session, the stored
places still to be told apart (``kept``: from the copy's end to the store's). When the
file grows into them, its message there is compared with the stored one: the same message
(an interrupted copy, finished) and the file goes on as before; another (an older copy
restored while the agent keeps writing) and the file's messages from there on are stored
after the kept ones (``from``: pairs of a file position and the stored position it goes
to), so nothing kept is overwritten, or where the store holds them already (a copy read
from elsewhere). A file read shorter, rewritten or new to the source is compared from its
first message (it may have been cut and written on since). A message is told by its role
and time (its text may read otherwise now: redacted since). Each read applies the pairs
again; ``sync --prune``, which mirrors the file, drops them.

>>> from harkback.stages.records import Message, Session
>>> def msg(p, text): return Message(session_id="s", position=p, role="user", content=text)
>>> stored = [msg(0, "a"), msg(1, "b"), msg(2, "c")]
>>> cut = placed_anew([Conversation(Session(id="s"), (msg(0, "a"),))], stored,
...                   [Mark(item="t", fingerprint='1:1|{"cut": true}', session_ids=("s",))], {})
>>> cut.marks[0].fingerprint
'1:1|{"cut": true, "places": {"s": {"kept": [1, 3]}}}'
>>> on = placed_anew([Conversation(Session(id="s"), (msg(0, "a"), msg(1, "new")))], stored,
...                  [Mark(item="t", fingerprint='2:2|{"cut": true}', session_ids=("s",))],
...                  {"t": cut.marks[0]})
>>> [(m.position, m.content) for m in on.conversations[0].messages]
[(0, 'a'), (3, 'new')]
>>> on.marks[0].fingerprint
'2:2|{"cut": true, "places": {"s": {"from": [[1, 3]]}}}'
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import TypeGuard

import attrs

from harkback.adapters.sources.replays import fingerprint_of, lineage_of, marked
from harkback.stages.imports import Mark
from harkback.stages.records import Conversation, Message, Session


@attrs.frozen(kw_only=True)
class Placed:
    """The conversations with their messages at the places they are stored, and the marks
    remembering those places."""

    conversations: tuple[Conversation, ...]
    marks: tuple[Mark, ...]


@attrs.frozen
class Places:
    """One session's places: file positions from which messages are stored elsewhere
    (``pairs``), and the stored range whose messages are kept but not yet told apart from
    the file's (``kept``)."""

    pairs: tuple[tuple[int, int], ...] = ()
    kept: tuple[int, int] | None = None

    def of(self, position: int) -> int:
        """The stored position of the file's message at ``position``.

        >>> Places(((2, 10), (5, 20))).of(1), Places(((2, 10), (5, 20))).of(3)
        (1, 11)
        """
        start, to = 0, 0
        for at, goes in self.pairs:
            if at > position:
                break
            start, to = at, goes
        return to + position - start

    def as_json(self) -> dict[str, list[int] | list[list[int]]]:
        """The places as the mark keeps them."""
        return {**({"from": [list(p) for p in self.pairs]} if self.pairs else {}),
                **({"kept": list(self.kept)} if self.kept else {})}

    @staticmethod
    def from_json(found: object) -> Places:
        """Places read back from a mark (none from anything else)."""
        if not isinstance(found, dict):
            return Places()
        pairs = tuple((p[0], p[1]) for p in found.get("from", ()) if _two(p))
        kept = found.get("kept")
        return Places(pairs, (kept[0], kept[1]) if _two(kept) else None)


def _two(found: object) -> TypeGuard[list[int]]:
    return (isinstance(found, list) and len(found) == 2
            and all(isinstance(n, int) and n >= 0 for n in found))


def placed_anew(batch: Sequence[Conversation], stored: Sequence[Message],
                marks: Sequence[Mark], before: Mapping[str, Mark], *, keep: bool = True,
                sessions: Sequence[Session] = (), compared: Collection[str] = (),
                fresh: Collection[str] = ()) -> Placed:
    """``batch`` with the messages of files read once cut (their ``marks`` say so) at the
    places they are stored, and ``marks`` remembering them (their earlier marks are
    ``before``); with ``keep`` False (``sync --prune``, which mirrors the file) ``batch`` as
    read and no places kept. A session ``sessions`` hold from another source is left; one
    a file no longer yields at all (``stored`` holds it: emptied) keeps all it held; one of
    a file read shorter or rewritten (``compared``) is compared with what is stored from its
    first message on (it may have been cut and written on since the last read); one of a
    file ``fresh`` (new to the source) that holds less than the store is from then on read
    as a file cut shorter."""
    source_of = {s.id: s.source for s in sessions}
    by_id = {c.session.id: c for c in batch
             if source_of.get(c.session.id, c.session.source) == c.session.source}
    read = {c.session.id for c in batch}
    held: dict[str, dict[int, Message]] = {}
    for message in stored:
        held.setdefault(message.session_id, {})[message.position] = message
    moved: dict[str, Conversation] = {}
    new_marks: list[Mark] = []
    for mark in marks:
        lineage = lineage_of(mark.fingerprint)
        old = lineage_of(before[mark.item].fingerprint) if mark.item in before else {}
        known = old.get("places")
        cut = lineage.get("cut") is True
        if not cut and not (keep and any(sid in fresh for sid in mark.session_ids)):
            new_marks.append(mark)  # never cut: its messages are where the file has them
            continue
        if not keep:  # mirrored: the file's messages are stored where the file has them
            new_marks.append(_remarked(mark, {k: v for k, v in lineage.items()
                                              if k != "places"}))
            continue
        places: dict[str, Places] = {}
        for sid in mark.session_ids:
            place = Places.from_json(known.get(sid) if isinstance(known, dict) else None)
            if sid in by_id:
                place, moved[sid] = _place(by_id[sid], held.get(sid, {}), place,
                                           whole=sid in compared, fresh=sid in fresh)
            elif sid in held and sid not in read:  # emptied: all it held is kept
                place = _place(Conversation(Session(id=sid)), held[sid], place)[0]
            if place != Places():
                places[sid] = place
        lineage.pop("places", None)
        if places:
            lineage["places"] = {sid: p.as_json() for sid, p in places.items()}
            lineage["cut"] = True  # new to the source and holding less: kept as it grows
        elif not cut:
            new_marks.append(mark)
            continue
        new_marks.append(_remarked(mark, lineage))
    return Placed(conversations=tuple(moved.get(c.session.id, c) for c in batch),
                  marks=tuple(new_marks))


def _place(read: Conversation, stored: Mapping[int, Message], place: Places, *,
           whole: bool = False, fresh: bool = False) -> tuple[Places, Conversation]:
    """One session's copy at its stored places, and its places after this read (``whole``:
    every stored message is compared, the file was read shorter or rewritten; ``fresh``: so
    too, the file is new to the source, and a message of its that the store holds nowhere
    further on is the file's at its place, as ever)."""
    end = max(stored, default=-1) + 1
    if whole or fresh:  # from the first message: other text may be before the kept range
        place = Places(place.pairs, (0, end))
    if place.kept is not None:
        start, stop = place.kept
        found: dict[tuple[str, float | None, str], list[int]] | None = None
        for message in read.messages:
            at = place.of(message.position)
            if not start <= at < stop or at not in stored:
                continue
            if not _same(stored[at], message):
                # Another message where a kept one is. Stored further on already (this copy
                # was read before from another path, or with a mark since lost), the file
                # goes on from there, so it is not stored twice; else after the store's end.
                found = _found(stored) if found is None else found
                to = next((p for p in found.get(_key(message), ()) if p > at), None)
                if to is None and fresh:
                    start = at + 1
                    continue
                pairs = tuple(p for p in place.pairs if p[0] < message.position)
                place = Places((*pairs, (message.position, end if to is None else to)))
                break
            start = at + 1
        else:
            place = Places(place.pairs, (start, stop) if start < stop else None)
    if _stale(read.messages, stored, place):
        place = _by_identity(read.messages, stored, end)
    copy = (tuple(attrs.evolve(m, position=place.of(m.position)) for m in read.messages)
            if place.pairs else read.messages)  # most cut files never move a message
    reach = max((m.position for m in copy), default=-1) + 1
    if place.kept is None and reach < end:
        place = Places(place.pairs, (reach, end))  # cut (again): what is past it is kept
    return place, attrs.evolve(read, messages=copy)


def _stale(read: Sequence[Message], stored: Mapping[int, Message], place: Places) -> bool:
    """Whether ``place`` puts a message of ``read`` where the store holds another while it
    holds this one elsewhere: places kept by position for a file whose messages now read at
    other positions (a newer harkback leaving out lines an older one stored: a ``/clear``
    echo), which would store messages over others and twice."""
    found: dict[tuple[str, float | None, str], list[int]] | None = None
    for message in read:
        at = place.of(message.position)
        if at in stored and not _same(stored[at], message):
            found = _found(stored) if found is None else found
            if any(p != at for p in found.get(_key(message), ())):
                return True
    return False


def _by_identity(read: Sequence[Message], stored: Mapping[int, Message], end: int) -> Places:
    """Places putting each message of ``read`` where the store holds it (told by role and
    time), in order, and one it does not hold after the store's ``end``.

    >>> def msg(p, at): return Message(session_id="s", position=p, role="user", content="",
    ...                                timestamp=at)
    >>> held = {p: msg(p, at) for p, at in enumerate((1.0, 2.0, 3.0, 5.0, 6.0))}
    >>> _by_identity([msg(0, 3.0), msg(1, 5.0), msg(2, 9.0)], held, 5)
    Places(pairs=((0, 2), (2, 5)), kept=None)
    """
    found = _found(stored)
    pairs: list[tuple[int, int]] = []
    last, fresh = -1, end
    for message in read:
        to = next((p for p in found.get(_key(message), ()) if p > last), None)
        if to is None:
            to, fresh = max(fresh, last + 1), max(fresh, last + 1) + 1
        if to != Places(tuple(pairs)).of(message.position):
            pairs.append((message.position, to))
        last = to
    return Places(tuple(pairs))


def _key(message: Message) -> tuple[str, float | None, str]:
    """What tells a message from another (:func:`_same`): its role and time, else its text."""
    return (message.role, message.timestamp,
            "" if message.timestamp is not None else message.content)


def _found(stored: Mapping[int, Message]) -> dict[tuple[str, float | None, str], list[int]]:
    """Where the store holds each message (worked out once a file differs from it)."""
    found: dict[tuple[str, float | None, str], list[int]] = {}
    for position in sorted(stored):
        found.setdefault(_key(stored[position]), []).append(position)
    return found


def _same(stored: Message, read: Message) -> bool:
    """Whether ``read`` is the stored message: the same role and time (its text may read
    otherwise now: redacted since, a project line changed); with no time, one text starts
    with the other (one of the two written in part).

    >>> def msg(text, at=None): return Message(session_id="s", position=0, role="user",
    ...                                        content=text, timestamp=at)
    >>> _same(msg("a key", 1.0), msg("a [REDACTED]", 1.0)), _same(msg("ab"), msg("a"))
    (True, True)
    >>> _same(msg("a", 1.0), msg("a", 2.0)), _same(msg("ab"), msg("ac"))
    (False, False)
    """
    if stored.role != read.role or stored.timestamp != read.timestamp:
        return False
    return stored.timestamp is not None or (stored.content.startswith(read.content)
                                            or read.content.startswith(stored.content))


def _remarked(mark: Mark, lineage: Mapping[str, object]) -> Mark:
    text = json.dumps(dict(lineage), ensure_ascii=False) if lineage else ""
    return attrs.evolve(mark, fingerprint=marked(fingerprint_of(mark.fingerprint), text))

