"""What an ``ingest``, ``import`` or ``sync`` has done so far, kept as it goes: what the
JSON of one stopped on the way (Ctrl-C, SIGTERM) says it kept.

Such a payload printed only ``{"success": false, "error": "interrupted"}``, while every
batch committed before the interrupt is kept. :class:`SoFar` hears each import's outcome as
its units are stored (``run_import(seen=...)``) and which imports ended, so a stopped
command prints its usual payload with the counts so far, the source cut short marked
``"interrupted": true``.

>>> from harkback.stages.imports import SourceKey
>>> so_far = SoFar()
>>> so_far.saw(ImportOutcome(key=SourceKey(kind="jsonl", location="/in.jsonl")))
>>> [(p["location"], p["success"], p["interrupted"]) for p in so_far.sources_payload()]
[('/in.jsonl', False, True)]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harkback.pipeline.importing import ImportOutcome
from harkback.stages.imports import SourceKey

if TYPE_CHECKING:
    from harkback.pipeline.sync import SourceReport


class SoFar:
    """The outcomes of the imports of one command, as far as each got, and which ended."""

    def __init__(self) -> None:
        """Nothing done yet."""
        self.outcomes: dict[SourceKey, ImportOutcome] = {}
        self.ended: set[SourceKey] = set()
        self.reports: list[SourceReport] = []
        """``sync``'s reports of the sources it finished."""

    def saw(self, outcome: ImportOutcome) -> None:
        """Keep ``outcome``: what its import has stored so far."""
        self.outcomes[outcome.key] = outcome

    def ended_with(self, outcome: ImportOutcome) -> ImportOutcome:
        """Keep ``outcome`` as its import's last (the import ended); returns it."""
        self.saw(outcome)
        self.ended.add(outcome.key)
        return outcome

    def cut_short(self) -> list[ImportOutcome]:
        """The outcomes of the imports that did not end: stopped on the way."""
        return [o for key, o in self.outcomes.items() if key not in self.ended]

    def sources_payload(self) -> list[dict[str, Any]]:
        """``import --json``'s ``sources``: each import begun, the one cut short marked."""
        return [{**o.to_payload(), **({} if key in self.ended else
                                      {"success": False, "interrupted": True})}
                for key, o in self.outcomes.items()]

    def one_payload(self, key: SourceKey) -> dict[str, Any]:
        """``ingest --json``'s payload: its one import, ``key``, as far as it got."""
        return self.outcomes.get(key, ImportOutcome(key=key)).to_payload()
