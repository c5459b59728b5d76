"""One SQL statement and its bound values: what every builder in this package returns.

>>> Statement("SELECT ? + 1", (41,)).params
(41,)
>>> json_list(["s1", "s2", "s1"])
'["s1", "s2"]'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

SqlValue = str | int | float | bytes | None
Row = Sequence[Any]


@attrs.frozen
class Statement:
    """One SQL statement and the values bound to its ``?`` placeholders."""

    sql: str
    params: tuple[SqlValue, ...] = ()


def json_list(values: Iterable[str]) -> str:
    """``values`` as one JSON array, duplicates dropped (read in SQL with ``json_each``)."""
    return json.dumps(list(dict.fromkeys(values)), ensure_ascii=False)


SCOPE = ("(? = '[]' OR s.source IN (SELECT value FROM json_each(?))) AND "
         "(? = '[]' OR EXISTS (SELECT 1 FROM json_each(?) AS p "
         "WHERE rtrim(s.project, '/') = p.value "
         "OR substr(rtrim(s.project, '/'), -length(p.value) - 1) = '/' || p.value))")
"""Only the sessions (``s``) of the sources and projects asked for, when any are: a
project is asked for by its folder's path or its last folder's name
(:func:`~harkback.stages.scope.project_matches`)."""


def scope(sources: Iterable[str], projects: Iterable[str]) -> tuple[SqlValue, ...]:
    """The values of :data:`SCOPE`'s placeholders.

    >>> scope(["codex"], ["harkback/"])
    ('["codex"]', '["codex"]', '["harkback"]', '["harkback"]')
    """
    wanted = json_list(s for s in sources)
    folders = json_list(p.rstrip("/") for p in projects if p.rstrip("/"))
    return wanted, wanted, folders, folders
