"""Hermes session ids as harkback stores them: SQLite keeps whatever a writer gave, so an
id may hold bytes that are not UTF-8 or a NUL character. Each is written out (``\\xNN``,
``\\x00``) rather than made U+FFFD, so two ids that differ only there stay two sessions,
and each is named under its own reason.

>>> for reason, said in readable_session({"id": "s\\x001", "parent_session_id": b"\\xe9"})[2]:
...     print(f"{reason}: {said}")
not UTF-8: 1 byte(s) in parent_session_id written as \\xNN
NUL character: id held 1 NUL character(s), written as \\x00
"""

from __future__ import annotations

from harkback.adapters.sources.encodings import (
    HELD_NUL,
    NOT_UTF8,
    bytes_spelled_out,
    escaped,
    nuls_spelled_out,
    spelled_out,
)
from harkback.adapters.sources.hermes_rows import Row, column_text, mended, readable

ID_COLUMNS = ("id", "parent_session_id")
"""The columns of a ``sessions`` row that name a session."""

Written = tuple[tuple[str, str], ...]
"""What was written out of a row's ids: (reason, what) pairs."""


def readable_session(row: Row) -> tuple[dict[str, object], str, Written]:
    """A ``sessions`` row as :func:`~harkback.adapters.sources.hermes_rows.readable` makes
    it, but with its ids spelled out; what was replaced, and what was written out.

    >>> readable_session({"id": "caf\\udce9", "title": "R\\udce9union"})[0]
    {'title': 'R\ufffdunion', 'id': 'caf\\\\xe9'}
    """
    clean, damage = readable({k: v for k, v in row.items() if k not in ID_COLUMNS})
    ids, count, columns = mended({k: row[k] for k in ID_COLUMNS if k in row}, bytes_spelled_out)
    # A NUL is valid UTF-8: named as what it is, not as a byte that did not decode.
    ids, nuls, held = mended(ids, nuls_spelled_out)
    written: Written = ()
    if count:
        written += ((NOT_UTF8, f"{count} byte(s) in {', '.join(columns)} written as \\xNN"),)
    if nuls:
        written += ((HELD_NUL, f"{', '.join(held)} held {nuls} NUL character(s), "
                               "written as \\x00"),)
    return {**clean, **ids}, damage, written


def id_text(value: object) -> str:
    """A session id as :func:`readable_session` writes it (``""`` for NULL).

    >>> id_text(b"caf\\xe9"), id_text(7), id_text(None)
    ('caf\\\\xe9', '7', '')
    """
    if isinstance(value, bytes):
        value = escaped(value)
    return spelled_out(value)[0] if isinstance(value, str) else column_text(value)
