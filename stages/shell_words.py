"""Words quoted for a shell, so that a command line printed as a hint works pasted.

Output shows a control character or a bidirectional mark as a sign (a tab as ``␉``, ESC
as ``␛``: :func:`harkback.pipeline.terminal.visible`); pasted, the sign is typed, and the
command names a session, a path or a question that does not exist. A word holding one is
quoted in ANSI-C quotes (bash, zsh, ksh) with that character escaped; any other word is
quoted as :func:`shlex.quote` does.

>>> print(shell_quoted("a b"), shell_quoted("tab\\there"), shell_quoted("it's\\x1b\\u202e"))
'a b' $'tab\\x09here' $'it\\'s\\x1b\\u202e'
>>> shell_joined(["search", "a\\tb", "--json"])
"search $'a\\\\x09b' --json"
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

# What human output shows as a sign (terminal.visible, one_line): pasted, the sign is typed.
_SHOWN_AS_SIGNS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def shell_quoted(value: str) -> str:
    """``value`` quoted for a shell (see the module)."""
    if not _SHOWN_AS_SIGNS.search(value):
        return shlex.quote(value)
    body = value.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + _SHOWN_AS_SIGNS.sub(_escaped, body) + "'"


def shell_joined(words: Iterable[str]) -> str:
    """The words quoted (:func:`shell_quoted`) and joined by spaces, as :func:`shlex.join`."""
    return " ".join(shell_quoted(word) for word in words)


def _escaped(match: re.Match[str]) -> str:
    # Four digits past ASCII: bash's \x9b is the byte 0x9b, not the character U+009B.
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"
