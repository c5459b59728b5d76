"""A session's first request on one line: what ``recent`` lists under each session, and a
search result carries for a session without a title (else told apart by its id alone).

>>> from harkback.stages.records import Message
>>> first_request([Message(session_id="s", position=1, role="user", content="fix\\n  it"),
...                Message(session_id="s", position=0, role="assistant", content="hi")], "s")
'fix it'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from harkback.stages.records import Message

PREVIEW_CHARS = 200
"""How much of a session's first user message :func:`preview` keeps."""
PREVIEW_READS = 4_000
"""How much of the start of that message :func:`preview` reads, and so all a store need fetch
of it: a first request of 84 MB (a pasted log) cost ``recent`` 7-10 s and 1.6 GB when the
whole text was fetched and its whitespace collapsed to keep 200 characters."""

_SPACE = re.compile(r"\s+")


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """The start of ``text`` (its first :data:`PREVIEW_READS` characters) on one line,
    whitespace collapsed, cut to ``limit`` characters.

    >>> preview("  fix\\n\\n the   bridge ")
    'fix the bridge'
    """
    return _SPACE.sub(" ", text[:PREVIEW_READS]).strip()[:limit].rstrip()


def first_request(messages: Iterable[Message], session_id: str) -> str:
    """The :func:`preview` of ``session_id``'s first user message (by position) among
    ``messages``; ``""`` when it has none."""
    first = min((m for m in messages if m.session_id == session_id and m.role == "user"),
                key=lambda m: m.position, default=None)
    return "" if first is None else preview(first.content)
