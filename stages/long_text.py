"""A message of tens of megabytes (a pasted log) read by its start: how much of one text a
search reads into a hit and the load stage renders, and the note that marks the cut; and a
long text cut in its middle (:func:`clip_middle`), as a tool's output is rendered and an
agent's answer bounded.

>>> loaded_start("x" * (LONGEST_READ + 1), LONGEST_READ).endswith(UNREAD)
True
"""

from __future__ import annotations

LONGEST_READ = 200_000
"""The most characters of one message's text that a search reads into a hit, and that the
load stage reads to render it: a pasted log of 84 MB cost a search 5.6 s and 970 MB when
its whole text was fetched, tokenized and rendered. Real messages are far shorter (the
longest of the LongMemEval store: 42,000 characters), and read whole."""


def read_start(text: str, longest: int) -> tuple[str, bool]:
    """``text``, or its first ``longest`` characters; and whether it was cut.

    >>> read_start("abcdef", 4), read_start("abc", 4)
    (('abcd', True), ('abc', False))
    """
    return (text[:longest], True) if len(text) > longest else (text, False)


UNREAD = "...[the rest of this message was not read]..."
"""What follows a message cut to its first :data:`LONGEST_READ` characters when it is loaded."""


def loaded_start(text: str, longest: int | None) -> str:
    """``text`` as the load stage reads it: whole, or its first ``longest`` characters
    followed by :data:`UNREAD` on a line of its own.

    >>> loaded_start("abcdef", 4), loaded_start("abc", 4), loaded_start("abc", None)
    ('abcd\\n...[the rest of this message was not read]...', 'abc', 'abc')
    """
    if longest is None:
        return text
    start, cut = read_start(text, longest)
    return f"{start}\n{UNREAD}" if cut else text


CLIP_MARKER = "...[truncated]..."
"""What stands between the head and the tail :func:`clip_middle` keeps, unless told."""


# Here, in a module that imports nothing: the MCP server, which bounds an error's line
# with it, loads it at its start with none of the stages a call loads (query, records,
# render), so that its reply to a failed load of those does not meet the failure again.
def clip_middle(text: str, limit: int, marker: str = CLIP_MARKER, *,
                head: int | None = None) -> str:
    """Keep the first and last ``limit // 2`` characters of a text longer than ``limit``
    (or the first ``head`` and the last ``limit - head``), ``marker`` between them (its
    ``{left_out}`` is how many characters it stands for).

    >>> clip_middle("abcdefghij", 4)
    'ab...[truncated]...ij'
    >>> clip_middle("short", 10), clip_middle("abcdefghij", 4, " <{left_out} more> ")
    ('short', 'ab <6 more> ij')
    >>> clip_middle("abcdefghij", 4, head=3)
    'abc...[truncated]...j'
    """
    if len(text) <= limit:
        return text
    head = limit // 2 if head is None else min(max(head, 0), limit)
    tail = limit - head
    cut = marker.format(left_out=len(text) - limit)
    return text[:head] + cut + (text[-tail:] if tail else "")
