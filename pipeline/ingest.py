"""The ingest format (one session per JSON line) as a source: its lines read, bad ones
reported and skipped, and :class:`JsonlImporter` for the import machinery, which
``harkback ingest`` and ``import jsonl`` both run
(:func:`~harkback.pipeline.importing.ingest_file`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

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
from harkback.stages.errors import BadRecord, StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.ingest_format import parse_line
from harkback.stages.records import Conversation

BATCH = 500

T = TypeVar("T")


def read_conversations(lines: Iterable[str], on_bad: Callable[[BadRecord], None]
                       ) -> Iterable[tuple[int, Conversation]]:
    """Parse numbered lines (1-based), passing bad ones to ``on_bad``; blank lines skip."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parsed = parse_line(line, number)
        if isinstance(parsed, Failure):
            on_bad(parsed.failure())
        else:
            yield len(line.encode("utf-8", "surrogatepass")), parsed.unwrap()


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last one shorter), read lazily.

    >>> list(chunked(range(5), 2))
    [[0, 1], [2, 3], [4]]
    """
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


@attrs.frozen
class JsonlImporter:
    """An ingest-format file (one session per JSON line) as an import source.

    A file whose size and mtime did not change since its last import is skipped;
    otherwise it is read whole (the store rewrites only what differs). Bad lines are
    counted and passed to ``on_bad``.
    """

    path: Path
    on_bad: Callable[[BadRecord], None] = lambda _: None

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
        return Success(ImportPlan(total=size, units=self._units(fingerprint)))

    def _units(self, fingerprint: str) -> Units:
        tally = Tally()
        sessions = messages = 0

        def bad(error: BadRecord) -> None:
            tally.add("bad line")
            self.on_bad(error)

        batch: list[Conversation] = []
        work = 0
        try:
            with self.path.open(encoding="utf-8", errors="replace") as handle:
                for size, conversation in read_conversations(handle, bad):
                    batch.append(conversation)
                    work += size
                    sessions += 1
                    messages += len(conversation.messages)
                    if len(batch) >= BATCH:
                        yield Success(ImportUnit(conversations=tuple(batch),
                                                 left_out=tally.items(), work=work))
                        batch, work, tally = [], 0, Tally()
        except OSError as error:
            yield Failure(StoreUnavailable(f"cannot read {self.path}: {error}"))
            return
        mark = Mark(item=self.path.name, fingerprint=fingerprint, sessions=sessions,
                    messages=messages)
        yield Success(ImportUnit(conversations=tuple(batch), marks=(mark,),
                                 left_out=tally.items(), work=work))


