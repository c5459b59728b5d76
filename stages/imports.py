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

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Protocol

import attrs
from returns.future import FutureResult

from harkback.stages.errors import SourceUnreadable, StoreUnavailable

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

    def without(self, removed: Collection[str], messages: Callable[[Sequence[str]], int]
                ) -> Mark | None:
        """This mark without the sessions ``removed`` from the store: None when it names no
        other; else naming and counting those left, with ``messages(left)`` messages (what
        the store holds of them).

        >>> mark = Mark(item="a", fingerprint="gone:1", sessions=2, messages=9,
        ...             session_ids=("S", "T")).without({"S"}, lambda ids: 4)
        >>> mark.session_ids, mark.sessions, mark.messages
        (('T',), 1, 4)
        """
        left = tuple(i for i in self.session_ids if i not in removed)
        if not left:
            return None
        return attrs.evolve(self, session_ids=left, sessions=len(left), messages=messages(left))


def kept_only_gone(marks: Iterable[Mark], held: Collection[str] = ()) -> int:
    """How many sessions only the gone ones of ``marks`` keep: those they name that no live
    mark among them names, nor ``held`` (a gone mark kept before session ids were recorded
    counts its sessions). A session two gone files held counts once.

    >>> live = Mark(item="a", fingerprint="1", session_ids=("S",))
    >>> gone = Mark(item="b", fingerprint="gone:1", sessions=2, session_ids=("S", "T"))
    >>> kept_only_gone([live, gone])
    1
    """
    marks = tuple(marks)
    live = {i for mark in marks if not mark.gone for i in mark.session_ids}
    loose = {i for mark in marks if mark.gone for i in mark.session_ids
             if i not in live and i not in held}
    return len(loose) + sum(m.sessions for m in marks if m.gone and not m.session_ids)


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
    """Of :attr:`sessions`, those kept only because their items are gone from the source
    (:func:`kept_only_gone`; by :meth:`ImportLedger.sources`, a session a live item of another
    source holds is not counted): kept in the store until ``sync --prune``."""

    def marks_by_item(self) -> dict[str, Mark]:
        """The marks, by item."""
        return {mark.item: mark for mark in self.marks}

    def kind_clash(self, kind: str) -> SourceUnreadable | None:
        """Why this source cannot be imported as ``kind`` (None: it can): it was imported
        as another kind. The ledger keeps one record per location, so a second kind would
        relabel the first's, and take the first's files for its own gone ones.

        >>> SourceState(key=SourceKey("codex", "/x"), first_imported_at=1.0).kind_clash(
        ...     "claude-code").reason[:44]
        '/x was imported as codex: importing it as cl'
        """
        if self.first_imported_at is None or self.key.kind == kind:
            return None
        return SourceUnreadable(
            f"{self.key.location} was imported as {self.key.kind}: importing it as {kind} "
            f"too would relabel that record and take its {self.key.kind} files for gone "
            f"ones; name the folder (or file) that holds only the {kind} transcripts")


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

    def let_go(self, session_ids: Sequence[str]) -> FutureResult[None, StoreUnavailable]:
        """Take ``session_ids`` (removed from the store) out of every source's gone marks
        (:meth:`Mark.without`), reading and writing them in one write transaction, so a mark
        another process wrote meanwhile is never overwritten. No live mark and no source's
        import time changes."""
        ...
