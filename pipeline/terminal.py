"""Text that cannot drive the terminal: stored control characters shown, not obeyed.

Sessions hold whatever agents and tools wrote, escape sequences included: printed raw,
``\\x1b[2J`` clears the screen and an OSC sequence retitles the window. Human output
therefore shows every control character as a visible sign: ESC as ``␛`` (so
``\\x1b[2J`` reads ``␛[2J``), the other C0 characters and DEL as their control
pictures (``␀``, ``␇``, ``␍``), C1 characters and bidirectional overrides as escapes
(``\\x9b``, ``\\u202e``), undecodable bytes as ``\\xff``. Newline and tab stay, for the
bodies of messages; a one-line field (a title, a source, an id) shows them too
(:func:`one_line`), so it cannot split a table's row or forge a line of its own. JSON
output escapes them as JSON (:func:`json_text`).

>>> visible("a\\x1b[2Jb\\x00c\\x9bd\\u202ee\\udcff\\tf")
'a␛[2Jb␀c\\\\x9bd\\\\u202ee\\\\xff\\tf'
>>> json_text({"t": "\\x1b]0;pwned\\x07 \\x9b \\u202e"})
'{"t": "\\\\u001b]0;pwned\\\\u0007 \\\\u009b \\\\u202e"}'
"""

from __future__ import annotations

import io
import json
import re
from typing import Any, TextIO

_SIGNS: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if chr(c) not in "\n\t"}
_SIGNS[0x7F] = "\u2421"
_SIGNS.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
_SIGNS.update({c: f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))})

_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSAFE_IN_JSON = re.compile("[\x80-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _surrogate(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    # U+DC80..U+DCFF carry the undecodable bytes of a file name or argument.
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with its control characters shown as signs (see the module)."""
    return _SURROGATE.sub(_surrogate, text.translate(_SIGNS))


_LINE_BREAKS = {ord("\n"): "\u240a", ord("\t"): "\u2409", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def one_line(text: str) -> str:
    """``text`` for a one-line field of human output: newlines and tabs shown as their
    control pictures (and the Unicode line and paragraph separators as escapes), the other
    control characters left to :func:`visible`.

    >>> one_line("first\\nsecond\\tthird")
    'first␊second␉third'
    """
    return text.translate(_LINE_BREAKS)


def line_of(text: str) -> str:
    """``text`` as one line of a report (an error or a note on stderr): newlines and tabs
    shown (:func:`one_line`), then every other control character (:func:`visible`); a
    file's name holding a newline could print a line of its own, ``harkback: ...`` too.

    >>> line_of("no such file: bad\\nharkback: ingested 9 session(s)\\x1b[2J")
    'no such file: bad␊harkback: ingested 9 session(s)␛[2J'
    """
    return visible(one_line(text))


def json_text(payload: Any, *, indent: int | None = None) -> str:
    """``payload`` as JSON with non-ASCII text readable, but C1 control characters and
    bidirectional overrides escaped (JSON escapes C0 itself), so the text is safe on a
    terminal; a lone surrogate (an undecodable byte of an argument) becomes U+FFFD, since
    ``"\\udcff"`` is JSON that strict parsers refuse, and raw it is not UTF-8.

    >>> json_text({"q": "caf\\udce9"})
    '{"q": "caf\ufffd"}'
    """
    text = json.dumps(payload, ensure_ascii=False, indent=indent)
    # Outside strings JSON has only ASCII, so these can only be inside strings.
    return _UNSAFE_IN_JSON.sub(_json_safe, text)


def _json_safe(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return "\ufffd" if 0xD800 <= code <= 0xDFFF else f"\\u{code:04x}"


class WrappedStream(io.TextIOBase):
    """A text stream writing through to ``target``, for a subclass to change ``write``."""

    def __init__(self, target: TextIO) -> None:
        """Write through to ``target``."""
        super().__init__()
        self._target = target

    def write(self, text: str) -> int:
        """Write ``text``."""
        return self._target.write(text)

    def flush(self) -> None:
        """Flush the target."""
        self._target.flush()

    def fileno(self) -> int:
        """The target's file descriptor."""
        return self._target.fileno()

    def isatty(self) -> bool:
        """Whether the target is a terminal."""
        return self._target.isatty()

    def writable(self) -> bool:
        """Always: it writes."""
        return True


class VisibleWriter(WrappedStream):
    """A text stream that writes to ``target`` with :func:`visible` applied."""

    def write(self, text: str) -> int:
        """Write ``text``, its control characters made visible."""
        self._target.write(visible(text))
        return len(text)
