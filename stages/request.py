"""What a caller asks for: a search request, parsed time bounds.

>>> SearchRequest(query="docker network").limit
3
>>> parse_time_bound("2026-03-01").unwrap()
1772323200.0
>>> parse_time_bound("7d", now=1_000_000.0).unwrap()
395200.0
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import attrs
from returns.result import Failure, Result, Success

from harkback.stages.errors import QueryRejected
from harkback.stages.records import ROLES, Role

MAX_LIMIT = 10
DEFAULT_HIDDEN_SOURCES: tuple[str, ...] = ("tool", "kanban")
DEFAULT_ROLES: tuple[Role, ...] = ("user", "assistant")

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def _roles_valid(_inst: object, _attr: object, roles: tuple[str, ...]) -> None:
    unknown = [r for r in roles if r not in ROLES]
    if unknown or not roles:
        raise ValueError(f"roles must be a non-empty subset of {ROLES}, got {roles!r}")


@attrs.frozen(kw_only=True)
class SearchRequest:
    """One recall request. Build it with :func:`make_request` to get errors as values."""

    query: str
    limit: int = attrs.field(default=3, validator=[attrs.validators.ge(1),
                                                   attrs.validators.le(MAX_LIMIT)])
    roles: tuple[Role, ...] = attrs.field(default=DEFAULT_ROLES, validator=_roles_valid)
    current_session_id: str | None = None
    since: float | None = None
    until: float | None = None
    hidden_sources: tuple[str, ...] = DEFAULT_HIDDEN_SOURCES

    @property
    def is_browse(self) -> bool:
        """An empty query lists recent sessions instead of searching."""
        return not self.query.strip()


def parse_time_bound(text: str, *, now: float | None = None) -> Result[float, QueryRejected]:
    """Parse ``2026-03-01``, ``2026-03-01T14:00:00+02:00``, epoch seconds or ``7d``/``24h``.

    Relative bounds count back from ``now``. Naive ISO times are taken as UTC.
    """
    text = text.strip()
    rel = _RELATIVE.match(text)
    if rel:
        base = datetime.now(UTC).timestamp() if now is None else now
        return Success(base - float(rel.group(1)) * _UNIT_SECONDS[rel.group(2).lower()])
    try:
        return Success(float(text))
    except ValueError:
        pass
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return Failure(QueryRejected(
            f"cannot read time bound {text!r}: use an ISO date (2026-03-01), epoch seconds, "
            "or a relative span such as 7d or 24h"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return Success(parsed.timestamp())


def make_request(query: str, *, limit: int = 3, roles: tuple[str, ...] = DEFAULT_ROLES,
                 current_session_id: str | None = None, since: str | float | None = None,
                 until: str | float | None = None,
                 hidden_sources: tuple[str, ...] = DEFAULT_HIDDEN_SOURCES,
                 now: float | None = None) -> Result[SearchRequest, QueryRejected]:
    """Validate caller input into a :class:`SearchRequest`, or say what is wrong.

    >>> make_request("x", limit=99).failure().reason
    'limit must be between 1 and 10, got 99'
    """
    if not 1 <= limit <= MAX_LIMIT:
        return Failure(QueryRejected(f"limit must be between 1 and {MAX_LIMIT}, got {limit}"))
    bad_roles = [r for r in roles if r not in ROLES]
    if bad_roles or not roles:
        return Failure(QueryRejected(
            f"unknown role(s) {', '.join(bad_roles) or '(none given)'}; choose from "
            + ", ".join(ROLES)))
    bounds: list[float | None] = []
    for bound in (since, until):
        if bound is None or isinstance(bound, float | int):
            bounds.append(None if bound is None else float(bound))
            continue
        parsed = parse_time_bound(bound, now=now)
        if isinstance(parsed, Failure):
            return Failure(parsed.failure())
        bounds.append(parsed.unwrap())
    if bounds[0] is not None and bounds[1] is not None and bounds[0] > bounds[1]:
        return Failure(QueryRejected("since is later than until"))
    return Success(SearchRequest(
        query=query.replace("\x00", " "), limit=limit,
        roles=tuple(r for r in ROLES if r in roles),
        current_session_id=current_session_id or None,
        since=bounds[0], until=bounds[1], hidden_sources=tuple(hidden_sources)))
