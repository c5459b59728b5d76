"""What ``harkback sync`` does with the sessions whose file or row is gone from the source.

The agents delete and move their own histories: Claude Code deletes every transcript
older than ``cleanupPeriodDays`` (30 by default) as it starts, Codex moves a rollout it
archives to ``archived_sessions``, a Hermes session can be deleted from ``state.db``. A
recall store that followed them would forget all but the last month, so **a session whose
item is gone is kept** (still found, shown as ever). Its item's mark stays in the ledger,
marked gone (:meth:`~harkback.stages.imports.Mark.went`): the next sync knows it was
reported already, and ``--prune`` still finds it. A gone item whose sessions another item
still holds was moved, not lost (archived by Codex, a project folder renamed, one folder
imported under two paths): its mark is dropped, and the ledger follows the file.

With ``prune`` (``harkback sync --prune``) the sessions of gone items that no other item
holds are removed and their marks dropped, as every sync did before. The items a source
still holds but asks to leave out (``withdrawn``: Hermes' hidden and archived sessions, a
choice the user made there) are removed whether pruning or not. A session removed so
is let go by the marks other sources keep of gone items too, which would count it as kept
(:meth:`~harkback.stages.imports.ImportLedger.let_go`: those marks are read and written in
one write transaction, so another source's sync meanwhile is never rolled back).

>>> Gone(kept=3, newly=1).removed
0
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import attrs
from returns.result import Failure, Result, Success

from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import ImportLedger, Mark, SourceKey, SourceState
from harkback.stages.ports import SessionStore
from harkback.stages.stage import as_result


@attrs.frozen(kw_only=True)
class Gone:
    """What a sync did with one source's gone items: sessions removed, sessions kept whose
    item is gone (all of them, and ``newly``: those found gone by this sync)."""

    removed: int = 0
    kept: int = 0
    newly: int = 0


async def settle_gone(key: SourceKey, gone: Sequence[str], store: SessionStore,
                      ledger: ImportLedger, *, withdrawn: Sequence[str] = (),
                      marked: Collection[str] = (), prune: bool = False,
                      dry_run: bool = False, now: float = 0.0
                      ) -> Result[Gone, StoreUnavailable]:
    """Keep (or with ``prune`` remove) the sessions of the ``gone`` items of ``key`` and of
    those marked gone before; remove those of the ``withdrawn`` ones. A session another
    item of the source or another source holds, or that this import ``marked`` (its file
    moved), stays, and its gone item is forgotten.

    ``dry_run`` counts and writes nothing. Sessions go before their marks: a run stopped
    between the two removes nothing twice and forgets the items next time.
    """
    remembered = as_result(await ledger.state(key).awaitable())
    if isinstance(remembered, Failure):
        return Failure(remembered.failure())
    marks = remembered.unwrap().marks_by_item()
    went_before = {item for item, mark in marks.items() if mark.gone}
    leaving = [item for item in dict.fromkeys((*gone, *withdrawn, *went_before))
               if item in marks]
    leaves = set(leaving)
    held = {i for item, mark in marks.items() if item not in leaves for i in mark.session_ids}
    held |= set(marked)
    if prune or withdrawn or not leaves <= went_before:
        # One folder imported under two paths (or two sources sharing an id) holds the
        # session twice: the other's ledger says it is imported and would never bring it
        # back. (Only read when something is to be decided: items already marked gone are
        # kept, and an unchanged sync reads no other source's marks.)
        read = await _other_sources(key, ledger)
        if isinstance(read, Failure):
            return Failure(read.failure())
        held.update(i for other in read.unwrap() for mark in other.marks if not mark.gone
                    for i in mark.session_ids)
    dropping = set(withdrawn)
    doomed: dict[str, None] = {}
    forgotten: list[str] = []
    went: list[Mark] = []
    kept: set[str] = set()
    newly: set[str] = set()
    for item in leaving:
        mark = marks[item]
        # A Hermes item is its session's id (marks kept before ids were recorded have none).
        ids = mark.session_ids or ((item,) if key.kind == "hermes" else ())
        loose = [i for i in ids if i not in held]
        if loose and not (prune or item in dropping):
            kept.update(loose)
            if item not in went_before:
                went.append(mark.went())
                newly.update(loose)
            continue
        doomed.update(dict.fromkeys(loose))
        forgotten.append(item)
    if dry_run:
        counted = as_result(await store.sessions(list(doomed)).awaitable()).map(len)
        return counted.map(lambda n: Gone(removed=n, kept=len(kept), newly=len(newly)))
    removed = await _remove(store, list(doomed))
    if isinstance(removed, Failure):
        return Failure(removed.failure())
    if forgotten:
        done = as_result(await ledger.forget(key, forgotten).awaitable())
        if isinstance(done, Failure):
            return Failure(done.failure())
    if went:
        done = as_result(await ledger.keep(key, went, now=now).awaitable())
        if isinstance(done, Failure):
            return Failure(done.failure())
    if doomed:  # the marks other sources keep of gone items, read and narrowed in one write
        done = as_result(await ledger.let_go(list(doomed)).awaitable())
        if isinstance(done, Failure):
            return Failure(done.failure())
    return Success(Gone(removed=removed.unwrap(), kept=len(kept), newly=len(newly)))


async def _remove(store: SessionStore, ids: Sequence[str]) -> Result[int, StoreUnavailable]:
    """Remove the sessions ``ids``; how many were stored."""
    if not ids:
        return Success(0)
    remover = store.session_remover()
    if remover is None:
        return Failure(StoreUnavailable("this store cannot remove sessions"))
    return as_result(await remover.remove_sessions(ids).awaitable())


async def _other_sources(key: SourceKey, ledger: ImportLedger
                         ) -> Result[list[SourceState], StoreUnavailable]:
    """What the ledger remembers of every source but ``key``, with their marks."""
    sources = as_result(await ledger.sources().awaitable())
    if isinstance(sources, Failure):
        return Failure(sources.failure())
    found: list[SourceState] = []
    for other in sources.unwrap():
        if other.key == key:
            continue
        state = as_result(await ledger.state(other.key).awaitable())
        if isinstance(state, Failure):
            return Failure(state.failure())
        found.append(state.unwrap())
    return Success(found)

