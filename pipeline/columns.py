"""Text in the columns of a human table, measured as a terminal shows it.

``f"{text:<12}"`` pads to 12 characters, but a terminal gives a Chinese, Japanese or
Korean character (East Asian width W or F) two columns and a combining mark none, so a
row holding ``飞书`` or ``e\\u0301`` ran past or fell short of the rows above it. Every table
pads and cuts its text through :func:`padded` and :func:`clipped`, which count columns as
human output shows the text (control characters as their signs: :func:`visible`).

>>> columns("cli"), columns("飞书"), columns("e\\u0301")
(3, 4, 1)
>>> padded("飞书", 6) + "|", padded("7", 3, right=True)
('飞书  |', '  7')
>>> clipped("上次怎么解决", 5), clipped("claude-code", 6)
('上次', 'claude')
"""

from __future__ import annotations

import unicodedata

from harkback.pipeline.terminal import visible


def _columns_of(char: str) -> int:
    if unicodedata.category(char) in ("Mn", "Me"):  # combining marks sit on the one before
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def columns(text: str) -> int:
    """How many terminal columns ``text`` takes in human output."""
    return sum(_columns_of(char) for char in visible(text))


def padded(text: str, width: int, *, right: bool = False) -> str:
    """``text`` with spaces to fill ``width`` columns (before it when ``right``); text
    wider than that is left whole (see :func:`clipped`)."""
    fill = " " * max(0, width - columns(text))
    return fill + text if right else text + fill


def clipped(text: str, width: int) -> str:
    """The longest start of ``text`` that fits in ``width`` columns (a wide character
    that would straddle the edge is left out)."""
    used = 0
    for end, char in enumerate(text):
        used += columns(char)
        if used > width:
            return text[:end]
    return text
