"""``harkback show`` pages read as windows of the session (store.message_window) are the
pages the whole-session read cut before, on a real SQLite file: every page by offset, the
last one, pages around messages, an empty session, past the end, a missing message, and
the lineage (parent and sub-sessions) each page lists.

The reference is the read ``show`` made before the window existed: every message of the
session, then the page cut from them in Python (:func:`_whole_session_page`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.output import format_page
from harkback.stages.errors import NotFound, StoreUnavailable
from harkback.stages.read_back import (
    PageRequest,
    ReadError,
    SessionPage,
    check_request,
    message_id,
    read_page,
)
from harkback.stages.records import Conversation, Message, Role, Session, ToolCall
from harkback.stages.stage import as_result
from tests.pipeline.test_cli import run

LONG = 3_000
"""Messages of the long session (positions with gaps: every 7th one is missing)."""
POSITIONS = [p for p in range(LONG + LONG // 6) if p % 7 != 3][:LONG]


def _message(position: int) -> Message:
    role: Role = ("user", "assistant", "tool")[position % 3]
    big = position % 97 == 0  # a long tool output now and then
    return Message(
        session_id="long", position=position, role=role,
        content=(f"step {position}: " + ("log line\n" * 400 if big else "checking again")),
        tool_name="bash" if role == "tool" else "",
        tool_calls=(ToolCall(id=f"c{position}", name="bash", arguments='{"cmd": "ls"}'),)
        if role == "assistant" and position % 5 == 0 else (),
        timestamp=None if position % 11 == 0 else 1_771_000_000.0 + position)


def _sessions() -> list[Conversation]:
    chat = tuple(_message(p) for p in POSITIONS)
    return [
        Conversation(Session(id="root", title="Root", started_at=1_770_000_000.0), (
            Message(session_id="root", position=0, role="user", content="start"),)),
        Conversation(Session(id="long", title="Long", started_at=1_771_000_000.0,
                             parent_session_id="root"), chat),
        Conversation(Session(id="long-sub", source="subagent", started_at=1_771_000_100.0,
                             parent_session_id="long"), (
            Message(session_id="long-sub", position=0, role="user", content="grep it"),)),
        Conversation(Session(id="long-later", started_at=1_771_000_200.0,
                             parent_session_id="long"), ()),
        Conversation(Session(id="empty", started_at=1_772_000_000.0), ()),
    ]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file holding the long session, its parent and sub-sessions, an empty one."""
    path = tmp_path_factory.mktemp("show-pages") / "h.db"

    async def fill() -> None:
        with SqliteStore.open(path).unwrap() as store:
            (await store.ingest(_sessions()).awaitable()).unwrap()
    asyncio.run(fill())
    return path


