"""Sessions with no time at all (no start time and no dated message): a time bound
(``--since``/``--until``) cannot place them, so a bounded listing or search leaves them
out, and says how many in its notes rather than dropping them without a word.

>>> undated_note(2, "searched")[0][:40]
'2 sessions with no time are not searched'
"""

from __future__ import annotations

from typing import Literal

import attrs

from harkback.stages.ports import RecentQuery
from harkback.stages.stage import Step, pure, with_store

UNDATED_COUNTED = 100
"""How many sessions with no time a bounded listing counts before saying "more than"."""

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


def undated_left_out(query: RecentQuery, left_out: LeftOut) -> Step[tuple[str, ...]]:
    """The note on the sessions with no time that ``query``'s time bounds leave out (its
    other filters, sources, projects, the caller's lineage, still apply); none without a
    bound, which leaves none out."""
    if query.since is None and query.until is None:
        return pure(())
    undated = attrs.evolve(query, since=None, until=None, undated=True,
                           limit=UNDATED_COUNTED + 1)
    return with_store(lambda deps: deps.store.recent(undated)).map(
        lambda rows: undated_note(len(rows), left_out))
