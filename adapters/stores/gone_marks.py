"""The import ledger's gone marks in SQL, for SQLite and PostgreSQL alike: how many sessions
only they keep (``harkback sources``' "kept gone"), and letting go of the sessions a sync
removed from the store.

A mark is gone when its fingerprint starts with ``gone:`` (:attr:`Mark.gone
<harkback.stages.imports.Mark.gone>`); its item's sessions stay in the store until ``sync
--prune``. A session a live mark names (of any source) is not kept because of a gone one,
and a session two gone files named is kept once.

>>> gone("m")
"substr(m.fingerprint, 1, 5) = 'gone:'"
>>> forgotten, narrowed = letting_go(
...     [("/a", Mark(item="x", fingerprint="gone:1", session_ids=("S",))),
...      ("/b", Mark(item="y", fingerprint="gone:2", sessions=2, messages=7,
...                  session_ids=("S", "T")))], {"S"}, lambda ids: 3)
>>> forgotten, [(where, m.session_ids, m.messages) for where, m in narrowed]
([('/a', 'x')], [('/b', ('T',), 3)])
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from harkback.stages.imports import GONE, Mark


def gone(alias: str) -> str:
    """The SQL condition that the ``import_marks`` row ``alias`` is a gone mark."""
    return f"substr({alias}.fingerprint, 1, {len(GONE)}) = '{GONE}'"


LIVE_SESSIONS = ("SELECT l.session_id FROM import_mark_sessions AS l JOIN import_marks AS k "
                 f"ON k.location = l.location AND k.item = l.item WHERE NOT {gone('k')}")
"""The sessions live marks (of every source) name: ``l.session_id``."""


def kept_only_gone(not_live: str) -> str:
    """A ``WITH kept (location, n)`` clause: for each location, the sessions its gone marks
    name for which ``not_live`` holds (a condition on ``g.session_id``: no live mark names
    it), each once, and the sessions of its gone marks kept before ids were recorded."""
    return ("WITH kept (location, n) AS ("
            "SELECT g.location, count(DISTINCT g.session_id) FROM import_mark_sessions AS g "
            "JOIN import_marks AS m ON m.location = g.location AND m.item = g.item "
            f"WHERE {gone('m')} AND {not_live} GROUP BY g.location UNION ALL "
            "SELECT m.location, sum(m.sessions) FROM import_marks AS m "
            f"WHERE {gone('m')} AND NOT EXISTS (SELECT 1 FROM import_mark_sessions AS g "
            "WHERE g.location = m.location AND g.item = m.item) GROUP BY m.location) ")


KEPT_OF_SOURCE = ("LEFT JOIN (SELECT location, sum(n) AS n FROM kept GROUP BY location) "
                  "AS gone_kept ON gone_kept.location = s.location")
"""Joins what the ``kept`` clause counts of the source ``s`` (``gone_kept.n``; one row, so
``kept`` is counted once, not once per source)."""


def naming(among: str) -> str:
    """The gone marks (``location, item, fingerprint, sessions, messages``) that name a
    session for which ``among`` holds (a condition on ``g.session_id``)."""
    # The ids' list is probed once for each session row (CROSS JOIN keeps SQLite's order):
    # probing it for each mark, as SQLite chose, took 0.5 CPU s for 100 ids at 60k marks.
    return ("SELECT DISTINCT m.location, m.item, m.fingerprint, m.sessions, m.messages "
            "FROM import_mark_sessions AS g CROSS JOIN import_marks AS m "
            "WHERE m.location = g.location AND m.item = g.item "
            f"AND {among} AND {gone('m')}")


def letting_go(found: Iterable[tuple[str, Mark]], removed: Collection[str],
               messages: Callable[[Sequence[str]], int]
               ) -> tuple[list[tuple[str, str]], list[tuple[str, Mark]]]:
    """What taking the sessions ``removed`` out of the marks ``found`` (by location) does:
    the ``(location, item)`` of those left naming none, to forget, and the others narrowed
    (:meth:`~harkback.stages.imports.Mark.without`), to keep."""
    forgotten: list[tuple[str, str]] = []
    narrowed: list[tuple[str, Mark]] = []
    for location, mark in found:
        left = mark.without(removed, messages)
        if left is None:
            forgotten.append((location, mark.item))
        elif left != mark:
            narrowed.append((location, left))
    return forgotten, narrowed
