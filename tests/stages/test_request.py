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


def test_more_than_a_hundred_sources_or_projects_are_refused() -> None:
    """Each project name is compared with every session: an agent's list of thousands kept
    a search busy for minutes (30 s for 3,000 names on a 100k-message store). Repeats and
    blanks do not count."""
    many = tuple(f"p{i}" for i in range(101))
    assert make_request("x", projects=many).failure().reason == "at most 100 projects, got 101"
    assert make_request("", sources=many).failure().reason == "at most 100 sources, got 101"
    assert make_request("x", sources=many[:100] * 2 + ("", " ")).unwrap().sources == many[:100]


def test_a_string_where_names_go_is_a_comma_list_not_its_letters() -> None:
    """``sources="codex"`` was read letter by letter (sources c, o, d, e, x): every search
    found nothing, and ``roles="user"`` was refused as roles u, s, e, r."""
    request = make_request("x", sources="codex", projects="api, web",  # type: ignore[arg-type]
                           roles="user").unwrap()  # type: ignore[arg-type]
    assert (request.sources, request.projects, request.roles) == (
        ("codex",), ("api", "web"), ("user",))
