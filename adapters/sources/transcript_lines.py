"""Reading the lines of a JSON-lines transcript: numbered, damaged ones named, times checked.

:func:`json_lines` reads a file's JSON objects and names what is not one (``file:line``);
:func:`located` keeps a :class:`~harkback.adapters.sources.importing.Tally` told which line
a format is reading, so what it skips there is named too; :func:`plausible_time` reads a
line's time and ignores one that cannot be right, so one damaged line never moves a
session.

>>> tally = Tally(file="t.jsonl")
>>> plausible_time("2026-03-03T14:15:00Z", tally)
1772547300.0
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TextIO

import attrs

from harkback.adapters.sources.encodings import (
    ESCAPE,
    NOT_UTF8,
    json_loads,
    marked_encoding,
    replaced,
    undecoded,
)
from harkback.adapters.sources.importing import Tally, iso_epoch

Line = Mapping[str, object]
"""One JSON object of a transcript file."""

TORN = "incomplete last line (read again next time)"
"""What a last line still being written is counted as; its file is not marked as read."""

MAX_LINE_CHARS = 64 * 1024 * 1024
"""The longest line read: a longer one is skipped and named, never held whole (a 300 MB line
took 2.5 GB of memory to store as one message)."""


LINE_NUMBER = "\x00line"
"""The key under which :func:`parse_file` gives each line its number in the file (no
transcript writes a key starting with NUL), read back by :func:`located`."""


def located(lines: Iterable[Line], tally: Tally) -> Iterator[Line]:
    """``lines``, telling ``tally`` the number of each as it is read, so that what a format
    skips while reading a line is named ``file:line`` (lines read twice stay right).

    >>> tally = Tally(file="t.jsonl")
    >>> for line in located([{LINE_NUMBER: 4}], tally):
    ...     tally.skip("odd")
    >>> tally.named[0].describe(), tally.line
    ('t.jsonl:4: odd', None)
    """
    for line in lines:
        number = line.get(LINE_NUMBER)
        tally.line = number if isinstance(number, int) else None
        yield line
    tally.line = None


EARLIEST_TIME = 1_577_836_800.0
"""2020-01-01 UTC: no agent transcript of a format read here is older, so an earlier time is
damage (a stray number read as 1970, say), not history."""

FUTURE_SLACK_S = 86_400.0
"""A time more than a day past the clock is damage too (clock skew stays well inside)."""


def plausible_time(value: object, tally: Tally, *, now: float | None = None) -> float | None:
    """The epoch of a transcript line's ISO 8601 time, or None; a time of the wrong type,
    unreadable, or outside 2020 .. tomorrow is ignored and named in ``tally`` (see
    :meth:`Tally.skip`), so one damaged line never moves its session's span.

    >>> tally = Tally()
    >>> plausible_time("2026-03-03T14:15:00Z", tally), plausible_time(12345, tally)
    (1772547300.0, None)
    >>> plausible_time("1970-01-01T03:25:45Z", tally), tally.skips
    (None, 2)
    """
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        tally.skip("time ignored", f"{str(value)[:40]!r} is not an ISO 8601 string", "ignored")
        return None
    when = iso_epoch(value)
    latest = (time.time() if now is None else now) + FUTURE_SLACK_S
    if when is None:
        tally.skip("time ignored", f"{value[:40]!r} is not an ISO 8601 time", "ignored")
    elif not EARLIEST_TIME <= when <= latest:
        tally.skip("time ignored", f"{value[:40]!r} is before 2020 or in the future",
                   "ignored")
        return None
    return when


_CUT_THEN_OBJECT = re.compile(r'[^\s:,\[]\s*(\{\s*")')
"""An object's start where no JSON value may start (not after ``:``, ``,`` or ``[``)."""
_FIRST_KEY = re.compile(r'\{"(?:[^"\\]|\\.)*"')
SALVAGE_TRIES = 8
"""How many places a damaged line is tried from for a whole line written after it."""


def salvaged(text: str, tally: Tally, *, whole: bool) -> object | None:
    """What can be read of a line that is not JSON (``whole``: it ends with its newline),
    with what was done named in ``tally``; None when nothing can.

    A crash leaves NUL bytes (a file's block allocated, never written), and raw JSON never
    holds one: they are removed. A crash also leaves a line cut short, and the agent, run
    again, appends its next line to it: that whole line is read, the cut one named.

    >>> tally = Tally(file="t.jsonl")
    >>> salvaged('{"n": 1, "te{"n": 2}', tally, whole=True), tally.named[0].reason
    ({'n': 2}, 'unreadable line: cut short, the line written after it on it read')
    >>> salvaged('{"n": 1, "te', tally, whole=False), tally.counts[TORN]
    (None, 1)
    """
    nuls = text.count("\x00")
    if nuls:
        text = text.replace("\x00", "")
        try:
            value = json_loads(text) if text.strip() else None
        except (ValueError, RecursionError):
            pass
        else:
            tally.skip("NUL bytes", f"{nuls} removed", "repaired" if value is not None
                       else "skipped")
            return value
    after = _last_whole_object(text)
    if after is not None:
        tally.skip("unreadable line", "cut short, the line written after it on it read")
        return after
    if whole or nuls:  # NUL bytes are no agent still writing its line
        tally.skip("unreadable line", "not JSON")
    else:
        tally.add(TORN)
    return None


