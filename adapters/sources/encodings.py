"""The text of a JSON-lines file, in the encoding JSON allows, with bytes that do not
decode counted rather than silently replaced.

JSON text is UTF-8, UTF-16 or UTF-32 (RFC 8259 reads only UTF-8; RFC 4627 named all three
and how to tell them apart by the first bytes, as :func:`json.detect_encoding` does). A
Windows editor saves UTF-8 with a byte order mark, or "Unicode" (UTF-16): both are read as
what they are. A byte that does not decode (a Latin-1 ``é`` in a UTF-8 file) is read as a
lone surrogate (:data:`ESCAPE`), so :func:`undecoded` can count it on its line and put
U+FFFD in its place; the caller says so: every reader (the ingest format, Claude Code and
Codex transcripts, a Hermes ``state.db``) names the line or row as :data:`NOT_UTF8`, with
:func:`replaced` saying how many bytes.

>>> undecoded("caf\\udce9 au lait")
('caf\\ufffd au lait', 1)
>>> encoding_of(b"\\xff\\xfe{\\x00"), encoding_of(b'{"id'), encoding_of(b"\\xef\\xbb\\xbf{")
('utf-16', 'utf-8-sig', 'utf-8-sig')
"""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path
from typing import TextIO

from harkback.stages.ingest_format import whole_number

ESCAPE = "harkback.undecoded"
"""The codec error handler that reads each byte that does not decode as the lone
surrogate U+DC00 + byte (``surrogateescape`` does so only for bytes from 0x80, and UTF-16
can fail on lower ones). A decoder never yields a lone surrogate for what it can read."""


def _escape(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start:error.end]
    return "".join(chr(0xDC00 + byte) for byte in bad), error.end


codecs.register_error(ESCAPE, _escape)

_ESCAPED = re.compile("[\udc00-\udcff]")

NOT_UTF8 = "not UTF-8"
"""What a line or row holding bytes that do not decode is named as."""

HELD_NUL = "NUL character"
"""What a text holding a NUL character (``\\u0000``, no byte of another encoding) is named as."""

NAMES = {"utf-16": "UTF-16", "utf-16-le": "UTF-16LE", "utf-16-be": "UTF-16BE",
         "utf-32": "UTF-32", "utf-32-le": "UTF-32LE", "utf-32-be": "UTF-32BE"}
"""The encodings other than UTF-8 a JSON-lines file is read in, as people name them."""


def encoding_of(head: bytes) -> str:
    """The codec of a JSON text that begins with ``head`` (its first 4 bytes): a byte
    order mark decides, else where the NUL bytes of ``{`` in UTF-16 or UTF-32 are; UTF-8
    (with or without a byte order mark) otherwise."""
    found = json.detect_encoding(head)
    return "utf-8-sig" if found == "utf-8" else found


def marked_encoding(head: bytes) -> str:
    """The codec of a text that begins with ``head`` (its first 4 bytes) when a byte order
    mark says it is UTF-16 or UTF-32; UTF-8 (a mark of its own skipped) otherwise, never
    guessed from where NUL bytes are (a crash can leave a head of them in a UTF-8 file).

    >>> marked_encoding(b"\\xff\\xfe{\\x00"), marked_encoding(b"\\x00\\x00\\x00{")
    ('utf-16', 'utf-8-sig')
    """
    if head.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return "utf-32"  # first: the UTF-32LE mark begins with the UTF-16LE one
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    return "utf-8-sig"


def open_text(path: Path) -> tuple[TextIO, str]:
    """``path`` opened for reading lines in the encoding its first bytes say, undecodable
    bytes escaped (see :data:`ESCAPE`), and that encoding's codec name."""
    with path.open("rb") as raw:
        codec = encoding_of(raw.read(4))
    return path.open(encoding=codec, errors=ESCAPE), codec


