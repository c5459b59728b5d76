"""A session a transcript file yields that its last mark did not name, weighed against the store.

A file new to its folder, or yielding a session id it did not hold (a rollout copied or
backed up under another name, a Claude Code session copied into another project folder, a
backup read as a source of its own, a copy whose original was deleted), may name a session
the store holds from another file. Stored as read, its messages replaced the stored ones
where both had some (the other file's, lost without a word) and the other file's next
change put them back: a flip-flop. A copy the folder's listing set aside (``ID@NAME``,
:mod:`~harkback.adapters.sources.session_owners`) was stored whole even when it held
nothing new: every message twice. So each such
:class:`~harkback.adapters.sources.importing.Claim` is compared, message by message (role,
time and text), with what the store holds under its id (or what this unit stores there):

- holding nothing the stored session lacks (the same messages, or its first ones): a
  copy set aside is not stored, and its file's mark says it left out that session's lines
  (``after``, as for a resume's: :mod:`~harkback.adapters.sources.replays`), so it is read
  again should the session leave the store; one under its own id is read as a file new to
  the source, the stored messages past its end kept (:mod:`~harkback.pipeline.import_cut`);
- going on past the stored messages: under its own id it continues them; set aside, its
  own messages are stored as a continuation of the session (``ID@NAME``, its parent the
  session: :mod:`~harkback.pipeline.import_carry`), and stay one when the session's file
  goes on otherwise (as a copy that held nothing new does: both went on from there);
  unless the file listed first (and given the id) is new to the store too and holds only
  the first of its messages (a backup listed before the file it was taken of): then that
  one adds nothing and this one takes the id;
- with other messages where the stored session has some: kept aside, under ``ID@NAME``
  (``ID@PATH`` when that is taken) and named, never replacing them.

>>> from harkback.stages.records import Session
>>> def msg(p, at): return Message(session_id="s", position=p, role="user", content="hi",
...                                timestamp=at)
>>> stored = {0: msg(0, 1.0), 1: msg(1, 2.0)}
>>> [weigh(c, stored) for c in ([msg(0, 1.0)], [msg(0, 1.0), msg(1, 2.0), msg(2, 3.0)],
...                             [msg(0, 1.0), msg(1, 9.0)])]
['within', 'beyond', 'other']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import count
from pathlib import PurePath
from typing import Literal

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources.importing import Claim, ImportUnit, Tally
from harkback.adapters.sources.replays import Cut, fingerprint_of, lineage_of, marked
from harkback.adapters.sources.session_owners import renamed
from harkback.pipeline.import_carry import COPIED_MESSAGE, continued
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import Mark
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message
from harkback.stages.redact.scrub import SecretCounts, redact
from harkback.stages.stage import as_result

COPY_LEFT_OUT = "session copied from another file (stored there)"
"""What a copy holding nothing new is counted as, among what was left out."""


def weigh(read: Sequence[Message], stored: Mapping[int, Message], *, short: bool = True
          ) -> Literal["within", "beyond", "other"]:
    """How the messages ``read`` stand to those ``stored`` (by position): ``within`` them
    (each held, at its place or further on where a file cut and written on moved it:
    :mod:`~harkback.pipeline.import_places`), going on ``beyond`` them, or holding ``other``
    messages where the store has some. A reply written in parts (text, a tool call, more
    text) may end either side cut short, a copy taken while the agent wrote it: the last
    message of ``read`` may hold the first part of the stored one there (when ``short``:
    not for what will be stored over it), and the last stored one the first part of the one
    read there (then it goes on beyond)."""
    beyond = False
    held: set[_Key] | None = None
    clean: set[_Key] | None = None
    last_read = read[-1].position if read else None
    last_stored = max(stored, default=None)
    for message in read:
        there = stored.get(message.position)
        if there is not None and _same(there, message):
            continue
        if (short and there is not None and message.position == last_read
                and _begins(message, there)):
            continue
        if there is not None and message.position == last_stored and _begins(there, message):
            beyond = True
            continue
        held = {message_key(m) for m in stored.values()} if held is None else held
        if message_key(message) in held:
            continue
        if there is None:
            beyond = True
            continue
        # Redacted otherwise (the store's text kept before a rule found its secret, or with
        # --keep-secrets): the same message, looked for again as both read now.
        clean = ({message_key(m, redacted=True) for m in stored.values()} if clean is None
                 else clean)
        if message_key(message, redacted=True) not in clean:
            return "other"
    return "beyond" if beyond else "within"


_Key = tuple[str, float | None, str]


def message_key(message: Message, *, redacted: bool = False) -> _Key:
    """What tells two files' messages apart: role, time and text (``redacted``: as the
    import redacts it now)."""
    return (message.role, message.timestamp,
            redact(message.content)[0] if redacted else message.content)


def _begins(part: Message, whole: Message) -> bool:
    """Whether ``part`` is the first part of ``whole``: one reply, cut short as it was written."""
    return (part.role, part.timestamp) == (whole.role, whole.timestamp) and (
        whole.content.startswith(part.content))


def _same(stored: Message, read: Message) -> bool:
    """Whether ``read`` is the message ``stored`` (its text perhaps redacted otherwise)."""
    return message_key(stored) == message_key(read) or (
        message_key(stored, redacted=True) == message_key(read, redacted=True))


def _after(fingerprint: str, session_id: str) -> str:
    """A file's mark saying it left out lines of ``session_id`` (stored there): it is read
    again should that session leave the store (:func:`~harkback.adapters.sources.replays.holds`).

    >>> _after("10:5", "s")
    '10:5|{"after": ["s"], "awaits": []}'
    """
    lineage = lineage_of(fingerprint)
    after = lineage.get("after")
    before = after if isinstance(after, list) else []
    lineage["after"] = before if session_id in before else [*before, session_id]
    lineage.setdefault("awaits", [])
    return marked(fingerprint_of(fingerprint), json.dumps(lineage, ensure_ascii=False))


Counted = Callable[[Iterable[Conversation]], SecretCounts]
"""What counts the secrets redacted in some of a unit's conversations (by session id)."""


