"""A message of tens of megabytes (a pasted log) read by its start: how much of one text a
search reads into a hit and the load stage renders, and the note that marks the cut.

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