def escaped(data: bytes) -> str:
    """``data`` as UTF-8 text, each byte that does not decode escaped (see :data:`ESCAPE`):
    a ``text_factory`` for :mod:`sqlite3`, whose own raises on the first such byte.

    >>> undecoded(escaped(b"caf\\xe9"))
    ('caf\ufffd', 1)
    """
    return data.decode("utf-8", ESCAPE)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_loads(text: str) -> object:
    """:func:`json.loads`, each lone surrogate in the value's strings made U+FFFD, and an
    integer too long for Python as a float (:func:`~harkback.stages.ingest_format.whole_number`).

    JSON may escape half a character (``\\ud83d``: an emoji a truncation cut in two, as
    Claude Code writes it); Python keeps it as a lone surrogate, which no store can encode
    (the import failed). The ingest format's reader does the same.

    >>> json_loads('{"t": ["ran \\\\ud83d", "\\\\ud83d\\\\ude00"]}')
    {'t': ['ran \ufffd', '\U0001f600']}
    """
    value = json.loads(text, parse_int=whole_number)
    # Only an escape makes one: a decoder never yields a lone surrogate (see ESCAPE).
    return _storable(value) if "\\ud" in text or "\\uD" in text else value


def _storable(value: object) -> object:
    if isinstance(value, str):
        return value if value.isascii() else _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    return value


def undecoded(line: str) -> tuple[str, int]:
    """``line`` with each escaped byte (see :data:`ESCAPE`) replaced by U+FFFD, and how
    many there were."""
    try:
        # A strict encode fails exactly on lone surrogates, and costs a quarter of a scan
        # for them: most lines hold none.
        line.encode("utf-8")
    except UnicodeEncodeError:
        return _ESCAPED.subn("\ufffd", line)
    return line, 0


def replaced(count: int, where: str = "") -> str:
    """What became of ``count`` bytes that did not decode (``where``: in which column).

    >>> replaced(2), replaced(1, "title")
    ('2 byte(s) replaced by U+FFFD', '1 byte(s) in title replaced by U+FFFD')
    """
    inside = f" in {where}" if where else ""
    return f"{count} byte(s){inside} replaced by U+FFFD"


def spelled_out(text: str) -> tuple[str, int]:
    """``text`` with each escaped byte (see :data:`ESCAPE`) written as ``\\xNN``, and how
    many there were: for an id, where U+FFFD would make two ids that differ only in such
    bytes one. A NUL is written ``\\x00`` too (:func:`nuls_spelled_out`).

    >>> spelled_out("caf\\udce9"), spelled_out("caf\\udce8"), spelled_out("plain")
    (('caf\\\\xe9', 1), ('caf\\\\xe8', 1), ('plain', 0))
    >>> spelled_out("s\\x001")
    ('s\\\\x001', 1)
    """
    text, count = bytes_spelled_out(text)
    text, nuls = nuls_spelled_out(text)
    return text, count + nuls


def bytes_spelled_out(text: str) -> tuple[str, int]:
    """``text`` with each escaped byte written as ``\\xNN``, and how many there were.

    >>> bytes_spelled_out("caf\\udce9"), bytes_spelled_out("s\\x001")
    (('caf\\\\xe9', 1), ('s\\x001', 0))
    """
    try:
        text.encode("utf-8")  # as in undecoded: most ids hold no escaped byte
    except UnicodeEncodeError:
        return _ESCAPED.subn(lambda byte: f"\\x{ord(byte.group()) - 0xDC00:02x}", text)
    return text, 0


def nuls_spelled_out(text: str) -> tuple[str, int]:
    """``text`` with each NUL written ``\\x00``, and how many there were: no store keeps one
    in an id (SQLite could not read the session back, and PostgreSQL's import ledger
    refuses it), and made U+FFFD it could become another row's id.

    >>> nuls_spelled_out("s\\x001"), nuls_spelled_out("plain")
    (('s\\\\x001', 1), ('plain', 0))
    """
    count = text.count("\x00")
    return (text.replace("\x00", "\\x00"), count) if count else (text, 0)