async def settled_claims(unit: ImportUnit, store: SessionStore, before: Mapping[str, Mark],
                         counted: Counted) -> Result[tuple[ImportUnit, Counted],
                                                     StoreUnavailable]:
    """``unit`` with each of its claims weighed against the store (see above), and
    ``counted`` counting a conversation kept aside under its new id; ``before`` are the
    source's marks before this import (a file's own ``ID@NAME`` stays its own)."""
    if not unit.claims:
        return Success((unit, counted))
    sources = as_result(await store.sessions(sorted({c.read_as for c in unit.claims}))
                        .awaitable())
    if isinstance(sources, Failure):
        return Failure(sources.failure())
    # Another source's session under the id (Hermes, an ingest file) is replaced, named so.
    kinds = {c.session.source for c in unit.conversations}
    wanted = [s.id for s in sources.unwrap() if s.source in kinds]
    found = as_result(await store.messages(wanted).awaitable())
    if isinstance(found, Failure):
        return Failure(found.failure())
    stored: dict[str, dict[int, Message]] = {}
    for message in found.unwrap():
        stored.setdefault(message.session_id, {})[message.position] = message
    settling = _Settling(unit, stored, before)
    # A file's own id first: one set aside is weighed against what stays under the id.
    for claim in sorted(unit.claims, key=lambda c: c.session_id != c.read_as):
        if claim.session_id == claim.read_as:
            taken = await _taken(store, claim, settling)
            if isinstance(taken, Failure):
                return Failure(taken.failure())
            settling.own(claim, taken.unwrap())
        else:
            settling.copy(claim)
    read_as = {c.session.id: sid for sid, c in settling.batch.items() if c.session.id != sid}
    return Success((settling.unit(), lambda changed: counted(
        renamed(c, read_as[c.session.id]) if c.session.id in read_as else c for c in changed)))


