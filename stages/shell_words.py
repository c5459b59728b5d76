"""Words quoted for a shell, so that a command line printed as a hint works pasted.

Output shows a control character or a bidirectional mark as a sign (a tab as ``␉``, ESC
as ``␛``: :func:`harkback.pipeline.terminal.visible`); pasted, the sign is typed, and the
command names a session, a path or a question that does not exist. A word holding one is
quoted in ANSI-C quotes (bash, zsh, ksh; not dash's ``sh``) with that character escaped;
any other word is quoted as :func:`shlex.quote` does. Past ASCII the escape is the
character's UTF-8 bytes, not ``\\u2028``: in the C locale (a bare container, cron) bash
keeps ``\\u2028`` as those six characters and zsh refuses it, while both turn bytes back
into the character (and an undecodable byte of a file name back into that byte).

>>> print(shell_quoted("a b"), shell_quoted("tab\\there"), shell_quoted("it's\\x1b\\u202e"))
'a b' $'tab\\x09here' $'it\\'s\\x1b\\xe2\\x80\\xae'
>>> shell_joined(["search", "a\\tb", "--json"])
"search $'a\\\\x09b' --json"
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable

# What human output shows as a sign (terminal.visible, one_line): pasted, the sign is typed.
# A lone surrogate too: one of U+DC80..U+DCFF carries an undecodable byte of a file name.
_SHOWN_AS_SIGNS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\udc80-\udcff]")


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
    # Bytes, as os.fsencode makes the argument: bash's \x9b alone is the byte 0x9b, which
    # is no character; U+009B is \xc2\x9b.
    return "".join(f"\\x{byte:02x}" for byte in os.fsencode(match.group(0)))
