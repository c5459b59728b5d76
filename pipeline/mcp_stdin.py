"""Standard input as ``harkback mcp`` hands it to the SDK: line by line, each line mended.

Two things the SDK's own reader gets wrong for a long-lived server:

* A line whose JSON escapes half a character (``\\ud83d`` alone: an emoji a truncation cut
  in two) is refused by the SDK's parser, and the call it held is never answered:
  :func:`mended` escapes it as U+FFFD instead. So is a line nesting arrays or objects deeper
  than the parser's 200 levels: :func:`mended` puts a string in place of what lies below
  :data:`MAX_DEPTH`, and the call is answered (a tool error naming the argument).
* The SDK reads stdin in one of anyio's worker threads, which a cancellation waits for and
  the interpreter joins at exit: while the client sent nothing, SIGTERM or Ctrl-C left the
  server running until the client's next line or its closing of the pipe.
  :class:`StdinLines` reads in a daemon thread of its own that nothing waits for, and
  mends each line there too: mended on the event loop, a 12 MB line of brackets held up
  every other call, and SIGTERM, for about 3 s.

>>> mended(r'{"q": "cut \\ud83d"}')
'{"q": "cut \\\\ufffd"}'
"""

from __future__ import annotations

import asyncio
import queue
import re
import threading
from typing import IO

import anyio

MAX_DEPTH = 100
"""Levels of arrays and objects a line keeps (the SDK's parser refuses a line of 200)."""
TOO_DEEP = f'"(nested deeper than {MAX_DEPTH} levels)"'
# A string whole (its brackets and digits are text; unrolled, a long string is one match);
# one never closed (a line cut short) runs to the line's end. Wanting the closing quote, a
# line cut in a string of many \" was scanned again from each (40 KB: 9 s, on the event loop).
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"?'
# A string whole, or a bracket.
_BRACKETS = re.compile(_STRING + r"|[\[\]{}]")
NUMBER_DIGITS = 4_300
"""The most digits of a number the SDK's JSON parser reads (Python's int() limit too)."""
_DIGIT_RUNS = re.compile(r"\d+")
# A string whole (its digits stay), or a run of digits past the limit outside strings;
# each run is matched once, so a line of many long runs costs no more than its length.
_NUMBERS = re.compile(_STRING + r"|(\d{" + str(NUMBER_DIGITS + 1) + r",})|\d+")
_ESCAPES = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                      r"|(\\u[dD][89a-fA-F][0-9a-fA-F]{2})|\\.")


def mended(line: str) -> str:
    """``line`` (JSON) with each escaped half of a character (``\\ud83d`` alone: an emoji a
    truncation cut in two) escaped as U+FFFD instead, and each number of more than
    :data:`NUMBER_DIGITS` digits cut to that many nines, and what is nested below
    :data:`MAX_DEPTH` levels replaced by a string: the SDK's parser refuses the line
    either way, and the call it held was never answered. A whole pair and an escaped
    backslash stay, and so do digits in a string.

    >>> mended(r'{"q": "cut \\ud83d", "e": "\\ud83d\\ude00", "t": "\\\\ud83d"}')
    '{"q": "cut \\\\ufffd", "e": "\\\\ud83d\\\\ude00", "t": "\\\\\\\\ud83d"}'
    >>> kept = '"' + "1" * 5000 + '"'
    >>> cut = mended('{"limit": -' + "1" * 5000 + ', "id": ' + kept + "}")
    >>> cut == '{"limit": -' + "9" * NUMBER_DIGITS + ', "id": ' + kept + "}"
    True
    """
    # Each run looked at and let go: findall kept them all, and a 30 MB line of "12a"
    # held 700 MB at once.
    if any(run.end() - run.start() > NUMBER_DIGITS for run in _DIGIT_RUNS.finditer(line)):
        line = _NUMBERS.sub(lambda m: "9" * NUMBER_DIGITS if m.group(1) else m.group(), line)
    line = _shallow(line)
    if "\\u" not in line:
        return line
    return _ESCAPES.sub(lambda m: "\\ufffd" if m.group(1) else m.group(), line)


def _shallow(line: str) -> str:
    """``line`` with each array or object opening below :data:`MAX_DEPTH` levels replaced
    by :data:`TOO_DEEP` (brackets in strings are text; a line cut short stays as it is).

    >>> _shallow('{"q": ' + "[" * 150 + "]" * 150 + ', "s": "[[["}')[:16]
    '{"q": [[[[[[[[[['
    >>> _shallow('{"q": ' + "[" * 150 + "]" * 150 + "}").count("[")
    99
    """
    if line.count("[") + line.count("{") <= MAX_DEPTH:
        return line
    parts: list[str] = []
    depth, kept, start = 0, 0, -1
    for match in _BRACKETS.finditer(line):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth == MAX_DEPTH + 1:
                start = match.start()
        elif bracket in "]}":
            if depth == MAX_DEPTH + 1 and start >= 0:
                parts += [line[kept:start], TOO_DEEP]
                kept, start = match.end(), -1
            depth -= 1
    return "".join([*parts, line[kept:]])


class StdinLines(anyio.AsyncFile[str]):
    """A text file read a line at a time on request by a daemon thread (see the module),
    each line :func:`mended` in that thread; ``""`` at the end, as ``readline`` gives it.

    A cancelled :meth:`readline` abandons its wait (the line the thread is reading then
    goes to no one: only a server that is stopping cancels it).
    """

    def __init__(self, file: IO[str]) -> None:
        """Read ``file`` (the thread starts at the first :meth:`readline`)."""
        super().__init__(file)
        self._asks: queue.SimpleQueue[asyncio.Future[str]] | None = None

    async def readline(self) -> str:
        """The next line, mended; waiting for it (and its mending) can be cancelled."""
        if self._asks is None:
            self._asks = queue.SimpleQueue()
            threading.Thread(target=self._read, args=(self._asks,), daemon=True,
                             name="harkback-mcp-stdin").start()
        answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._asks.put(answer)
        return await answer

    def _read(self, asks: queue.SimpleQueue[asyncio.Future[str]]) -> None:
        # One line per ask, so a client sending faster than the server reads is held back
        # by the pipe, not queued here.
        while True:
            answer = asks.get()
            try:
                line = self.wrapped.readline()
                mend = mended(line)
            # Stdin unreadable or closed under us, or a line too long to hold or mend
            # (MemoryError): the server's reader is told, or it would wait for good.
            except Exception as error:
                _settle(answer, None, error)
                return
            if not _settle(answer, mend, None) or not line:
                return


def _settle(answer: asyncio.Future[str], line: str | None, error: BaseException | None
            ) -> bool:
    # From the reading thread; False once the server's event loop is gone.
    def settle() -> None:
        if answer.done():  # its wait was cancelled
            return
        if error is not None:
            answer.set_exception(error)
        else:
            answer.set_result(line or "")
    try:
        answer.get_loop().call_soon_threadsafe(settle)
    except RuntimeError:  # the loop is closed: the server has stopped
        return False
    return True
