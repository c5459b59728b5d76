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
