"""What ``harkback sources`` prints: the imported sources as a table or as JSON.

A source's sessions include those kept although their file or row is gone at the source
(:mod:`~harkback.pipeline.sync_gone`): the table and the JSON say how many.

>>> print(describe_sources(()))
Nothing imported yet (see `harkback import --help`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harkback.pipeline.output import WHEN_WIDTH
from harkback.pipeline.terminal import one_line
from harkback.stages.imports import SourceState
from harkback.stages.result import when_text

KEPT_GONE_NOTE = ("kept gone: of the sessions, those kept in the store only because their file "
                  "or row is gone at the source (each once; not one another imported file "
                  "still holds); `harkback sync --prune` removes them")


def describe_sources(sources: Sequence[SourceState]) -> str:
    """A table of imported sources for ``harkback sources``."""
    if not sources:
        return "Nothing imported yet (see `harkback import --help`)."
    # The time's column holds the longest time shown (a month's name, an offset): at 30
    # wide, every row's numbers stood right of the header's.
    header = (f"{'kind':<12} {'last import':<{WHEN_WIDTH}} {'sessions':>8} {'kept gone':>9} "
              f"{'messages':>9}  location")
    lines = [header, "-" * len(header)]
    for s in sources:
        lines.append(f"{s.key.kind:<12} {when_text(s.last_imported_at):<{WHEN_WIDTH}} "
                     f"{s.sessions:>8} "
                     f"{s.kept_gone:>9} {s.messages:>9}  {one_line(s.key.location)}")
    if any(s.kept_gone for s in sources):
        lines.append(KEPT_GONE_NOTE)
    return "\n".join(lines)


def source_payload(source: SourceState) -> dict[str, Any]:
    """The JSON form of one imported source."""
    return {"kind": source.key.kind, "location": source.key.location,
            "first_imported_at": source.first_imported_at,
            "last_imported_at": source.last_imported_at,
            "last_import": when_text(source.last_imported_at),
            "sessions": source.sessions, "kept_gone": source.kept_gone,
            "messages": source.messages}
