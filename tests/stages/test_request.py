"""Tests of request validation."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from returns.result import Failure
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.match.rankers import RANKERS
from harkback.stages.ports import Deps
from harkback.stages.request import SearchRequest, make_request
from tests.conftest import conversation


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


@pytest.mark.parametrize(("fields", "error", "named"), [
    ({"since": "2026-03-01"}, ValueError,
     "since must be epoch seconds between the years 1 and 9999, got '2026-03-01'"),
    ({"until": datetime(2026, 3, 1)}, ValueError, "until must be epoch seconds"),
    ({"query": None}, TypeError, "query must be text, got NoneType"),
    ({"limit": "3"}, TypeError, "limit must be a whole number, got '3'"),
    ({"shortlist": 2.5}, TypeError, "shortlist must be a whole number, got 2.5"),
])
async def test_a_request_made_by_hand_refuses_a_field_of_the_wrong_type(
        fields: dict[str, Any], error: type[Exception], named: str) -> None:
    """A SearchRequest made directly (to run one stage, as a benchmark does) refuses text
    or a datetime for a time bound, None for the query, text for a count: each was taken
    and failed deep inside a store ("'<' not supported between instances of 'float' and
    'str'") or in attrs ("'>=' not supported"). Epoch seconds bound the stage."""
    with pytest.raises(error, match=named):
        SearchRequest(**{"query": "docker", **fields})
    store = MemoryStore()
    await store.ingest([conversation("old", ("user", "docker bridge"), started_at=100.0),
                        conversation("new", ("user", "docker bridge"), started_at=900.0)])
    stage = RANKERS["bm25"](SearchRequest(query="docker", since=500.0))
    matched = unsafe_perform_io((await stage(Deps(store=store)).awaitable()).unwrap())
    assert {hit.session_id for hit in matched.hits} == {"new"}
