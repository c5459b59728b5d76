"""Secrets redacted on their way into a store: at ingest and at every import.

>>> from harkback.stages.records import Conversation, Message, Session
>>> said = Message(session_id="s", position=0, role="user", content="password=hunter2")
>>> found = Redacted()
>>> found.one(Conversation(Session(id="s"), (said,))).messages[0].content
'password=[secret:password]'
>>> found.counts.describe()
'1 secret(s) redacted (password 1)'
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

import attrs

from harkback.stages.records import Conversation
from harkback.stages.redact.scrub import NO_SECRETS, SecretCounts, redact_conversation


@attrs.define
class Redacted:
    """Redacts the secrets of conversations on their way to the store, counting them
    (passes them on untouched when not ``enabled``)."""

    enabled: bool = True
    counts: SecretCounts = NO_SECRETS

    def each(self, rows: Iterable[tuple[int, Conversation]]
             ) -> Iterator[tuple[int, Conversation]]:
        """``rows`` (size, conversation) with each conversation redacted."""
        for size, conversation in rows:
            yield size, self.one(conversation)

    def one(self, conversation: Conversation) -> Conversation:
        """``conversation`` redacted."""
        if not self.enabled:
            return conversation
        clean, counts = redact_conversation(conversation)
        if counts.by_kind:
            self.counts += counts
        return clean

    def batch(self, conversations: Sequence[Conversation]
              ) -> tuple[tuple[Conversation, ...],
                         Callable[[Iterable[Conversation]], SecretCounts]]:
        """``conversations`` redacted, and what counts the secrets of some of them (an
        import counts those of the sessions it changed, not of those it skipped)."""
        if not self.enabled:
            return tuple(conversations), lambda _ids: NO_SECRETS
        found: dict[str, SecretCounts] = {}
        clean = []
        for conversation in conversations:
            redacted, counts = redact_conversation(conversation)
            found[conversation.session.id] = counts
            clean.append(redacted)

        def count(changed: Iterable[Conversation]) -> SecretCounts:
            return sum((found.get(c.session.id, NO_SECRETS) for c in changed), NO_SECRETS)
        return tuple(clean), count
