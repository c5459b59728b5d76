"""A watch names an unreadable file (or folder) once, not at every re-sync that meets it.

An import names a whole file it cannot read (a named pipe among transcripts, a link to
``/dev/zero``) each time it lists it: every re-sync of a watch did, two lines per message
an agent appended, for as long as it ran. :class:`NamedOnce` remembers what each such file
was when named (size, mtime, kind) and leaves it out of a later report while it is the
same: changed, it is named again, and so is everything after the watch restarts. Damaged
lines of a file are not affected: a file is read again only when it changed.

>>> from harkback.adapters.sources.importing import Skip
>>> from harkback.pipeline.sync import SourceReport
>>> fifo = Skip("/nowhere/x.jsonl", None, "unreadable file: not a regular file")
>>> report = SourceReport(kind="claude-code", location="/p", status="synced",
...                       skipped=(fifo,), skips=1)
>>> once = NamedOnce()
>>> once.fresh(report).skips, once.fresh(report).skips
(1, 0)
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable

import attrs

from harkback.pipeline.sync import SourceReport

State = tuple[int, int, int] | None
"""What a path was when named: size, mtime (ns), kind of file; None when gone."""


@attrs.define
class NamedOnce:
    """The whole files (and folders) each source's last report named unreadable, with what
    each was then."""

    named: dict[tuple[str, str], dict[tuple[str, str], State]] = attrs.field(factory=dict)

    def saw(self, reports: Iterable[SourceReport]) -> None:
        """Remember what ``reports`` (the sync before the watch) named."""
        for report in reports:
            self.fresh(report)

    def fresh(self, report: SourceReport) -> SourceReport:
        """``report`` without the whole files it names that were named before, unchanged."""
        source = (report.kind, report.location)
        before, now = self.named.get(source, {}), {}
        kept = []
        for skip in report.skipped:
            if skip.line is None:
                key, state = (skip.file, skip.reason), _state(skip.file)
                now[key] = state
                if key in before and before[key] == state:
                    continue
            kept.append(skip)
        # A re-sync names every file of its source it cannot read: one it no longer names
        # was read (or is gone) and is forgotten, so it is named again once it cannot be
        # read again (a link to a disk unmounted twice is the same link), and what is kept
        # stays as small as the source's unreadable files. A failed re-sync forgets nothing.
        self.named[source] = now if report.status == "synced" else {**before, **now}
        dropped = len(report.skipped) - len(kept)
        return attrs.evolve(report, skipped=tuple(kept),
                            skips=report.skips - dropped) if dropped else report


def _state(path: str) -> State:
    try:
        found = os.stat(path)
    except OSError:
        try:
            found = os.lstat(path)  # a link to nothing, or a loop: the link itself
        except OSError:
            return None
    return found.st_size, found.st_mtime_ns, stat.S_IFMT(found.st_mode)
