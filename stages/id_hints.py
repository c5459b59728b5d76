"""Stored session ids like one that is not stored: the hint of a session not found.

Ids come from other tools and are copied by hand, so a shortened one (``abc12`` of
``abc123-...``) or one in another case (``ABC123``) is a slip worth naming. It is only
named, never shown in its place: a prefix must not silently show the wrong session.
Alike means: starting with the id asked, the case of ASCII letters aside (SQLite's
``LIKE`` folds only those; every store folds the same).

>>> not_found("abc", ("abc-1", "ABC-2"))
"no session with id 'abc'; did you mean 'abc-1' or 'ABC-2'?"
>>> not_found("x", ())
"no session with id 'x'"
>>> starts_alike("ABC-1", "abc"), starts_alike("xabc", "abc")
(True, False)
"""

from __future__ import annotations

from collections.abc import Sequence

HINTS = 3
"""The most ids a hint names."""

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def folded(text: str) -> str:
    """``text`` with its ASCII capitals lowered (and nothing else changed).

    >>> folded("ÄB-c")
    'Äb-c'
    """
    return text.translate(_ASCII_LOWER)


def starts_alike(stored: str, asked: str) -> bool:
    """Whether ``stored`` starts with ``asked``, the case of ASCII letters aside."""
    return folded(stored).startswith(folded(asked))


def not_found(session_id: str, alike: Sequence[str]) -> str:
    """The line for a session id not stored, naming the stored ids ``alike`` it (at most
    :data:`HINTS` of them)."""
    line = f"no session with id {session_id!r}"
    named = [repr(i) for i in alike[:HINTS]]
    if not named:
        return line
    listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
    return f"{line}; did you mean {listed}?"
