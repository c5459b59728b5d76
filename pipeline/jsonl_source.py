"""An ingest-format file (one session per JSON line) as an import source.

Its sessions are read in batches cut by count, bytes and time (see
:mod:`~harkback.pipeline.batching`); what cannot be read whole is counted and named
``file:line`` (see :func:`~harkback.pipeline.ingest.read_conversations`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources.importing import (
    ImportPlan,
    ImportUnit,
    Tally,
    Units,
    file_fingerprint,
    no_units,
)
from harkback.pipeline.batching import Budget, batched
from harkback.pipeline.ingest import read_conversations
from harkback.stages.errors import BadRecord, StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.records import Conversation


@attrs.frozen
class JsonlImporter:
    """An ingest-format file (one session per JSON line) as an import source.

    A file whose size and mtime did not change since its last import is skipped;
    otherwise it is read whole (the store rewrites only what differs). Bad lines, dropped
    messages, ignored times and repeated session ids are counted and named (see
    :func:`~harkback.pipeline.ingest.read_conversations`).
    """

    path: Path

    @property
    def key(self) -> SourceKey:
        """The source: kind ``jsonl`` and the file's resolved path."""
        return SourceKey(kind="jsonl", location=str(self.path))

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan reading the file, unless it is unchanged since ``state``."""
        try:
            fingerprint = file_fingerprint(self.path)
            size = self.path.stat().st_size
        except OSError as error:
            return Failure(StoreUnavailable(
                f"cannot read {self.path}: {error.strerror or error}"))
        old = state.marks_by_item().get(self.path.name)
        if not full and old is not None and old.fingerprint == fingerprint:
            return Success(ImportPlan(total=0, units=no_units(), unchanged=old.sessions))
        budget = Budget()
        return Success(ImportPlan(total=size, units=self._units(fingerprint, budget),
                                  took=budget.took))

    def _units(self, fingerprint: str, budget: Budget) -> Units:
        tally = Tally()
        sessions = messages = 0

        def bad(error: BadRecord) -> None:
            tally.at(str(self.path), error.line)
            tally.skip(*_damage(error))

        try:
            with self.path.open(encoding="utf-8", errors="replace") as handle:
                sized = ((size, (size, c)) for size, c in read_conversations(handle, bad))
                for batch in batched(sized, budget):
                    yield Success(self._unit(batch, tally))
                    sessions += len(batch)
                    messages += sum(len(c.messages) for _, c in batch)
                    tally = Tally()
        except OSError as error:
            yield Failure(StoreUnavailable(f"cannot read {self.path}: {error}"))
            return
        # The file's mark is kept once all of it is stored.
        mark = Mark(item=self.path.name, fingerprint=fingerprint, sessions=sessions,
                    messages=messages)
        yield Success(ImportUnit(marks=(mark,), left_out=tally.items(),
                                 skipped=tuple(tally.named), skips=tally.skips))

    @staticmethod
    def _unit(batch: Sequence[tuple[int, Conversation]], tally: Tally) -> ImportUnit:
        return ImportUnit(conversations=tuple(c for _, c in batch), left_out=tally.items(),
                          skipped=tuple(tally.named), skips=tally.skips,
                          work=sum(size for size, _ in batch))


def _damage(error: BadRecord) -> tuple[str, str]:
    """What kind of damage a bad record of the ingest format is (to count it by), and what
    is left of its reason to say.

    >>> _damage(BadRecord("messages[2].role: expected ... (message dropped)", 4))
    ('message dropped', 'messages[2].role: expected ...')
    """
    for kind in ("message dropped", "time ignored"):
        if error.reason.endswith(f" ({kind})"):
            return kind, error.reason.removesuffix(f" ({kind})")
    if error.reason.startswith("duplicate session id"):
        return "duplicate session id", error.reason.removeprefix("duplicate session id ")
    return "bad line", error.reason
