"""Ingest a JSON-lines file of sessions into a store, reporting bad lines and going on.

Sessions are stored in batches cut by count, bytes and time (see
:mod:`~harkback.pipeline.batching`), each its own transaction, so a large file commits in
steps and other writers get their turn between them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

import attrs
from returns.result import Failure

from harkback.pipeline.batching import Budget, batched
from harkback.pipeline.progress import Progress
from harkback.stages.errors import BadRecord, StoreUnavailable
from harkback.stages.ingest_format import read_line
from harkback.stages.ports import IngestReport, SessionStore
from harkback.stages.records import Conversation
from harkback.stages.stage import as_result

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class IngestSummary:
    """What an ingest run did: the store's report and the lines that could not be read."""

    report: IngestReport
    bad_lines: tuple[BadRecord, ...] = ()
    store_error: StoreUnavailable | None = None
    read_error: str = ""

    @property
    def ok(self) -> bool:
        """True when every line was stored whole."""
        return not self.bad_lines and self.store_error is None and not self.read_error

    def describe(self) -> str:
        """One line for people."""
        r = self.report
        text = (f"ingested {r.added + r.updated} session(s) ({r.added} added, {r.updated} "
                f"updated), {r.messages} message(s)")
        if self.bad_lines:
            text += f"; skipped {len(self.bad_lines)} damaged line(s) or field(s)"
        return text


def read_conversations(lines: Iterable[str], on_bad: Callable[[BadRecord], None]
                       ) -> Iterable[tuple[int, Conversation]]:
    """Parse numbered lines (1-based) with their sizes in bytes; blank lines skip.

    What cannot be read is passed to ``on_bad``: a line that is no session; a message
    dropped or a time ignored in a session kept (see
    :func:`~harkback.stages.ingest_format.read_line`); a session id seen on an earlier
    line (the last copy is kept, as the store keeps it).

    >>> bad = []
    >>> rows = list(read_conversations(['{"id": "a"}', '{"id": "a"}'], bad.append))
    >>> len(rows), bad[0].message()
    (2, "line 2: duplicate session id 'a' (also on line 1; the last copy is kept)")
    """
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parsed = read_line(line, number)
        if isinstance(parsed, Failure):
            on_bad(parsed.failure())
            continue
        read = parsed.unwrap()
        for dropped in read.dropped:
            on_bad(dropped)
        session_id = read.conversation.session.id
        if session_id in seen:
            on_bad(BadRecord(f"duplicate session id {session_id!r} (also on line "
                             f"{seen[session_id]}; the last copy is kept)", number))
        seen[session_id] = number
        yield len(line.encode("utf-8", "surrogatepass")), read.conversation


async def ingest_file(path: Path, store: SessionStore, *,
                      on_bad: Callable[[BadRecord], None] = lambda _: None,
                      progress: bool | None = None) -> IngestSummary:
    """Ingest ``path`` in batches; a failing batch stops the run with ``store_error`` set.

    A file that cannot be read is reported in ``read_error``. Reading and parsing run on
    a worker thread, so a large file never stalls the event loop.
    """
    bad: list[BadRecord] = []

    def record_bad(error: BadRecord) -> None:
        bad.append(error)
        on_bad(error)

    report = IngestReport()
    try:
        handle = path.open(encoding="utf-8", errors="replace")
        bar = Progress(total=path.stat().st_size, label=f"ingest {path.name}", enabled=progress)
        with handle:
            budget = Budget()
            batches = batched(_advancing(read_conversations(handle, record_bad), bar), budget)
            while batch := await asyncio.to_thread(next, batches, None):
                started = time.monotonic()
                done = as_result(await store.ingest(batch))
                budget.took(time.monotonic() - started)
                if isinstance(done, Failure):
                    bar.finish()
                    return IngestSummary(report=report, bad_lines=tuple(bad),
                                         store_error=done.failure())
                report = report + done.unwrap()
    except OSError as error:
        return IngestSummary(report=report, bad_lines=tuple(bad),
                             read_error=f"cannot read {path}: {error.strerror or error}")
    bar.finish()
    return IngestSummary(report=report, bad_lines=tuple(bad))


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


def _advancing(rows: Iterable[tuple[int, Conversation]], bar: Progress
               ) -> Iterator[tuple[int, Conversation]]:
    for size, conversation in rows:
        bar.advance(size)
        yield size, conversation
