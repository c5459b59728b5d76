"""What is remembered of imports from other agents' histories, and the port that keeps it.

An importer reads a source (a Hermes ``state.db``, a folder of Claude Code or Codex
transcripts, a JSON-lines file) and keeps one :class:`Mark` per item it read, so the
next run reads only what changed. Stores that can remember imports give an
:class:`ImportLedger` (:meth:`~harkback.stages.ports.SessionStore.import_ledger`).

>>> state = SourceState(key=SourceKey("codex", "/home/me/.codex/sessions"),
...                     marks=(Mark(item="a.jsonl", fingerprint="12:34"),))
>>> state.marks_by_item()["a.jsonl"].fingerprint
'12:34'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable

GONE = "gone:"
"""What the fingerprint of an item gone from its source starts with (see :class:`Mark`)."""


@attrs.frozen
class SourceKey:
    """A source: its kind (``hermes``, ``claude-code``, ``codex``, ``jsonl``) and location."""

    kind: str
    location: str


@attrs.frozen(kw_only=True)
class Mark:
    """What one item of a source (a file, a session) looked like when it was imported.

    ``session_ids`` are the sessions read from it, so that ``sync --prune`` can remove
    them once the item is gone from its source (marks kept before they were recorded have
    none). An item a sync found gone keeps its mark, :attr:`gone` (its sessions stay in
    the store): the next sync knows it was already reported, and the prune still finds it.

    >>> mark = Mark(item="a.jsonl", fingerprint="12:34").went()
    >>> mark.gone, mark.fingerprint
    (True, 'gone:12:34')
    """

    item: str
    fingerprint: str
    sessions: int = 0
    messages: int = 0
    session_ids: tuple[str, ...] = ()

    @property
    def gone(self) -> bool:
        """Whether a sync found the item gone from its source (its sessions kept)."""
        return self.fingerprint.startswith(GONE)

    def went(self) -> Mark:
        """This mark as the mark of an item gone from its source: its fingerprint matches
        no file or row, so the item is read again should it come back."""
        return self if self.gone else attrs.evolve(self, fingerprint=GONE + self.fingerprint)


@attrs.frozen(kw_only=True)
class SourceState:
    """What the ledger remembers of one source (empty when it was never imported)."""

    key: SourceKey
    first_imported_at: float | None = None
    last_imported_at: float | None = None
    cursor: str = ""
    marks: tuple[Mark, ...] = ()
    sessions: int = 0
    messages: int = 0
    kept_gone: int = 0
    """Of :attr:`sessions`, those of items gone from the source (marked gone): kept in the
    store until ``sync --prune``."""

    def marks_by_item(self) -> dict[str, Mark]:
        """The marks, by item."""
        return {mark.item: mark for mark in self.marks}


class ImportLedger(Protocol):
    """Where importers keep what they imported. Every method returns a container."""

    def state(self, key: SourceKey) -> FutureResult[SourceState, StoreUnavailable]:
        """What is remembered of ``key`` (with its marks)."""
        ...

    def keep(self, key: SourceKey, marks: Sequence[Mark], *, now: float
             ) -> FutureResult[None, StoreUnavailable]:
        """Remember ``marks`` (replacing older marks of the same items); stamp the source."""
        ...

    def advance(self, key: SourceKey, cursor: str, *, now: float
                ) -> FutureResult[None, StoreUnavailable]:
        """Remember that a whole import of ``key`` finished, up to ``cursor``."""
        ...

    def forget(self, key: SourceKey, items: Sequence[str]
               ) -> FutureResult[None, StoreUnavailable]:
        """Drop the marks of ``items`` (gone from the source); unknown items are ignored."""
        ...

    def sources(self) -> FutureResult[tuple[SourceState, ...], StoreUnavailable]:
        """Every source imported so far (without marks), most recently imported first."""
        ...
