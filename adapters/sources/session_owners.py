"""One session id, one file: a transcript whose session id another file already holds.

A folder of transcripts may hold two files with the same session id (a copied or
backed-up rollout). Stored under one id, the file read last would replace the other's
messages without a word. Instead the file that held the id first keeps it (the one the
import ledger names, else the first in the listing's order), the other's conversation is
stored under the id with its file's name added, and the import names it like damaged
input, so nothing is lost and the person is told.

>>> from harkback.stages.records import Message, Session
>>> owners = SessionOwners({"cx1": "a.jsonl"})
>>> copy = Conversation(Session(id="cx1"), (Message(session_id="cx1", position=0, role="user"),))
>>> tally = Tally()
>>> [c.session.id for c in owners.claim("b.jsonl", [copy], tally)]
['cx1@b']
>>> tally.named[0].reason
"duplicate session id: 'cx1' is also in a.jsonl; stored as 'cx1@b'"
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePath

import attrs

from harkback.adapters.sources.importing import Tally
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

    def claim(self, item: str, conversations: Iterable[Conversation],
              tally: Tally) -> tuple[Conversation, ...]:
        """``conversations`` read from ``item``, each under an id no other file holds; a
        renamed one is named in ``tally`` (where it says reading is)."""
        kept: list[Conversation] = []
        for conversation in conversations:
            session_id = conversation.session.id
            owner = self.files.setdefault(session_id, item)
            if owner != item:
                own_id = f"{session_id}@{PurePath(item).stem}"
                tally.skip("duplicate session id",
                           f"{session_id!r} is also in {owner}; stored as {own_id!r}", "renamed")
                conversation = renamed(conversation, own_id)
                self.files[own_id] = item
            kept.append(conversation)
        return tuple(kept)
