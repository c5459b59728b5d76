"""Which sessions ``recent`` lists as roots, a loop of parents included.

A root is a session whose parent is not stored. A damaged store (or two sources naming
each other's sessions as parents) can link sessions in a loop, A's parent B and B's
parent A: no member is such a root, and the whole lineage dropped out of the listing,
though a search found it. A loop is listed by the member a search resolves it to
(:func:`harkback.stages.lineage.root_of`): the earliest, unknown start times last, then
by id.

The test is made per session that ``recent`` reads, newest first, only of one whose
parent is stored: its parents are walked while each comes after it, and a walk that comes
back to it shows it is the first of a loop. A continuation's parent started before it,
so the walk stops at once: a listing costs what it did.

>>> "WITH RECURSIVE" in is_root()
True
"""

from __future__ import annotations


def _key(alias: str, collate: str) -> str:
    """The order of :func:`harkback.stages.lineage.root_of`'s loops, as a row value."""
    return (f"({alias}.started_at IS NULL, coalesce({alias}.started_at, 0), "
            f"{alias}.id{collate})")


def is_root(collate: str = "") -> str:
    """The test of a listed root, for a ``sessions AS s`` row (``collate``: how ids are
    ordered, PostgreSQL's ``COLLATE "C"`` to order them as SQLite and Python do)."""
    return (
        # A lookup per row read, not NOT EXISTS: under this OR, PostgreSQL hashes every
        # session's id (tens of ms at 60k sessions) before the first row, where a listing
        # reads a few rows of an index; a scalar subquery is never hashed.
        "((SELECT p.id FROM sessions AS p WHERE p.id = s.parent_session_id) IS NULL "
        "OR s.id IN (WITH RECURSIVE walk(at) AS ("
        "  SELECT s.parent_session_id"
        "  UNION"  # each session once: a loop the walk entered from outside ends too
        "  SELECT a.parent_session_id FROM walk AS w JOIN sessions AS a ON a.id = w.at"
        f"  WHERE w.at <> s.id AND {_key('a', collate)} > {_key('s', collate)})"
        " SELECT at FROM walk WHERE at = s.id))")
