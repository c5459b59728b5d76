"""A listing filtered by ``--source`` or ``--project`` whose sessions are all sub-agents or
continuations lists nothing: recent mode lists root sessions only. It then says so, and
names the sessions they belong to (what the listing would show of them).

The store is asked (one listing of at most :data:`PARTS_READ` sessions, then their
ancestry) only when a filtered listing found nothing, so every other listing costs what it did.
The caller's own lineage (``--current-session``) is left out of the note as out of every
listing: its sessions are neither counted nor named (a listing that held some is asked
again without them).

>>> print(parts_note(3, ("root-a",), "from source 'subagent'", more=False)[0][:72])
the 3 sessions from source 'subagent' are sub-agents or continuations (r
"""

from __future__ import annotations

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.lineage import load_ancestry, root_of
from harkback.stages.ports import Deps, RecentQuery
from harkback.stages.recent import listing_query
from harkback.stages.records import Session, SessionOverview
from harkback.stages.request import SearchRequest
from harkback.stages.result import BrowseResult
from harkback.stages.stage import Step, pure, with_store
from harkback.stages.unheld_sources import shown

PARTS_READ = 20
"""How many of the filter's sub-agents and continuations a listing that found nothing reads."""

ROOTS_NAMED = 5
"""How many of the sessions they belong to the note names."""

Parts = tuple[tuple[SessionOverview, ...], dict[str, Session]]
"""Sub-agents and continuations listed, with their ancestry (what roots them)."""


def parts_note(count: int, roots: tuple[str, ...], which: str, *, more: bool
               ) -> tuple[str, ...]:
    """The note on ``count`` sessions ``which`` (the filter, as said) that are no root,
    ``roots`` the sessions they belong to (``more``: there may be more than ``count``).

    >>> parts_note(0, (), "of project 'x'", more=False)
    ()
    >>> print(parts_note(20, ("r",), "of project 'x'", more=True)[0][:61])
    more than 20 sessions of project 'x' are sub-agents or contin
    """
    if not count:
        return ()
    said = (f"more than {count} sessions" if more else
            "the 1 session" if count == 1 else f"the {count} sessions")
    one = count == 1 and not more
    verb = "is a sub-agent or continuation" if one else "are sub-agents or continuations"
    belong = "the session it belongs to" if one else "the sessions they belong to"
    named = ", ".join(shown(root) for root in roots[:ROOTS_NAMED])
    others = f" and {len(roots) - ROOTS_NAMED} more" if len(roots) > ROOTS_NAMED else ""
    return (f"{said} {which} {verb} (recent lists root sessions only); "
            f"{belong}: {named}{others} (harkback show ID shows one)",)


def _which(request: SearchRequest) -> str:
    parts = []
    if request.sources:
        parts.append(f"from source{'s' if len(request.sources) > 1 else ''} "
                     + ", ".join(shown(s) for s in request.sources))
    if request.projects:
        parts.append(f"of project{'s' if len(request.projects) > 1 else ''} "
                     + ", ".join(shown(p) for p in request.projects))
    bounded = request.since is not None or request.until is not None
    return " ".join(parts) + (" in the time range" if bounded else "")


def parts_only_noted(request: SearchRequest, result: BrowseResult) -> Step[BrowseResult]:
    """``result`` with the note on the filter's sessions that are no root, when it listed
    nothing; as it is otherwise (the store not asked, or unable to say). The caller's own
    lineage (``--current-session``) is left out of the note as out of the listing."""
    if result.results or not (request.sources or request.projects):
        return pure(result)

    def noted(found: Parts) -> BrowseResult:
        rows, known = found
        read = rows[:PARTS_READ]
        found_roots = (root_of(row.session.id, known) for row in read)
        roots = tuple(dict.fromkeys(root.id for root in found_roots if root is not None))
        note = parts_note(len(read), roots, _which(request), more=len(rows) > PARTS_READ)
        return attrs.evolve(result, notes=(*result.notes, *note))

    return (listing_query(request).bind(lambda listing: _not_mine(
        attrs.evolve(listing, limit=PARTS_READ + 1, parts=True), frozenset(listing.exclude_roots)))
            .map(noted).lash(lambda _error: pure(result)))


def _not_mine(query: RecentQuery, mine: frozenset[str]) -> Step[Parts]:
    """The sessions ``query`` lists (sub-agents and continuations) whose root is none of
    ``mine``, with their ancestry: at least :data:`PARTS_READ` + 1 of them, or all there are.
    Those of ``mine`` found are left out by id and the store asked again: dropped after the
    read, they would leave a listing of :data:`PARTS_READ` short of the others it could
    hold, and its "more than" unsure. Each read asks for twice as many as the last: a
    caller with thousands of sub-agents of its own under the filter costs a dozen reads,
    not one per :data:`PARTS_READ` (20,000 of them took a thousand, nested past Python's
    recursion limit)."""
    def read(deps: Deps) -> FutureResult[Parts, StoreUnavailable]:
        def ancestry(rows: tuple[SessionOverview, ...]) -> FutureResult[Parts, StoreUnavailable]:
            listed = {row.session.id: row.session for row in rows}
            parents = (row.session.parent_session_id or "" for row in rows)
            return load_ancestry(deps.store, parents, known=listed).map(
                lambda known: (rows, known))
        return deps.store.recent(query).bind(ancestry)

    def sorted_out(found: Parts) -> Step[Parts]:
        rows, known = found
        own = frozenset(row.session.id for row in rows
                        if (root := root_of(row.session.id, known)) is not None
                        and root.id in mine)
        others = tuple(row for row in rows if row.session.id not in own)
        # Enough others, or a read short of its limit (it held every one left), is the answer.
        if not own or len(others) > PARTS_READ or len(rows) < query.limit:
            return pure((others, known))
        return _not_mine(attrs.evolve(query, limit=2 * query.limit,
                                      exclude_roots=(*query.exclude_roots, *own)), mine)

    return with_store(read).bind(sorted_out)
