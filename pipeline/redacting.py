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
from harkback.stages.redact.scrub import NO_SECRETS, SecretCounts, redact, redact_conversation

Redaction = tuple[str, SecretCounts]
"""A text redacted, and the secrets found in it."""


@attrs.define
class RedactionMemo:
    """What earlier syncs of a ``sync --watch`` redacted in its largest sessions, text by text.

    One line appended to a 30 MB transcript makes the whole file read again, and each of
    its 18,000 messages redacted again (a third of the re-sync's CPU time). A text's
    redaction depends on that text alone, so a text the session held the last time is
    looked up instead (an exact match of the whole text). Only sessions of at least
    ``smallest`` messages are remembered, the last ``sessions`` of them: a few huge
    transcripts' texts, not the history's.

    >>> from harkback.stages.records import Message, Session
    >>> memo = RedactionMemo(smallest=1)
    >>> said = Message(session_id="s", position=0, role="user", content="password=hunter2")
    >>> chat = Conversation(Session(id="s"), (said,))
    >>> memo.redact(chat)[0].messages[0].content == memo.redact(chat)[0].messages[0].content
    True
    """

    smallest: int = 1000
    sessions: int = 4
    _kept: dict[str, dict[str, Redaction]] = attrs.field(factory=dict, init=False)

    def redact(self, conversation: Conversation) -> tuple[Conversation, SecretCounts]:
        """``conversation`` redacted as :func:`redact_conversation` does, reusing what the
        session's last redaction found for the texts it held then."""
        if len(conversation.messages) < self.smallest:
            return redact_conversation(conversation)
        before = self._kept.pop(conversation.session.id, {})
        now: dict[str, Redaction] = {}

        def redact_text(text: str) -> Redaction:
            done = before.get(text) or now.get(text) or redact(text)
            now[text] = done
            return done
        redacted = redact_conversation(conversation, redact_text)
        self._kept[conversation.session.id] = now
        while len(self._kept) > self.sessions:  # the least recently redacted goes
            del self._kept[next(iter(self._kept))]
        return redacted


@attrs.define
class Redacted:
    """Redacts the secrets of conversations on their way to the store, counting them
    (passes them on untouched when not ``enabled``)."""

    enabled: bool = True
    counts: SecretCounts = NO_SECRETS
    memo: RedactionMemo | None = None
    """Where a watch remembers what it redacted (see :class:`RedactionMemo`)."""

    def _redacted(self, conversation: Conversation) -> tuple[Conversation, SecretCounts]:
        if self.memo is not None:
            return self.memo.redact(conversation)
        return redact_conversation(conversation)

    def each(self, rows: Iterable[tuple[int, Conversation]]
             ) -> Iterator[tuple[int, Conversation]]:
        """``rows`` (size, conversation) with each conversation redacted."""
        for size, conversation in rows:
            yield size, self.one(conversation)

    def one(self, conversation: Conversation) -> Conversation:
        """``conversation`` redacted."""
        if not self.enabled:
            return conversation
        clean, counts = self._redacted(conversation)
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
            redacted, counts = self._redacted(conversation)
            found[conversation.session.id] = counts
            clean.append(redacted)

        def count(changed: Iterable[Conversation]) -> SecretCounts:
            return sum((found.get(c.session.id, NO_SECRETS) for c in changed), NO_SECRETS)
        return tuple(clean), count
