"""A small progress bar on stderr for long work; silent when stderr is not a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO

import attrs


@attrs.define
class Progress:
    """Report ``done`` out of ``total`` units, redrawing at most ten times a second.

    >>> import io
    >>> out = io.StringIO()
    >>> p = Progress(total=10, label="ingest", stream=out, enabled=True)
    >>> p.advance(10); p.finish()
    >>> "100%" in out.getvalue()
    True
    """

    total: int
    label: str
    # looked up per bar, not at import, so a redirected stderr is honoured
    stream: TextIO = attrs.field(factory=lambda: sys.stderr)
    enabled: bool | None = None
    done: int = 0
    _last_draw: float = 0.0

    def __attrs_post_init__(self) -> None:
        if self.enabled is None:
            self.enabled = self.stream.isatty()

    def advance(self, units: int) -> None:
        """Add ``units`` of finished work."""
        self.done += units
        now = time.monotonic()
        if self.enabled and (now - self._last_draw > 0.1 or self.done >= self.total):
            self._last_draw = now
            self._draw()

    def _draw(self) -> None:
        share = min(self.done / self.total, 1.0) if self.total else 1.0
        bar = "#" * int(share * 30)
        self.stream.write(f"\r{self.label} [{bar:<30}] {share:4.0%}")
        self.stream.flush()

    def finish(self) -> None:
        """End the bar's line."""
        if self.enabled:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
