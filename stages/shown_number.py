"""A number, or any value someone wrote, as an error line may echo it: whole, unless it
is too long to read.

``str()`` of an int of more than 4,300 digits raises ValueError, so a library caller's
``limit=10 ** 5000`` (or an agent tool's arguments, parsed by a runner) raised from the
very line that was to refuse it; one of a few thousand digits filled the line, and so did
``--limit 999…`` or ``$HARKBACK_LIMIT`` of 5,000 digits, which ``int()`` refuses as "not a
whole number". Bytes of an argument that are not UTF-8 (Python reads them as lone
surrogates) are echoed as U+FFFD, as in JSON and in what a store keeps of them.

>>> shown_number(12), shown_number(-3.5), shown_number(10 ** 5000)
('12', '-3.5', 'a number of more than 30 digits')
>>> shown_number(-(10 ** 40))
'a negative number of more than 30 digits'
>>> shown_given("7 days"), shown_given("9" * 5000), shown_given("caf\\udce9")
("'7 days'", 'a number of more than 30 digits', "'caf\ufffd'")
"""

from __future__ import annotations

import re
import unicodedata

DIGITS = 30
"""The most digits of a whole number shown as it is."""

TEXT_CHARS = 60
"""The most characters of a written value an error line echoes."""

_WHOLE = re.compile(r"\s*([+-]?)[0-9][0-9_]*\s*")
_SURROGATE = re.compile("[\ud800-\udfff]")


def shown_number(value: int | float) -> str:
    """``value`` as text, or a word on its size when it has more than :data:`DIGITS` digits."""
    if isinstance(value, float) or abs(value) < 10 ** DIGITS:
        return str(value)
    return _words(value < 0)


def _words(negative: bool) -> str:
    sign = "a negative number" if negative else "a number"
    return f"{sign} of more than {DIGITS} digits"


def long_number(text: str) -> bool:
    """Whether ``text`` writes a whole number of more than :data:`DIGITS` digits (which
    ``int()`` refuses past 4,300).

    >>> long_number("9" * 31), long_number("9" * 30), long_number("9" * 31 + "x")
    (True, False, False)
    """
    return _WHOLE.fullmatch(text) is not None and sum(c.isdigit() for c in text) > DIGITS


def shown_given(text: str) -> str:
    """``text``, written by someone (an argument, a variable's value), as an error line
    echoes it: a whole number too long to read in words, else quoted, cut to
    :data:`TEXT_CHARS` characters, undecodable bytes as U+FFFD.

    >>> len(shown_given("x" * 500)), shown_given("-" + "9" * 40)
    (63, 'a negative number of more than 30 digits')
    """
    if long_number(text):
        match = _WHOLE.fullmatch(text)
        return _words(match is not None and match.group(1) == "-")
    return shown_text(text)


def shown_text(text: str) -> str:
    """``text`` quoted, cut to :data:`TEXT_CHARS` characters, undecodable bytes as U+FFFD,
    control characters escaped (a name from another agent's files is printed to a terminal).

    >>> shown_text("cli"), shown_text("a\\x1b[2Jb"), len(shown_text("x" * 500))
    ("'cli'", "'a\\\\x1b[2Jb'", 63)
    """
    return repr(cut_text(text))


def shown_value(value: object) -> str:
    """Any value a caller gave (a record's field, a value of a file's JSON) as an error line
    echoes it: text by :func:`shown_text`, a whole number by :func:`shown_number`, anything
    else its repr cut the same way.

    >>> shown_value("r" * 99)[-5:], shown_value(10 ** 5000), shown_value([0] * 99)[-4:]
    ("rrr…'", 'a number of more than 30 digits', ' 0,…')
    """
    if isinstance(value, str):
        return shown_text(value)
    if isinstance(value, int):
        return shown_number(value)
    try:
        text = repr(value)
    except ValueError:  # a list holding an int of more than 4,300 digits
        return f"a {type(value).__name__} too large to show"
    return cut_text(text)


def cut_text(text: str) -> str:
    """``text`` cut to :data:`TEXT_CHARS` characters and ``…``, undecodable bytes as U+FFFD,
    not quoted: for a line that quotes it itself, or a repr.

    >>> cut_text("x" * 500)[-3:], cut_text("caf\\udce9")
    ('xx…', 'caf�')
    """
    cut = text if len(text) <= TEXT_CHARS else text[:_cut_at(text)] + "…"
    return _SURROGATE.sub("\ufffd", cut)


def _cut_at(text: str) -> int:
    """Where to cut ``text`` near :data:`TEXT_CHARS`: not between a character and the
    marks that follow it (an accent, a variation selector, an emoji's joiner), which would
    show ``é`` as ``e`` or join the ``…`` to an emoji; a value of marks alone is cut anyway.

    >>> _cut_at("x" * 59 + "e\u0301" + "y"), _cut_at("x" * 59 + "ey"), _cut_at("\u0301" * 99)
    (59, 60, 60)
    """
    end = TEXT_CHARS
    while end > 0 and (_joins(text[end]) or text[end - 1] == "\u200d"):
        end -= 1
    return end or TEXT_CHARS


def _joins(char: str) -> bool:
    return char == "\u200d" or unicodedata.category(char).startswith("M")
