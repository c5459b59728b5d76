"""Read-back paging: which messages a page holds, and the requests it refuses."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from returns.result import Failure, Success

from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.defaults import MAX_PAGE_LIMIT
from harkback.stages.errors import NotFound, QueryRejected
from harkback.stages.message_window import MessageWindow, WindowQuery, page_bounds, window_of
from harkback.stages.read_back import (
    PageRequest,
    SessionPage,
    check_request,
    page_of,
    read_page,
)
from harkback.stages.records import Message, Session
from tests.conftest import conversation
from tests.support.older_store import OlderStore


@pytest.mark.parametrize("total", [0, 1, 7, 20, 21, 100])
@pytest.mark.parametrize("limit", [1, 2, 5, 20])
def test_a_page_around_a_message_holds_it_and_is_full_when_it_can_be(total: int,
                                                                     limit: int) -> None:
    """Centred anywhere, the page contains its message, stays in bounds, and is as long
    as the session allows."""
    for index in range(total):
        start, stop = page_bounds(total=total, limit=limit, around_index=index)
        assert 0 <= start <= index < stop <= total
        assert stop - start == min(limit, total)


def test_a_page_around_a_message_in_the_middle_is_centred() -> None:
    """Away from the ends, as many messages come before the centre as the half page."""
    assert page_bounds(total=100, limit=21, around_index=50) == (40, 61)


def test_pages_by_offset_cover_the_session_once() -> None:
    """Following next_offset from 0 visits every message exactly once, in order."""
    messages = conversation("s", *[("user", f"m{i}") for i in range(23)]).messages
    seen: list[int] = []
    offset: int | None = 0
    while offset is not None:
        window = window_of(messages, WindowQuery(session_id="s", offset=offset, limit=5))
        seen += [m.position for m in window.messages]
        offset = SessionPage(session=Session(id="s"), parent_id=None, parent=None,
                             children=(), messages=window.messages, offset=window.offset,
                             limit=5, total=window.total).next_offset
    assert seen == list(range(23))


def test_around_finds_a_position_not_equal_to_its_index() -> None:
    """Positions with gaps: the page centres on the message at that position."""
    messages = tuple(Message(session_id="s", position=p, role="user", content=str(p))
                     for p in (0, 5, 9, 40, 41))
    window = window_of(messages, WindowQuery(session_id="s", around=40, limit=3))
    assert (window.offset, [m.position for m in window.messages]) == (2, [9, 40, 41])


def test_an_offset_past_the_end_is_not_found_but_an_empty_session_is_an_empty_page() -> None:
    """Past the end is a failure naming the size; an empty session reads as one empty page."""
    messages = conversation("s", ("user", "a"), ("assistant", "b")).messages
    past = page_of(PageRequest(session_id="s", offset=2), None,
                   window_of(messages, WindowQuery(session_id="s", offset=2, limit=20)))
    assert isinstance(past, Failure) and isinstance(past.failure(), NotFound)
    assert "(2 messages)" in past.failure().reason
    empty = page_of(PageRequest(session_id="s", offset=0), None,
                    window_of((), WindowQuery(session_id="s", limit=20)))
    assert empty == Success(MessageWindow(messages=(), offset=0, total=0))


def test_the_size_named_past_the_end_reads_as_a_count() -> None:
    """A one-message session was "(1 messages)"; a large one's count had no separators."""
    one = conversation("s", ("user", "a")).messages
    past = page_of(PageRequest(session_id="s", offset=1), None,
                   window_of(one, WindowQuery(session_id="s", offset=1, limit=20)))
    assert isinstance(past, Failure) and past.failure().reason.endswith("(1 message)")
    many = tuple(Message(session_id="s", position=p, role="user", content="x")
                 for p in range(1_200))
    past = page_of(PageRequest(session_id="s", offset=5_000), None,
                   window_of(many, WindowQuery(session_id="s", offset=5_000, limit=20)))
    assert isinstance(past, Failure) and past.failure().reason.endswith("(1,200 messages)")


def test_a_position_the_session_lacks_is_not_found() -> None:
    """``--around`` naming no message of the session is not found, not an empty page."""
    messages = conversation("s", ("user", "a")).messages
    missing = page_of(PageRequest(session_id="s", around="s:3"), 3,
                      window_of(messages, WindowQuery(session_id="s", around=3, limit=20)))
    assert isinstance(missing, Failure) and isinstance(missing.failure(), NotFound)


@pytest.mark.parametrize("request_", [
    PageRequest(session_id="s", limit=MAX_PAGE_LIMIT + 1),
    PageRequest(session_id="s", offset=-1),
    PageRequest(session_id="s", around="s:1", offset=0),
    PageRequest(session_id="s", around="s:-1"),
    PageRequest(session_id="s", around="t:1"),
    PageRequest(session_id="", around="1"),
])
def test_bad_requests_are_rejected_before_the_store_is_read(request_: PageRequest) -> None:
    """Each malformed request is a QueryRejected (exit status 2 on the command line)."""
    checked = check_request(request_)
    assert isinstance(checked, Failure) and isinstance(checked.failure(), QueryRejected)


def test_read_page_lists_the_lineage_and_an_unstored_parent() -> None:
    """The page names its stored parent, and its children; a parent not stored is named
    but marked so."""
    store = MemoryStore()
    asyncio.run(store.ingest((
        conversation("root", ("user", "hi"), title="Root"),
        conversation("mid", ("user", "a"), ("assistant", "b"), parent="root"),
        conversation("leaf", ("assistant", "c"), parent="mid"),
        conversation("orphan", ("user", "d"), parent="gone"),
    )).awaitable())
    page = asyncio.run(read_page(store, PageRequest(session_id="mid"))).unwrap()
    lineage = page.to_payload()["lineage"]
    assert lineage["parent"] == {"session_id": "root", "stored": True, "title": "Root"}
    assert [c["session_id"] for c in lineage["children"]] == ["leaf"]
    orphan = asyncio.run(read_page(store, PageRequest(session_id="orphan"))).unwrap()
    assert orphan.to_payload()["lineage"]["parent"] == {"session_id": "gone", "stored": False,
                                                        "title": ""}
    unknown = asyncio.run(read_page(store, PageRequest(session_id="nope")))
    assert isinstance(unknown, Failure) and isinstance(unknown.failure(), NotFound)


def test_a_store_without_ids_alike_says_not_found_without_a_hint() -> None:
    """An id not stored is a plain NotFound from a store lacking ``ids_alike`` (it raised
    AttributeError), while its stored sessions still read."""
    inner = MemoryStore()
    asyncio.run(inner.ingest((conversation("abc-1", ("user", "hi")),)).awaitable())
    store: Any = OlderStore(inner, "ids_alike")
    unknown = asyncio.run(read_page(store, PageRequest(session_id="abc")))
    assert isinstance(unknown, Failure) and isinstance(unknown.failure(), NotFound)
    assert unknown.failure().reason == "no session with id 'abc'"
    page = asyncio.run(read_page(store, PageRequest(session_id="abc-1"))).unwrap()
    assert [m.content for m in page.messages] == ["hi"]
