"""The units a question is searched by, as text: what framing and counting tests compare.

>>> query_units("how did we fix the nginx timeout?")
['fix', 'nginx', 'timeout']
"""

from __future__ import annotations

from harkback.stages.query import parse_query


def query_units(question: str) -> list[str]:
    """Each unit of ``question``'s plan, as its text (a phrase's or a word's)."""
    return [str(getattr(unit, "text", unit)) for unit in parse_query(question).units]
