"""Sessions' links (parent, source, start) in SQL rows: what the walk to a lineage's root
reads (``SessionStore.session_links``), without the rest of a session.

>>> link_from_row(("b", "a", "cli", 1_770_000_000.0))
SessionLink(id='b', parent_session_id='a', source='cli', started_at=1770000000.0)
>>> links_by_id(["s1", "s2"]).params
('["s1", "s2"]',)
"""

from __future__ import annotations

from collections.abc import Iterable

from harkback.adapters.stores.sql.statement import Row, Statement, json_list
from harkback.stages.records import EARLIEST_EPOCH, LATEST_EPOCH, Session, SessionLink

LINK_COLUMNS = ("id", "parent_session_id", "source", "started_at")
"""The columns of ``sessions`` a link reads, in the order its rows carry them."""


def links_by_id(ids: Iterable[str]) -> Statement:
    """The links of the sessions with these ids, in the order asked (duplicates and unknown
    ids dropped): SQLite's :func:`~harkback.adapters.stores.sql.rows.sessions_by_id`, four
    columns of nine."""
    return Statement(
        f"SELECT {', '.join('s.' + c for c in LINK_COLUMNS)} "
        "FROM json_each(?) AS j JOIN sessions AS s ON s.id = j.value ORDER BY j.key",
        (json_list(ids),))


def link_from_row(row: Row) -> SessionLink:
    """A link from the columns :data:`LINK_COLUMNS`, checked as a whole session's are
    (:func:`~harkback.adapters.stores.sql.rows.session_from_row`, then
    :class:`~harkback.stages.records.Session`'s own checks), so a damaged row is said as
    the same damage.

    >>> link_from_row(("s1", None, b"cli", None))
    Traceback (most recent call last):
    TypeError: its source is stored as bytes, not as text
    >>> link_from_row(("s1", None, "cli", 1e300))
    Traceback (most recent call last):
    ValueError: started_at must be epoch seconds between the years 1 and 9999, got 1e+300
    """
    session_id, parent, source, started = row
    if (session_id.__class__ is source.__class__ is str and session_id
            and (parent is None or parent.__class__ is str)
            and (started is None or (started.__class__ is float  # one cheap check a row
                                     and EARLIEST_EPOCH <= started <= LATEST_EPOCH))):
        return SessionLink(session_id, parent, source, started)
    for name, text in zip(("id", "parent_session_id", "source"), (session_id, parent, source),
                          strict=True):
        if text.__class__ is not str and (text is not None or name != "parent_session_id"):
            raise TypeError(f"its {name} is stored as {type(text).__name__}, not as text")
    return SessionLink.of(Session(id=session_id, source=source, started_at=started,
                                  parent_session_id=parent))
