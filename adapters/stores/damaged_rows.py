"""A stored row that reads as no record (a role outside its list, a text stored as bytes, a
time past the year 9999): the store's damage, said in one line that names it.

Every store makes its rows records through these, SQLite's and PostgreSQL's alike, so a
damaged row is said in the same words whichever store holds it, never as an internal error.

>>> from harkback.adapters.stores.sql import rows
>>> try:
...     session_reader(rows.session_from_row)(("s1", "cli", "", b"x", None, None, None, "", ""))
... except DamagedRecord as error:
...     print(error)
a stored session is damaged (session 's1': its title is stored as bytes, not as text)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

from harkback.adapters.stores.sql.statement import Row
from harkback.stages.record_checks import briefly
from harkback.stages.records import Message

R = TypeVar("R")


class DamagedRecord(sqlite3.DatabaseError):
    """A stored message or session that reads as none: said as the store's failure in one
    line, not as an internal error. A ``sqlite3.DatabaseError`` so that every SQLite path
    already says it as the store's; the PostgreSQL store catches it by name."""


def session_reader(convert: Callable[[Row], R]) -> Callable[[Row], R]:
    """``convert``, a session row (``id`` first) that reads as none a :class:`DamagedRecord`."""
    def read(row: Row) -> R:
        try:
            return convert(row)
        except (ValueError, TypeError) as error:
            raise DamagedRecord(f"a stored session is damaged (session {briefly(row[0])}: "
                                f"{error})") from error
    return read


def read_row(convert: Callable[..., Message], row: Row, *more: object) -> Message:
    """``convert(row, *more)``, a row that reads as no message a :class:`DamagedRecord`.

    >>> from harkback.adapters.stores.sql import rows
    >>> try:
    ...     read_row(rows.message_from_row, ("s1", 0, "user", b"hi", "", "", None, None))
    ... except DamagedRecord as error:
    ...     print(error)
    a stored message is damaged (session 's1', position 0: its text is stored as bytes, not as text)
    """
    try:
        return convert(row, *more)
    except (ValueError, TypeError) as error:
        raise DamagedRecord(f"a stored message is damaged (session {briefly(row[0])}, "
                             f"position {briefly(row[1])}: {error})") from error
