"""Tests of request validation and time bounds."""

from __future__ import annotations

from returns.result import Failure, Success

from harkback.stages.request import make_request, parse_time_bound


def test_relative_bound_counts_back_from_now() -> None:
    """``24h`` is a day before ``now``."""
    assert parse_time_bound("24h", now=100_000.0) == Success(100_000.0 - 86_400)


def test_naive_iso_date_is_utc() -> None:
    """A date without a zone is read as UTC midnight."""
    assert parse_time_bound("1970-01-02") == Success(86_400.0)


def test_unreadable_bound_is_rejected_with_guidance() -> None:
    """A bound that is neither a date nor a span says what would work."""
    result = parse_time_bound("last tuesday")
    assert isinstance(result, Failure)
    assert "7d" in result.failure().reason


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