class _WholeReadsCounted:
    """The read-only store, counting the reads of every message of a session."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.whole_reads = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def messages(self, session_ids: Sequence[str], longest: int | None = None
                 ) -> FutureResult[tuple[Message, ...], StoreUnavailable]:
        self.whole_reads += 1
        return self._store.messages(session_ids, longest)


async def _whole_session_page(store: SqliteStore, request: PageRequest
                              ) -> Result[SessionPage, ReadError]:
    """The page as ``show`` read it before: the session's every message, then the cut."""
    around = check_request(request).unwrap()
    session = as_result(await store.sessions((request.session_id,)).awaitable()).unwrap()[0]
    messages = as_result(await store.messages((session.id,)).awaitable()).unwrap()
    children = as_result(await store.children((session.id,)).awaitable()).unwrap()
    parents: tuple[Session, ...] = ()
    if session.parent_session_id is not None:
        parents = as_result(await store.sessions((session.parent_session_id,)).awaitable()
                            ).unwrap()
    total, start = len(messages), request.offset or 0
    if around is not None:
        indices = [i for i, m in enumerate(messages) if m.position == around]
        if not indices:
            return Failure(NotFound(f"session {request.session_id!r} has no message "
                                    f"{message_id(request.session_id, around)!r}"))
        start = max(0, min(indices[0] - request.limit // 2, total - request.limit))
    elif start >= total and (total or start):
        return Failure(NotFound(f"offset {start} is past the end of session "
                                f"{request.session_id!r} ({total:,} message"
                                f"{'' if total == 1 else 's'})"))
    return Success(SessionPage(
        session=session, parent_id=session.parent_session_id,
        parent=next(iter(parents), None), children=tuple(c for c in children if c.id != session.id),
        messages=tuple(messages[start:start + request.limit]), offset=start,
        limit=request.limit, total=total))


def _requests() -> Iterator[PageRequest]:
    """Every page of the default size; at other sizes (odd, the largest) pages by the ends
    and a few between; around messages all along the session, the ends, and missing ones."""
    for limit in (20, 7, 200):
        pages = range(0, LONG + limit, limit)
        offsets = pages if limit == 20 else [*pages[:3], *pages[len(pages) // 2::37],
                                             *pages[-3:]]
        for offset in [*offsets, LONG - 1, LONG, LONG + 1, 10**20]:
            yield PageRequest(session_id="long", offset=offset, limit=limit)
        for position in [*POSITIONS[::53 if limit == 20 else 211], POSITIONS[1],
                         POSITIONS[-2], POSITIONS[-1], 3, 10**17]:
            yield PageRequest(session_id="long", around=f"long:{position}", limit=limit)
    for session_id in ("empty", "long-sub", "long-later", "root"):
        for offset in (None, 0, 1):
            yield PageRequest(session_id=session_id, offset=offset)
        yield PageRequest(session_id=session_id, around="0")


def _same(new: Result[SessionPage, ReadError], old: Result[SessionPage, ReadError]) -> bool:
    if isinstance(old, Failure):
        return new == old
    return isinstance(new, Success) and new.unwrap().to_payload() == old.unwrap().to_payload()


def test_every_page_is_the_page_the_whole_session_gave_without_reading_it_whole(
        db: Path) -> None:
    """Page after page, around messages, past the end, of empty and short sessions: the
    payload (so ``show``'s text and JSON, and the MCP tool's page) or the failure is the
    one cut from the whole session, and no page reads a whole session."""
    async def compare() -> tuple[list[PageRequest], int, int]:
        differing = []
        with SqliteStore.open(db, readonly=True).unwrap() as opened:
            store = _WholeReadsCounted(opened)
            requests = list(_requests())
            for request in requests:
                new = await read_page(store, request)
                if not _same(new, await _whole_session_page(opened, request)):
                    differing.append(request)
        return differing, store.whole_reads, len(requests)

    differing, whole_reads, asked = asyncio.run(compare())
    assert differing == []
    assert whole_reads == 0
    assert asked > 250


@pytest.mark.parametrize("args", [
    ("--offset", str(LONG - 5)),
    ("--around", f"long:{POSITIONS[LONG // 2]}", "--limit", "9"),
])
def test_the_command_prints_the_page_of_the_whole_session_read(db: Path,
                                                               args: tuple[str, ...]) -> None:
    """``harkback show`` (text and ``--json``) prints the page the whole-session read gave:
    the last page, and one around a message in the middle."""
    offset = int(args[1]) if args[0] == "--offset" else None
    around = args[1] if args[0] == "--around" else None
    limit = int(args[3]) if len(args) > 2 else 20

    async def old() -> dict[str, Any]:
        with SqliteStore.open(db, readonly=True).unwrap() as store:
            return (await _whole_session_page(store, PageRequest(
                session_id="long", offset=offset, around=around, limit=limit))
                    ).unwrap().to_payload()
    expected = asyncio.run(old())
    text = run("show", "long", *args, db=db)
    as_json = run("show", "long", *args, "--json", db=db)
    assert (text.returncode, as_json.returncode) == (0, 0), text.stderr + as_json.stderr
    assert json.loads(as_json.stdout) == expected
    assert text.stdout == format_page(expected) + "\n"