async def _taken(store: SessionStore, claim: Claim, settling: _Settling
                 ) -> Result[frozenset[str], StoreUnavailable]:
    """The ids a claim's file may not be set aside under: stored, and not its own."""
    if settling.standing(claim) != "other":
        return Success(frozenset())
    found = as_result(await store.sessions(list(_aside(claim))).awaitable())
    return found.map(lambda sessions: frozenset(s.id for s in sessions))


def _aside(claim: Claim, tries: int = 8) -> Iterable[str]:
    """The ids a claim may be kept aside under, in order: ``ID@NAME``, ``ID@PATH``, then
    numbered (as the folder's listing names a copy: ``SessionOwners``)."""
    yield f"{claim.read_as}@{PurePath(claim.item).stem}"
    yield f"{claim.read_as}@{claim.item}"
    for n in count(2):
        if n > tries:
            return
        yield f"{claim.read_as}@{claim.item}#{n}"


@attrs.define
class _Settling:
    """What the claims of one unit change in it, as they are weighed."""

    was: ImportUnit
    stored: dict[str, dict[int, Message]]
    before: Mapping[str, Mark]
    batch: dict[str, Conversation] = attrs.field(init=False)
    """The unit's conversations by the id they were read under (one kept aside renamed)."""
    marks: dict[str, Mark] = attrs.field(init=False)
    cut: list[tuple[str, tuple[str, ...], Cut]] = attrs.field(init=False)
    tally: Tally = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.batch = {c.session.id: c for c in self.was.conversations}
        self.marks = {m.item: m for m in self.was.marks}
        self.cut = list(self.was.cut)
        self.tally = Tally(named=list(self.was.skipped), skips=self.was.skips)
        self.tally.merge(self.was.left_out)

    def held(self, session_id: str) -> dict[int, Message]:
        """What ``session_id`` holds once this unit is stored: the store's messages, with
        those this unit stores there (a copy read with its original, both new)."""
        held = dict(self.stored.get(session_id, {}))
        if (ours := self.batch.get(session_id)) is not None and ours.session.id == session_id:
            held.update((m.position, m) for m in ours.messages)
        return held

    def standing(self, claim: Claim) -> str:
        """How a claim stands to what its id holds ("" when it holds nothing)."""
        read = self.batch.get(claim.session_id)
        held = self.stored.get(claim.read_as) if claim.session_id == claim.read_as else (
            self.held(claim.read_as))
        # Under its own id, what is read is stored over what is held: never cut short.
        return weigh(read.messages, held, short=claim.session_id != claim.read_as) if (
            read is not None and held) else ""

    def own(self, claim: Claim, taken: frozenset[str]) -> None:
        """A claim under its own id: kept aside when it holds other messages than the
        store, else read as a file new to the source (what the store holds past it kept).
        A file kept aside before stays there: the file it was set aside from deleted (and
        pruned), taking the id stored its messages twice."""
        standing = self.standing(claim)
        mine = self.before[claim.item].session_ids if claim.item in self.before else ()
        kept = next((i for i in _aside(claim) if i in mine), None)
        if standing == "" and kept is None:
            return
        if standing != "other" and kept is None:
            if not any(path == claim.path for path, _, _ in self.cut):
                self.cut.append((claim.path, (claim.read_as,), "new"))
            return
        used = {c.session.id for c in self.batch.values()}
        own_id = kept or next((i for i in _aside(claim) if i not in taken and i not in used),
                              None)
        if own_id is None:  # every name taken: stored under its id, as before
            return
        self.batch[claim.read_as] = renamed(self.batch[claim.read_as], own_id)
        self._rename(claim, own_id)
        self.cut = [(path, tuple(own_id if i == claim.read_as else i for i in ids), why)
                    for path, ids, why in self.cut]
        if self._carries_on(claim, claim.read_as, standing):
            return
        if standing == "other":
            self._name(claim, f"{claim.read_as!r} is stored with other messages (from "
                              f"another file); stored as {own_id!r}")

    def copy(self, claim: Claim) -> None:
        """A claim the folder's listing set aside: left out when it holds nothing new."""
        standing = self.standing(claim)
        if standing == "beyond" and self._takes_over(claim):
            return
        if self._carries_on(claim, claim.session_id, standing):
            return
        if standing != "within":
            self._name(claim, f"{claim.read_as!r} is also in {claim.owner}; stored as "
                              f"{claim.session_id!r}")
            return
        self.batch.pop(claim.session_id)
        self._rename(claim, None)
        self.tally.add(COPY_LEFT_OUT)

    def _takes_over(self, claim: Claim) -> bool:
        """Whether a copy set aside takes its id from the file listed first: both new to
        the store, and that one holding only the first of the copy's messages (a backup
        listed before the file it was taken of); that one then adds nothing."""
        first = next((c for c in self.was.claims if c.item == claim.owner
                      and c.session_id == c.read_as == claim.read_as), None)
        ours = self.batch.get(claim.read_as)
        if (first is None or claim.read_as in self.stored or ours is None
                or ours.session.id != claim.read_as):
            return False
        mine = self.batch[claim.session_id]
        if weigh(ours.messages, {m.position: m for m in mine.messages}) != "within":
            return False
        self.batch.pop(claim.read_as)
        self.batch[claim.session_id] = renamed(mine, claim.read_as)
        self._rename(first, None)
        self._rename(claim, claim.read_as)
        self.cut = [(path, tuple(dict.fromkeys(
            claim.read_as if i == claim.session_id else i for i in ids
            if not (path == first.path and i == claim.read_as))), why)
            for path, ids, why in self.cut]
        self.tally.add(COPY_LEFT_OUT)
        return True

    def _carries_on(self, claim: Claim, key: str, standing: str) -> bool:
        """Whether the claim's conversation (``key`` in the batch), set aside, is stored as
        a continuation of the session it copies: it goes on past it, or its last read held
        the session's first messages (a continuation, or a copy holding nothing new) and
        the session's file was written on since: a fork from where they met
        (:mod:`~harkback.pipeline.import_carry`)."""
        mark = self.before.get(claim.item)
        after = lineage_of(mark.fingerprint).get("after") if mark is not None else None
        # Its last mark left the session's lines out: it held the session's first messages
        # then (a continuation of it, or a copy holding nothing new: the file listed first,
        # holding the id, went on), so both went on from where they met.
        went_on = mark is not None and isinstance(after, list) and claim.read_as in after
        if not (standing == "beyond" or (standing == "other" and went_on)):
            return False
        read = self.batch[key]
        carried = continued(read, self.held(claim.read_as), claim.read_as, same=_same)
        if carried is None:
            return False
        self.batch[key] = carried
        self.tally.add(COPIED_MESSAGE, len(read.messages) - len(carried.messages))
        named = self.marks.get(claim.item)
        if named is not None:
            self.marks[claim.item] = attrs.evolve(
                named, fingerprint=_after(named.fingerprint, claim.read_as))
        return True

    def _rename(self, claim: Claim, own_id: str | None) -> None:
        """The claim's file's mark naming ``own_id`` for it (None: naming nothing, and
        saying it left out the lines of the session it copies)."""
        mark = self.marks.get(claim.item)
        if mark is None:
            return
        named = () if own_id is None else (own_id,)
        ids = tuple(dict.fromkeys(j for i in mark.session_ids
                                  for j in (named if i == claim.session_id else (i,))))
        fingerprint = mark.fingerprint if own_id is not None else _after(mark.fingerprint,
                                                                         claim.read_as)
        self.marks[claim.item] = attrs.evolve(mark, fingerprint=fingerprint,
                                              session_ids=ids, sessions=len(ids))

    def _name(self, claim: Claim, detail: str) -> None:
        self.tally.at(claim.path)
        self.tally.skip("duplicate session id", detail, "renamed")

    def unit(self) -> ImportUnit:
        """The unit as settled."""
        return attrs.evolve(
            self.was, conversations=tuple(self.batch.values()),
            marks=tuple(self.marks[m.item] for m in self.was.marks),
            cut=tuple(self.cut), skipped=tuple(self.tally.named), skips=self.tally.skips,
            left_out=self.tally.items(), claims=())
