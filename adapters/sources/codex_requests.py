"""What Codex writes around, or in place of, a request the user typed.

Codex's editor extension and desktop app send a request under the context they add, as one
user message: ``# Context from my IDE setup:`` (the active file, the open tabs) or ``# Files
mentioned by the user:``, then ``## My request for Codex:`` and the request. Stored as
written, ``recent`` previewed such a session by its context (``# Context from my IDE setup:
## Active file: src/components/Gallery.tsx ## Open tabs: ...``) and a summary quoted the tabs
first. :func:`request_first` puts the request first and keeps the context after it, where a
search for a file's name still finds it.

When the user stops a turn, Codex writes a ``<turn_aborted>`` notice as a user message:
:func:`aborted_notice` tells it, so the import leaves it out (counted) as the user never
typed it.

>>> request_first("# Context from my IDE setup:\\n\\n## Active file: a.ts\\n\\n"
...               "## My request for Codex:\\nfix the hover")
'fix the hover\\n\\n# Context from my IDE setup:\\n\\n## Active file: a.ts'
>>> request_first("plain request")
'plain request'
>>> aborted_notice("<turn_aborted>\\n  <reason>interrupted</reason>\\n</turn_aborted>")
True
"""

from __future__ import annotations

CONTEXT_HEADINGS = ("# Context from my IDE setup:", "# Files mentioned by the user:")
REQUEST_HEADING = "## My request for Codex:"


def request_first(text: str) -> str:
    """``text`` with the request after Codex's ``## My request for Codex:`` heading first and
    the context above it after (``text`` itself when it has no such wrapper)."""
    if not text.lstrip().startswith(CONTEXT_HEADINGS):
        return text
    at = text.find(f"\n{REQUEST_HEADING}")
    if at < 0:
        return text
    request = text[at + 1 + len(REQUEST_HEADING):].strip()
    context = text[:at].strip()
    return f"{request}\n\n{context}" if request else text


def aborted_notice(text: str) -> bool:
    """Whether ``text`` is the notice Codex writes when a turn is stopped."""
    stripped = text.strip()
    return stripped.startswith("<turn_aborted>") and stripped.endswith("</turn_aborted>")
