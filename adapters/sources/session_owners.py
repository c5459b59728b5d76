"""One session id, one file: a transcript whose session id another file already holds.

A folder of transcripts may hold two files with the same session id (a copied or
backed-up rollout). Stored under one id, the file read last would replace the other's
messages without a word. Instead the file that held the id first keeps it (the one the
import ledger names, else the first in the listing's order), the other's conversation is
stored under the id with its file's name added. A session a file yields that its last
mark did not name, or a copy set aside, is a
:class:`~harkback.adapters.sources.importing.Claim`: the import compares it with what the
store holds first (:mod:`~harkback.pipeline.import_claims`: a copy holding nothing new is
not stored twice, one going on past the session continues it) and names one holding other
messages like damaged input, so nothing is lost and the person is told.

>>> from harkback.stages.records import Message, Session
>>> owners = SessionOwners({"cx1": "a.jsonl"})
>>> copy = Conversation(Session(id="cx1"), (Message(session_id="cx1", position=0, role="user"),))
>>> read, claims = owners.claim("b.jsonl", [copy], held=("cx1@b",))
>>> [c.session.id for c in read], [(c.session_id, c.owner) for c in claims]
(['cx1@b'], [('cx1@b', 'a.jsonl')])
>>> owners.claim("c.jsonl", [copy], path="/s/c.jsonl")[1][0].session_id
'cx1@c'
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from itertools import chain, count
from pathlib import PurePath

import attrs

from harkback.adapters.sources.importing import Claim
from harkback.stages.records import Conversation


def renamed(conversation: Conversation, session_id: str) -> Conversation:
    """``conversation`` with its session and every message under ``session_id``."""
    return Conversation(
        attrs.evolve(conversation.session, id=session_id),
        tuple(attrs.evolve(m, session_id=session_id) for m in conversation.messages))


@attrs.define
class SessionOwners:
    """Which file (a path under the folder) holds each session id read so far."""

    files: dict[str, str] = attrs.field(factory=dict)

    @classmethod
    def of(cls, marks: Mapping[str, Iterable[str]], present: Iterable[str]) -> SessionOwners:
        """The owners the ledger remembers (``marks``: each file's session ids), for the
        files still ``present``: a file gone (renamed, deleted) holds nothing any more."""
        here = set(present)
        return cls({session_id: item for item, ids in marks.items() if item in here
                    for session_id in ids})

    def claim(self, item: str, conversations: Iterable[Conversation], *,
              held: Collection[str] = (), path: str = ""
              ) -> tuple[tuple[Conversation, ...], tuple[Claim, ...]]:
        """``conversations`` read from ``item`` (at ``path``), each under an id no other
        file holds, and the :class:`Claim` s among them: those its last mark did not name
        (``held``), and every one set aside; a claim is named, if need be, once compared
        with the store."""
        kept: list[Conversation] = []
        claims: list[Claim] = []
        for conversation in conversations:
            session_id = conversation.session.id
            owner = self.files.setdefault(session_id, item)
            own_id = session_id if owner == item else self._free_id(session_id, item)
            # A copy set aside is weighed at every read: it may go on past the session
            # (a continuation of it, unnamed) or hold other messages (named at each change).
            if own_id not in held or own_id != session_id:
                claims.append(Claim(own_id, session_id, item, path,
                                    owner if owner != item else ""))
            kept.append(renamed(conversation, own_id) if own_id != session_id else conversation)
        return tuple(kept), tuple(claims)

    def elsewhere(self, session_ids: Iterable[str], item: str) -> bool:
        """Whether a file other than ``item`` holds each of ``session_ids``.

        >>> owners = SessionOwners({"a": "a.jsonl", "b": "b.jsonl"})
        >>> owners.elsewhere(["a"], "b.jsonl"), owners.elsewhere(["a", "c"], "b.jsonl")
        (True, False)
        """
        return all(self.files.get(s) not in (None, item) for s in session_ids)

    def _free_id(self, session_id: str, item: str) -> str:
        """An id for ``item``'s copy of ``session_id`` that no other file holds, claimed for
        it: ``ID@NAME`` (the file's name), else ``ID@PATH`` (its path under the folder), else
        that with a number. Copies in two folders under one file name (``a/x.jsonl``,
        ``b/x.jsonl``) were both stored as ``x@x``, the second replacing the first.

        >>> owners = SessionOwners({"s": "a/x.jsonl", "s@x": "b/x.jsonl"})
        >>> owners._free_id("s", "c/x.jsonl"), owners._free_id("s", "b/x.jsonl")
        ('s@c/x.jsonl', 's@x')
        """
        numbered = (f"{session_id}@{item}#{n}" for n in count(2))
        tried = chain((f"{session_id}@{PurePath(item).stem}", f"{session_id}@{item}"), numbered)
        # Ends: only finitely many ids are held by other files.
        return next(own_id for own_id in tried if self.files.setdefault(own_id, item) == item)

