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

from harkback.adapters.stores.migration import moved_on
from harkback.adapters.stores.postgres_memo import Snapshot
from harkback.adapters.stores.postgres_migrations import SCHEMA_VERSION
from harkback.adapters.stores.postgres_text import matching
from harkback.adapters.stores.postgres_writes import SchemaMoved
from harkback.stages.query import Unit

Connection = psycopg.Connection[tuple[Any, ...]]

Sizes = tuple[int, int, int, int]
"""Messages, their tokens, sessions, their title tokens: the index's sizes."""

SNAPSHOT = ("SELECT messages, message_tokens, sessions, session_tokens, generation, rewrites, "
            "(SELECT COALESCE(max(id), 0) FROM messages), (SELECT version FROM harkback_schema) "
            "FROM index_totals")
"""The index's sizes, what a :class:`Snapshot` holds and the schema version, read in one
statement (more columns go before ``FROM``)."""

SNAPSHOT_COLUMNS = 8


def read_snapshot(row: Sequence[Any] | None) -> tuple[Sizes, Snapshot]:
    """The sizes and snapshot from the first columns of a row of :data:`SNAPSHOT`.

    Every search reads it, so a search also sees a database another harkback migrated
    while this one was connected, and is refused (``SchemaMoved``): its words may no longer
    be what the index holds.

    >>> read_snapshot((10, 50, 2, 4, 7, 1, 12, SCHEMA_VERSION))
    ((10, 50, 2, 4), Snapshot(generation=7, messages=10, rewrites=1, top=12))
    >>> try:
    ...     read_snapshot((10, 50, 2, 4, 7, 1, 12, SCHEMA_VERSION + 1))
    ... except SchemaMoved as refused:
    ...     print(str(refused).split(": ")[1][:20])
    nothing was searched
    """
    if row is None:
        return (0, 0, 0, 0), Snapshot(0, 0)
    if row[7] != SCHEMA_VERSION:  # no harkback store opens at another version
        found = 0 if row[7] is None else int(row[7])
        raise SchemaMoved(moved_on(found, SCHEMA_VERSION, refused="nothing was searched"))
    sizes = cast(Sizes, tuple(int(v) for v in row[:4]))
    return sizes, Snapshot(int(row[4]), sizes[0], int(row[5]), int(row[6]))


def with_columns(columns: Sequence[str]) -> str:
    """:data:`SNAPSHOT` with ``columns`` after its own."""
    return SNAPSHOT.replace(" FROM index_totals", "".join(f", {c}" for c in columns)
                            + " FROM index_totals")


def walk(behind: dict[Unit, tuple[int, Snapshot]]) -> tuple[str, list[str]]:
    """A column (and its values) that walks the rows past the lowest id of ``behind``'s
    snapshots once: an array of the rows past each id seen (in order of the ids), then of
    each unit's new matches (in the order of ``behind``)."""
    tops = sorted({made.top for _, made in behind.values()})
    filters = [f"count(*) FILTER (WHERE id > {int(top)})" for top in tops]
    values: list[str] = []
    for unit, (_, made) in behind.items():
        condition, params = matching("messages", unit)
        filters.append(f"count(*) FILTER (WHERE id > {int(made.top)} AND {condition})")
        values += params
    # The id range is the only condition: the tsvector tests are filters, never the index.
    return (f"(SELECT ARRAY[{', '.join(filters)}] FROM messages WHERE id > {int(tops[0])})",
            values)


def brought_forward(found: Sequence[Any], now: Snapshot,
                    behind: dict[Unit, tuple[int, Snapshot]]) -> dict[Unit, int]:
    """The exact count at ``now`` of each unit of ``behind`` that only appends have passed
    since its count was made, from the array :func:`walk` made at ``now``."""
    tops = sorted({made.top for _, made in behind.values()})
    appended = dict(zip(tops, (int(n) for n in found[:len(tops)]), strict=True))
    counts: dict[Unit, int] = {}
    for (unit, (number, made)), new in zip(behind.items(), found[len(tops):], strict=True):
        grown = now.appended_since(made)
        # Rows past the id seen fewer than the total grew: one came in below it.
        if grown is not None and grown == appended[made.top]:
            counts[unit] = number + int(new)
    return counts


def catch_up(connection: Connection, behind: dict[Unit, tuple[int, Snapshot]]
             ) -> tuple[Sizes, Snapshot, dict[Unit, int]]:
    """The sizes and snapshot now, and the exact count now of each unit of ``behind``
    (its count and the snapshot it was made at) that only appends have passed since; the
    others are left out."""
    column, values = walk(behind)
    row = connection.execute(with_columns([column]), values).fetchone()
    sizes, now = read_snapshot(row)
    assert row is not None
    return sizes, now, brought_forward(row[SNAPSHOT_COLUMNS], now, behind)
