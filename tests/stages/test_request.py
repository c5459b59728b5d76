"""Tests of request validation."""

from __future__ import annotations

from returns.result import Failure

from harkback.stages.request import make_request


def test_limit_out_of_range_is_rejected() -> None:
    """Limits outside 1..10 are refused with the allowed range."""
    assert isinstance(make_request("x", limit=0), Failure)
    assert isinstance(make_request("x", limit=11), Failure)


def test_unknown_role_is_rejected() -> None:
    """A role filter naming an unknown role is refused."""
    result = make_request("x", roles=("user", "robot"))
    assert isinstance(result, Failure)
    assert "robot" in result.failure().reason


def test_since_after_until_is_rejected() -> None:
    """An empty time window is an error, not an empty result."""
    assert isinstance(make_request("x", since="2026-02-01", until="2026-01-01"), Failure)


def test_empty_query_is_browse() -> None:
    """Whitespace-only queries browse recent sessions."""
    assert make_request("   ").unwrap().is_browse
