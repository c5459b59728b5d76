"""Sessions with no time at all (no start time and no dated message): a time bound
(``--since``/``--until``) cannot place them, so a bounded listing or search leaves them
out, and says how many in its notes rather than dropping them without a word.

Results are one per root session (what the user remembers), so the notes count roots: a
listing, of roots, leaves out the undated ones alone (an undated sub-agent or continuation
is listed with its root). A search also leaves out an undated sub-agent or continuation of
a root in its range, whose hits would have brought that root back: those roots are
counted too.

>>> undated_note(2, "searched")[0][:40]
'2 sessions with no time are not searched'
>>> parts_note(1, more=False)[0][:72]
'in 1 session of the time range, a sub-agent or continuation with no time'
"""

from __future__ import annotations

from typing import Literal

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.lineage import load_ancestry, root_of
from harkback.stages.ports import Deps, RecentQuery
from harkback.stages.records import Session, SessionOverview
from harkback.stages.stage import Step, pure, with_store

UNDATED_COUNTED = 100
"""How many sessions with no time a bounded listing counts before saying "more than"."""

UNDATED_PARTS_READ = 1000
"""How many sub-agents and continuations with no time a bounded search reads to find the
roots in its range they belong to (past it, the note says "at least")."""

LeftOut = Literal["listed", "searched"]

_WITHOUT_A_BOUND: dict[LeftOut, str] = {
    "listed": "a listing without --since/--until shows them, last",
    "searched": "a search without --since/--until searches them too",
}


def undated_note(count: int, left_out: LeftOut = "listed") -> tuple[str, ...]:
    """What a bounded listing (or search) says of the ``count`` sessions it could not
    place in time.

    >>> undated_note(0), undated_note(1)[0][:31], undated_note(101)[0][:37]
    ((), '1 session with no time is not l', 'more than 100 sessions with no time a')
    """
    if not count:
        return ()
    if count > UNDATED_COUNTED:
        said = f"more than {UNDATED_COUNTED} sessions with no time are"
    else:
        said = f"{count} sessions with no time are" if count > 1 else "1 session with no time is"
    return (f"{said} not {left_out}: nothing dates them, so a time bound cannot place them "
            f"({_WITHOUT_A_BOUND[left_out]})",)


def parts_note(count: int, *, more: bool) -> tuple[str, ...]:
    """What a bounded search says of the ``count`` roots in its range whose sub-agent or
    continuation with no time it could not search (``more``: it read as many such parts
    as it reads, so there may be more).

    >>> parts_note(0, more=False), parts_note(2, more=True)[0][:36]
    ((), 'in at least 2 sessions of the time r')
    """
    why = "so a time bound cannot place {} (a search without --since/--until searches {} too)"
    if count:
        sessions = "1 session" if count == 1 and not more else f"{count} sessions"
        return (f"in {'at least ' if more else ''}{sessions} of the time range, a sub-agent or "
                "continuation with no time is not searched: nothing dates it, "
                + why.format("it", "it"),)
    if more:
        return (f"more than {UNDATED_PARTS_READ} sub-agents or continuations with no time are "
                "not searched, and some may belong to sessions of the time range: nothing "
                "dates them, " + why.format("them", "them"),)
    return ()


def undated_left_out(query: RecentQuery, left_out: LeftOut) -> Step[tuple[str, ...]]:
    """The notes on the sessions with no time that ``query``'s time bounds leave out (its
    other filters, sources, projects, the caller's lineage, still apply); none without a
    bound, which leaves none out. A search also counts the roots in range whose undated
    sub-agents or continuations it left out (see the module)."""
    if query.since is None and query.until is None:
        return pure(())
    undated = attrs.evolve(query, since=None, until=None, undated=True,
                           limit=UNDATED_COUNTED + 1)
    roots = with_store(lambda deps: deps.store.recent(undated)).map(
        lambda rows: undated_note(len(rows), left_out))
    if left_out == "listed":
        return roots
    return roots.bind(lambda said: _parts_left_out(query).map(lambda more: (*said, *more)))


def _parts_left_out(query: RecentQuery) -> Step[tuple[str, ...]]:
    """The note on the roots within ``query``'s bounds that have an undated sub-agent or
    continuation: found from those parts up, by the lineage the resolve stage follows."""
    parts = attrs.evolve(query, since=None, until=None, undated=True, parts=True,
                         limit=UNDATED_PARTS_READ + 1)

    def counted(rows: tuple[SessionOverview, ...], known: dict[str, Session]
                ) -> tuple[str, ...]:
        roots = {root.id for root in (root_of(row.session.id, known) for row in rows)
                 if root is not None and query.admits(root.started_at)
                 and root.id not in query.exclude_roots
                 and root.source not in query.hidden_sources}
        return parts_note(len(roots), more=len(rows) > UNDATED_PARTS_READ)

    def read(deps: Deps) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        return deps.store.recent(parts).bind(lambda rows: load_ancestry(
            deps.store, [row.session.id for row in rows]).map(
                lambda known: counted(rows, known)))
    return with_store(read)