def _last_whole_object(text: str) -> dict[str, object] | None:
    """The JSON object that ends ``text`` and starts where a line written after a cut one
    would, or None: where the line's own first key starts again (``{"type"``: one writer
    writes its lines alike), or where no JSON value may start (``"te{"n"``). Inside a JSON
    string every ``"`` is escaped, so ``{"`` is only ever the start of an object; the last
    few such starts are tried."""
    starts = {m.start(1) for m in _CUT_THEN_OBJECT.finditer(text)}
    if first := _FIRST_KEY.match(text):
        start = 0
        while (start := text.find(first.group(), start + 1)) > 0:
            starts.add(start)
    for start in sorted(starts)[::-1][:SALVAGE_TRIES]:
        try:
            value = json_loads(text[start:])
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _rest_of_line(handle: TextIO) -> bool:
    """Read past the rest of an over-long line, a piece at a time; whether it ended (a
    newline) rather than the file."""
    while piece := handle.readline(MAX_LINE_CHARS):
        if piece.endswith("\n"):
            return True
    return False


def json_document(path: Path, tally: Tally) -> object | None:
    """The JSON document a whole file holds (an early Codex wrote each session as one), or
    None, named in ``tally`` as an unreadable file: not JSON, or longer than
    :data:`MAX_LINE_CHARS` (not held whole)."""
    with path.open("rb") as raw:
        codec = marked_encoding(raw.read(4))
    with path.open(encoding=codec, errors=ESCAPE) as handle:
        text, count = undecoded(handle.read(MAX_LINE_CHARS + 1))
    if len(text) > MAX_LINE_CHARS:
        tally.skip("unreadable file", f"longer than {MAX_LINE_CHARS:,} characters")
        return None
    try:
        value = json_loads(text)
    except (ValueError, RecursionError):
        tally.skip("unreadable file", "not JSON")
        return None
    if count:
        tally.skip(NOT_UTF8, replaced(count), "repaired")
    return value


def json_lines(path: Path, tally: Tally) -> Iterator[tuple[int, dict[str, object]]]:
    """The JSON objects of a JSON-lines file with their line numbers; the rest is counted.

    Blank lines are skipped; a line that is not a JSON object is skipped as
    ``unreadable line``, or counted as :data:`TORN` when it is the last and lacks its
    newline (an agent is still writing it: not damage, it is read again next time). A line
    longer than :data:`MAX_LINE_CHARS` is passed over in pieces, the same way.
    While a line is read, ``tally`` knows where it is, so what its reader skips is
    named ``file:line``. A line read whole that holds bytes that are not UTF-8 is read
    with U+FFFD in their place and named :data:`~harkback.adapters.sources.encodings.NOT_UTF8`
    (in a torn last line they may be a character cut in two: not named).
    """
    # UTF-8, as Claude Code and Codex write it, or UTF-16/32 when a byte order mark says so
    # (a transcript passed through a Windows shell's redirection: every line was unreadable);
    # never guessed from where NUL bytes are, as the ingest format's is: a head of NUL bytes
    # left by a crash would read as UTF-32. Undecodable bytes are escaped, counted below.
    with path.open("rb") as raw:
        codec = marked_encoding(raw.read(4))
    with path.open(encoding=codec, errors=ESCAPE) as handle:
        number = 0
        while line := handle.readline(MAX_LINE_CHARS):
            number += 1
            if len(line) == MAX_LINE_CHARS and not line.endswith("\n"):
                tally.at(str(path), number)
                if _rest_of_line(handle):
                    tally.skip("unreadable line", f"longer than {MAX_LINE_CHARS:,} characters")
                else:
                    tally.add(TORN)
                continue
            if not line.strip():
                continue
            tally.at(str(path), number)
            text, count = undecoded(line)
            # A byte order mark starting a line: files joined (``cat``), one of them saved by
            # a Windows editor. Only the file's own was skipped, and JSON refuses one.
            text = text.removeprefix("\ufeff")
            try:
                value = json_loads(text)
            except (ValueError, RecursionError):
                value = salvaged(text, tally, whole=line.endswith("\n"))
                if value is None:
                    continue
            if isinstance(value, dict):
                if count:
                    tally.skip(NOT_UTF8, replaced(count), "repaired")
                yield number, value
            else:
                tally.skip("unreadable line", "not a JSON object")
    tally.at(str(path))


@attrs.define
class _Farthest(Tally):
    """A tally that keeps the last line number reading was at (``json_lines`` says it is
    at no line once it is done)."""

    farthest: int | None = None

    def at(self, file: str, line: int | None = None) -> None:
        """Say where reading is now, and keep the line."""
        super().at(file, line)
        self.farthest = line if line is not None else self.farthest


def last_line(path: Path) -> int | None:
    """The number :func:`json_lines` gives the last line of ``path`` (a line cut short
    too): read again, once, for a file whose last line no agent finishes any more."""
    tally = _Farthest()
    for _ in json_lines(path, tally):
        pass
    return tally.farthest
