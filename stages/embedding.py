"""What of a message is embedded for dense ranking, and which messages are.

Only the user's own messages are embedded by default (:data:`EMBED_ROLES`): people ask
about what they said, decided and asked for; user turns are about half the messages and a
small share of the text (assistant and tool turns are long, and tool output is noise to
an embedding model), so embedding stays affordable on a CPU. The first
:data:`PASSAGE_CHARS` characters are enough: small embedding models read 256-512 tokens.

>>> passage_text(Message(session_id="s", position=0, role="user", content="fix dns"))
'fix dns'
>>> passage_text(Message(session_id="s", position=1, role="user", content="  ")) is None
True
"""

from __future__ import annotations

from harkback.stages.records import Message

BLANK = " \t\r\n"
"""What counts as blank around a message (stores test the same set with SQL's trim)."""

PASSAGE_CHARS = 2000
"""How much of a message the embedder sees (about 500 tokens of English)."""


def passage_text(message: Message) -> str | None:
    """The text embedded for ``message``, or None when it has nothing to embed."""
    if not message.content.strip(BLANK):
        return None
    return message.content[:PASSAGE_CHARS]
