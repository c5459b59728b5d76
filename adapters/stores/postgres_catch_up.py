"""Bringing exact word counts forward past other machines' ingests, by counting only the
rows they added.

An exact count made at one :class:`~harkback.adapters.stores.postgres_memo.Snapshot` is
still exact later plus the matches among the rows added since, as long as no message row
was deleted or rewritten (``index_totals.rewrites``, moved by triggers, says so) and every
row added since has an id past the highest one the count saw. Ingests take ids in turn
under the store's write lock, so that holds; it is checked anyway, as a row given a lower
id by a writer that committed later would break it: the rows past that id must be exactly
as many as the message total grew. Where the check fails the count is left out, and the
caller counts it again over the whole index.

One statement does it: the index's totals, and one walk over the rows past the lowest id
seen (a range of the primary key, the rows' own ``tsvector`` tested there, never the GIN
index) counting every unit's new matches and the rows past each id seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import psycopg

from harkback.adapters.stores.postgres_memo import Snapshot
from harkback.adapters.stores.postgres_text import matching
from harkback.stages.query import Unit

Connection = psycopg.Connection[tuple[Any, ...]]

Sizes = tuple[int, int, int, int]
"""Messages, their tokens, sessions, their title tokens: the index's sizes."""

SNAPSHOT = ("SELECT messages, message_tokens, sessions, session_tokens, generation, rewrites, "
            "(SELECT COALESCE(max(id), 0) FROM messages) FROM index_totals")
"""The index's sizes and what a :class:`Snapshot` holds, read in one statement (more
columns go before ``FROM``)."""

SNAPSHOT_COLUMNS = 7


def read_snapshot(row: Sequence[Any] | None) -> tuple[Sizes, Snapshot]:
    """The sizes and snapshot from the first columns of a row of :data:`SNAPSHOT`.

    >>> read_snapshot((10, 50, 2, 4, 7, 1, 12))
    ((10, 50, 2, 4), Snapshot(generation=7, messages=10, rewrites=1, top=12))
    """
    if row is None:
        return (0, 0, 0, 0), Snapshot(0, 0)
    sizes = cast(Sizes, tuple(int(v) for v in row[:4]))
    return sizes, Snapshot(int(row[4]), sizes[0], int(row[5]), int(row[6]))


def with_columns(columns: Sequence[str]) -> str:
    """:data:`SNAPSHOT` with ``columns`` after its own."""
    return SNAPSHOT.replace(" FROM index_totals", "".join(f", {c}" for c in columns)
                            + " FROM index_totals")


def catch_up(connection: Connection, behind: dict[Unit, tuple[int, Snapshot]]
             ) -> tuple[Sizes, Snapshot, dict[Unit, int]]:
    """The sizes and snapshot now, and the exact count now of each unit of ``behind``
    (its count and the snapshot it was made at) that only appends have passed since; the
    others are left out."""
    tops = sorted({made.top for _, made in behind.values()})
    units = list(behind)
    filters = [f"count(*) FILTER (WHERE id > {int(top)})" for top in tops]
    values: list[str] = []
    for unit in units:
        condition, params = matching("messages", unit)
        filters.append(f"count(*) FILTER (WHERE id > {int(behind[unit][1].top)} "
                       f"AND {condition})")
        values += params
    # The subquery keeps the planner on the id range: the tsvector tests are filters only.
    walk = (f"(SELECT ARRAY[{', '.join(filters)}] FROM messages "
            f"WHERE id > {int(tops[0])})")
    row = connection.execute(with_columns([walk]), values).fetchone()
    sizes, now = read_snapshot(row)
    assert row is not None
    found = [int(n) for n in row[SNAPSHOT_COLUMNS]]
    appended = dict(zip(tops, found[:len(tops)], strict=True))
    counts: dict[Unit, int] = {}
    for unit, new in zip(units, found[len(tops):], strict=True):
        number, made = behind[unit]
        grown = now.appended_since(made)
        # Rows past the id seen fewer than the total grew: one came in below it.
        if grown is not None and grown == appended[made.top]:
            counts[unit] = number + new
    return sizes, now, counts
