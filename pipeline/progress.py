"""A small progress bar on stderr for long work; silent when stderr is not a terminal."""

from __future__ import annotations

import os
import sys
import time
from typing import TextIO

import attrs

from harkback.pipeline.columns import clipped
from harkback.pipeline.columns import columns as shown_width
from harkback.pipeline.terminal import line_of


@attrs.define
class Progress:
    """Report ``done`` out of ``total`` units, redrawing at most ten times a second; with
    ``total`` None (work whose size is not known ahead) the count of ``unit`` done instead
    of a share.

    >>> import io
    >>> out = io.StringIO()
    >>> p = Progress(total=10, label="ingest", stream=out, enabled=True)
    >>> p.advance(10); p.finish()
    >>> "100%" in out.getvalue()
    True
    """

    total: int | None
    label: str
    # looked up per bar, not at import, so a redirected stderr is honoured
    stream: TextIO = attrs.field(factory=lambda: sys.stderr)
    enabled: bool | None = None
    done: int = 0
    unit: str = "done"
    _last_draw: float = 0.0

    def __attrs_post_init__(self) -> None:
        if self.enabled is None:
            self.enabled = self.stream.isatty()

    def advance(self, units: int) -> None:
        """Add ``units`` of finished work."""
        self.done += units
        now = time.monotonic()
        finished = self.total is not None and self.done >= self.total
        if self.enabled and (now - self._last_draw > 0.1 or finished):
            self._last_draw = now
            self._draw()

    def _draw(self) -> None:
        width = terminal_width(self.stream)
        if self.total is None:
            line = counted(self.label, f"{self.done:,} {self.unit}", width)
        else:
            share = min(self.done / self.total, 1.0) if self.total else 1.0
            line = fitted(self.label, share, width)
        self.stream.write(f"\r{line}")
        self.stream.flush()

    def finish(self) -> None:
        """End the bar's line."""
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()


def fitted(label: str, share: float, width: int) -> str:
    """The bar's line in fewer than ``width`` columns: a line as wide as the terminal or
    wider wraps, and each redraw (a carriage return goes back to the start of the last row
    only) left a row behind, so a narrow pane filled with bars. Where 30 columns of bar do
    not fit, the bar is shortened, then left out, then the label cut; with no room for the
    share, nothing is drawn. The label is measured in terminal columns (an embedder named
    in Chinese takes two a character) and shown on one line (:func:`line_of`).

    >>> fitted("import jsonl", 0.5, 80)
    'import jsonl [###############               ]  50%'
    >>> fitted("import jsonl", 0.5, 30), fitted("import jsonl", 0.5, 12), fitted("x", 1.0, 3)
    ('import jsonl [####     ]  50%', 'import  50%', '')
    >>> fitted("embed with 中文向量", 0.5, 21)  # 20 columns: 4 for 中文
    'embed with 中文  50%'
    """
    label = line_of(label)
    tail = f" {share:4.0%}"
    room = width - 1 - shown_width(label) - len(tail) - 3  # " [" and "]"
    if room >= 5:
        bar = "#" * int(share * min(room, 30))
        return f"{label} [{bar:<{min(room, 30)}}]{tail}"
    if width - 1 < len(tail):
        return ""
    return f"{clipped(label, width - 1 - len(tail))}{tail}"


def counted(label: str, count: str, width: int) -> str:
    """The line of work of no known size in fewer than ``width`` columns: the label, then
    the count done (the label cut first, as :func:`fitted` cuts it).

    >>> counted("embed with all-MiniLM-L6-v2", "320 message(s)", 80)
    'embed with all-MiniLM-L6-v2: 320 message(s)'
    >>> counted("embed with all-MiniLM-L6-v2", "320 message(s)", 30)
    'embed with al: 320 message(s)'
    """
    tail = f": {count}"
    if width - 1 < len(tail):
        return ""
    return f"{clipped(line_of(label), width - 1 - len(tail))}{tail}"


def terminal_width(stream: TextIO) -> int:
    """The width of the terminal ``stream`` writes to: ``$COLUMNS`` when set (as Python's
    ``shutil`` reads it), else the terminal's own, else 80 (a file or pipe: ``--progress``)."""
    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80
    except (AttributeError, OSError, ValueError):  # no descriptor (captured) or no terminal
        return 80
