"""The SessionStore contract: every backend's test module subclasses :class:`StoreContract`.

A subclass lives in a module that defines a ``store`` fixture yielding a fresh, empty store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import attrs
import pytest
from returns.future import FutureResult
from returns.io import IOFailure, IOSuccess
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import Mark, SourceKey
from harkback.stages.long_text import LONGEST_READ, UNREAD
from harkback.stages.ports import (
    Deps,
    MatchQuery,
    MessageKey,
    RecentQuery,
    SessionStore,
    SummaryKey,
)
from harkback.stages.query import Term, parse_query
from harkback.stages.records import (
    ROLES,
    Conversation,
    Message,
    Role,
    Session,
    Summary,
    ToolCall,
)
from harkback.stages.text.tokens import index_tokens
from harkback.stages.undated import undated_left_out

T = TypeVar("T")
Make = Callable[..., Conversation]

HOSTILE_QUERIES = (
    "C++",
    '"unclosed',
    "foo AND",
    "NUL\x00byte",
    "\x00",
    "chat-send",
    "TODO: fix",
    "(problem",
    "***",
    "OR AND NOT",
    'say "" twice ""',
    "prefix* * -x ^y",
    "端口 AND 冲突 NOT",
    ("Traceback (most recent call last): File \"/srv/app/main.py\", line 42, in handle "
     "KeyError: 'user_id' -- see https://example.com/a?b=c&d=e {\"k\": [1, 2]} ") * 80,
    " ".join(f"word{i}-{i * 7}.x" for i in range(2000))[:10_000],
)


def twin_stores(corpus: Sequence[Conversation], folder: Path
                ) -> Iterator[tuple[MemoryStore, SqliteStore]]:
    """A memory store and a SQLite store (in ``folder``) holding the same ``corpus``."""
    memory = MemoryStore()
    sqlite = SqliteStore.open(folder / "h.db").unwrap()

    async def fill() -> None:
        await ok(memory.ingest(corpus))
        await ok(sqlite.ingest(corpus))
    asyncio.run(fill())
    yield memory, sqlite
    sqlite.close()


async def ok(future: FutureResult[T, StoreUnavailable]) -> T:
    """The value a store call succeeded with (the test fails on a StoreUnavailable)."""
    outcome = await future.awaitable()
    assert isinstance(outcome, IOSuccess), outcome
    value: T = unsafe_perform_io(outcome.unwrap())
    return value


async def failed(future: FutureResult[Any, StoreUnavailable]) -> StoreUnavailable:
    """The StoreUnavailable a store call failed with (the test fails on success)."""
    outcome = await future.awaitable()
    assert isinstance(outcome, IOFailure), outcome
    error: StoreUnavailable = unsafe_perform_io(outcome.failure())
    return error


def _kiwis(make: Make) -> list[Conversation]:
    """A session started at 100 whose second message is stamped 300, and an undated one."""
    return [make("old", ("user", "kiwi untimed"), ("user", "kiwi late"), started_at=100.0,
                 timestamps=(None, 300.0)),
            make("undated", ("user", "kiwi undated"))]


def match(text: str, *, roles: tuple[Role, ...] = ROLES, **fields: Any) -> MatchQuery:
    """A match query for ``text`` as the parser reads it."""
    expression = parse_query(text).expression
    assert expression is not None
    return MatchQuery(expression=expression, roles=roles, **fields)


class StoreContract:
    """What every SessionStore promises."""

    async def test_search_finds_an_ingested_message(self, store: SessionStore,
                                                    make_conversation: Make) -> None:
        """A message is found by a word it contains, with its fields and a positive score."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "the docker bridge is down"), ("assistant", "restart the daemon"),
            source="cli", started_at=50.0)]))
        hits = await ok(store.search(match("bridge")))
        assert [(h.session_id, h.position, h.role, h.content, h.source, h.timestamp)
                for h in hits] == [("s1", 0, "user", "the docker bridge is down", "cli", 50.0)]
        assert hits[0].score > 0

    async def test_hits_are_timed_by_their_own_stamp_else_their_session_start(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A hit's timestamp is what the time filters read: the message's, else the session's."""
        await ok(store.ingest(_kiwis(make_conversation)))
        hits = await ok(store.search(match("kiwi")))
        assert sorted((h.content, h.timestamp or 0.0) for h in hits) == [
            ("kiwi late", 300.0), ("kiwi undated", 0.0), ("kiwi untimed", 100.0)]

    async def test_search_of_an_empty_store_finds_nothing(self, store: SessionStore) -> None:
        """Searching before any ingest succeeds with no hits."""
        assert await ok(store.search(match("anything"))) == ()

    async def test_rare_term_ranks_above_common_ones(self, store: SessionStore,
                                                     make_conversation: Make) -> None:
        """A message holding the rare query term outranks those holding only the common one."""
        turns = [("user", f"docker compose restart number {i}") for i in range(6)]
        turns.insert(3, ("user", "docker bridge restart"))
        await ok(store.ingest([make_conversation("s1", *turns)]))
        hits = await ok(store.search(match("docker bridge")))
        assert hits[0].content == "docker bridge restart"
        assert hits[0].score > hits[1].score

    async def test_plain_question_matches_partial_coverage(self, store: SessionStore,
                                                           make_conversation: Make) -> None:
        """A plain question finds messages that hold only some of its words."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "docker network trouble"), ("user", "the bridge is fine"),
            ("user", "nothing relevant"))]))
        hits = await ok(store.search(match("how did we fix the docker bridge issue")))
        assert sorted(h.position for h in hits) == [0, 1]

    async def test_more_matched_terms_rank_higher(self, store: SessionStore,
                                                  make_conversation: Make) -> None:
        """Covering more of the query's terms gives a higher score."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "nginx said nothing"), ("user", "nginx cors header missing"),
            ("user", "cors again"))]))
        hits = await ok(store.search(match("nginx cors header")))
        assert hits[0].position == 1

    async def test_role_filter(self, store: SessionStore, make_conversation: Make) -> None:
        """Only messages of the asked roles are returned."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "cors error again"), ("assistant", "cors fixed in nginx"),
            ("tool", "cors header dump"))]))
        hits = await ok(store.search(match("cors", roles=("assistant", "tool"))))
        assert sorted(h.role for h in hits) == ["assistant", "tool"]

    async def test_hidden_sources_are_left_out(self, store: SessionStore,
                                               make_conversation: Make) -> None:
        """Sessions from hidden sources never appear in search results."""
        await ok(store.ingest([
            make_conversation("mine", ("user", "backup failed"), source="cli"),
            make_conversation("cron", ("user", "backup failed"), source="cron"),
        ]))
        hits = await ok(store.search(match("backup", hidden_sources=("cron", "tool"))))
        assert [h.session_id for h in hits] == ["mine"]

    async def test_excluded_session_ids_are_left_out(self, store: SessionStore,
                                                     make_conversation: Make) -> None:
        """Sessions named in ``exclude_sessions`` never appear; the others fill the limit,
        in a search bounded by common words (newest first) as in an exact one."""
        await ok(store.ingest([make_conversation(
            name, *[("user", f"lemon tart {name} {i}") for i in range(4)], started_at=at)
            for name, at in (("a", 1.0), ("b", 2.0), ("c", 3.0))]))
        for cap in (None, 2):
            hits = await ok(store.search(match("lemon", limit=6, max_scored=cap,
                                               exclude_sessions=("c", "a"))))
            assert sorted((h.session_id, h.position) for h in hits) == [
                ("b", i) for i in range(4)]

    async def test_excluded_session_ids_are_matched_as_stored(self, store: SessionStore,
                                                              make_conversation: Make) -> None:
        """Ids holding quotes, a backslash, ``%s`` or U+FFFE are left out exactly as named,
        among a long list of other ids, in exact and bounded searches."""
        odd = ("back\\slash %s", "it's \"q\"", "fffe\ufffeid")
        await ok(store.ingest([make_conversation(name, ("user", f"quince jam {i}"),
                                                 started_at=float(i + 1))
                               for i, name in enumerate(odd)]))
        named = (*[f"other{i}" for i in range(500)], odd[0], odd[2])
        for cap in (None, 1):
            hits = await ok(store.search(match("quince", limit=5, max_scored=cap,
                                               exclude_sessions=named)))
            assert [h.session_id for h in hits] == [odd[1]]

    async def test_since_uses_message_time_else_session_start(
            self, store: SessionStore, make_conversation: Make) -> None:
        """``since`` keeps messages at or after it, timed by their own stamp or their session's."""
        await ok(store.ingest([*_kiwis(make_conversation),
                               make_conversation("new", ("user", "kiwi fresh"), started_at=250.0)]))
        hits = await ok(store.search(match("kiwi", since=250.0)))
        assert sorted(h.content for h in hits) == ["kiwi fresh", "kiwi late"]

    async def test_until_uses_message_time_else_session_start(
            self, store: SessionStore, make_conversation: Make) -> None:
        """``until`` keeps messages at or before it; undated messages fall outside any bound."""
        await ok(store.ingest(_kiwis(make_conversation)))
        hits = await ok(store.search(match("kiwi", until=100.0)))
        assert [h.content for h in hits] == ["kiwi untimed"]

    async def test_search_honours_the_limit(self, store: SessionStore,
                                            make_conversation: Make) -> None:
        """No more than ``limit`` hits come back."""
        await ok(store.ingest([make_conversation(
            "s1", *[("user", f"lemon {i}") for i in range(10)])]))
        assert len(await ok(store.search(match("lemon", limit=4)))) == 4

    async def test_ingest_reports_what_it_added(self, store: SessionStore,
                                                make_conversation: Make) -> None:
        """A first ingest counts new sessions and their messages."""
        report = await ok(store.ingest([
            make_conversation("a", ("user", "one"), ("assistant", "two")),
            make_conversation("b", ("user", "three")),
        ]))
        assert (report.added, report.updated, report.messages) == (2, 0, 3)

    async def test_empty_ingest_does_nothing(self, store: SessionStore) -> None:
        """Ingesting no conversations reports zeros and stores nothing."""
        report = await ok(store.ingest([]))
        assert (report.added, report.updated, report.messages) == (0, 0, 0)
        assert await ok(store.recent(RecentQuery(limit=5))) == ()

    async def test_reingest_replaces_the_session(self, store: SessionStore,
                                                 make_conversation: Make) -> None:
        """Ingesting a stored id again replaces its row and all of its messages."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "alpha first"), ("user", "alpha second"), title="old")]))
        report = await ok(store.ingest([make_conversation(
            "s1", ("user", "gamma only"), title="new")]))
        assert (report.added, report.updated, report.messages) == (0, 1, 1)
        assert await ok(store.search(match("alpha"))) == ()
        assert [h.content for h in await ok(store.search(match("gamma")))] == ["gamma only"]
        assert [m.content for m in await ok(store.messages(["s1"]))] == ["gamma only"]
        assert [s.title for s in await ok(store.sessions(["s1"]))] == ["new"]

    async def test_reingest_of_a_grown_session_finds_old_and_new(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Re-ingesting a session that gained and changed messages indexes it as it now is."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "walrus first"), ("assistant", "narwhal draft"))]))
        await ok(store.ingest([make_conversation(
            "s1", ("user", "walrus first"), ("assistant", "narwhal final"),
            ("user", "walrus later"))]))
        assert sorted(h.position for h in await ok(store.search(match("walrus")))) == [0, 2]
        assert [h.content for h in await ok(store.search(match("narwhal")))] == ["narwhal final"]
        assert await ok(store.search(match("draft"))) == ()

    async def test_same_session_twice_is_stored_once(self, store: SessionStore,
                                                     make_conversation: Make) -> None:
        """Ingesting an identical conversation twice leaves one copy of each message."""
        chat = make_conversation("s1", ("user", "walrus"), ("assistant", "walrus too"))
        await ok(store.ingest([chat]))
        await ok(store.ingest([chat]))
        assert len(await ok(store.search(match("walrus")))) == 2
        assert len(await ok(store.messages(["s1"]))) == 2

    async def test_repeated_id_in_one_batch_keeps_the_last(self, store: SessionStore,
                                                          make_conversation: Make) -> None:
        """When one batch holds a session id twice, the later conversation is stored."""
        report = await ok(store.ingest([make_conversation("s1", ("user", "first draft")),
                                        make_conversation("s1", ("user", "final draft"))]))
        assert (report.added, report.updated, report.messages) == (1, 0, 1)
        assert [m.content for m in await ok(store.messages(["s1"]))] == ["final draft"]

    async def test_sessions_keep_the_requested_order(self, store: SessionStore,
                                                     make_conversation: Make) -> None:
        """``sessions`` returns known ids in the order asked, once each, unknown ones left out."""
        await ok(store.ingest([make_conversation(i, started_at=float(n))
                               for n, i in enumerate(["a", "b", "c"])]))
        found = await ok(store.sessions(["c", "nope", "a", "c"]))
        assert [s.id for s in found] == ["c", "a"]

    async def test_sessions_round_trip_every_field(self, store: SessionStore) -> None:
        """A stored session comes back equal to what was ingested."""
        session = Session(id="s1", source="cli", model="gpt-x", title="Fix CORS",
                          started_at=1.5, ended_at=9.25, parent_session_id="p",
                          end_reason="compressed", project="/home/me/code/api")
        await ok(store.ingest([Conversation(session)]))
        assert await ok(store.sessions(["s1"])) == (session,)

    async def test_a_session_s_project_is_replaced_and_listed(self, store: SessionStore) -> None:
        """Re-ingesting a session replaces its project (empty too), and recent lists it."""
        await ok(store.ingest([Conversation(Session(id="s1", project="/w/old", started_at=1.0)),
                               Conversation(Session(id="s2", started_at=2.0))]))
        await ok(store.ingest([Conversation(Session(id="s1", project="/w/new", started_at=1.0)),
                               Conversation(Session(id="s2", project="", started_at=2.0))]))
        assert [s.project for s in await ok(store.sessions(["s1", "s2"]))] == ["/w/new", ""]
        listed = await ok(store.recent(RecentQuery(limit=5)))
        assert [(o.session.id, o.session.project) for o in listed] == [("s2", ""),
                                                                       ("s1", "/w/new")]

    async def test_children_earliest_first(self, store: SessionStore,
                                           make_conversation: Make) -> None:
        """``children`` returns direct children by start time, undated last."""
        await ok(store.ingest([
            make_conversation("root", started_at=1.0),
            make_conversation("late", parent="root", started_at=20.0),
            make_conversation("undated", parent="root"),
            make_conversation("early", parent="root", started_at=10.0),
            make_conversation("grandchild", parent="early", started_at=11.0),
        ]))
        assert [s.id for s in await ok(store.children(["root"]))] == ["early", "late", "undated"]

    async def test_messages_by_session_start_then_position(self, store: SessionStore) -> None:
        """``messages`` orders by session start (not by the ids asked), then by position."""
        def chat(sid: str, start: float) -> Conversation:
            return Conversation(Session(id=sid, started_at=start), (
                Message(session_id=sid, position=1, role="assistant", content=f"{sid} b"),
                Message(session_id=sid, position=0, role="user", content=f"{sid} a")))
        await ok(store.ingest([chat("late", 200.0), chat("early", 100.0)]))
        found = await ok(store.messages(["late", "early", "unknown"]))
        assert [m.content for m in found] == ["early a", "early b", "late a", "late b"]

    async def test_tool_calls_round_trip(self, store: SessionStore) -> None:
        """Messages with tool calls and tool results come back equal to what was ingested."""
        calls = (ToolCall(id="c1", name="bash", arguments='{"cmd": "ls -la /srv"}'),
                 ToolCall(id="c2", name="read_file", arguments='{"path": "端口.txt"}'))
        messages = (
            Message(session_id="s1", position=0, role="assistant", tool_calls=calls,
                    timestamp=10.5),
            Message(session_id="s1", position=1, role="tool", content="total 0\n\x00end",
                    tool_name="bash", tool_call_id="c1"),
        )
        await ok(store.ingest([Conversation(Session(id="s1"), messages)]))
        assert await ok(store.messages(["s1"])) == messages

    async def test_half_characters_are_stored_as_u_fffd(self, store: SessionStore) -> None:
        """Lone surrogates (half a character, as a library caller's own ``json.loads`` of
        ``"\\ud83d"`` gives) in every text of a conversation are stored as U+FFFD by every
        store: SQLite and PostgreSQL cannot encode them, and memory must hold the same."""
        half = "\ud83d"
        calls = (ToolCall(id=f"c{half}", name=f"bash{half}", arguments=f"ls {half}"),)
        await ok(store.ingest([Conversation(
            Session(id=f"s{half}", source=f"cli{half}", model=f"m{half}", title=f"t {half}",
                    parent_session_id=f"p{half}", end_reason=f"e{half}",
                    project=f"/w/{half}"),
            (Message(session_id=f"s{half}", position=0, role="user",
                     content=f"docker {half} bridge", tool_name=f"n{half}",
                     tool_call_id=f"i{half}", tool_calls=calls),))]))
        fixed = "\ufffd"
        assert await ok(store.sessions([f"s{fixed}"])) == (Session(
            id=f"s{fixed}", source=f"cli{fixed}", model=f"m{fixed}", title=f"t {fixed}",
            parent_session_id=f"p{fixed}", end_reason=f"e{fixed}", project=f"/w/{fixed}"),)
        assert await ok(store.messages([f"s{fixed}"])) == (Message(
            session_id=f"s{fixed}", position=0, role="user", content=f"docker {fixed} bridge",
            tool_name=f"n{fixed}", tool_call_id=f"i{fixed}",
            tool_calls=(ToolCall(id=f"c{fixed}", name=f"bash{fixed}", arguments=f"ls {fixed}"),)),)
        assert [(h.session_id, h.position) for h in await ok(store.search(match("bridge")))
                ] == [(f"s{fixed}", 0)]

    @pytest.mark.parametrize(("conversation", "refusal"), [
        (Conversation(Session(id="s"), (Message(session_id="s", position=0, role="user",
                                                content=None),)),  # type: ignore[arg-type]
         "Message.content must be text (str), got None (session 's', message 0)"),
        (Conversation(Session(id="s", title=None)),  # type: ignore[arg-type]
         "Session.title must be text (str), got None (session 's')"),
        (Conversation(Session(id="s", project=7)),  # type: ignore[arg-type]
         "Session.project must be text (str), got 7 (session 's')"),
        (Conversation(Session(id="s"), (Message(session_id="s", position=1, role="tool",
                                                content="é", tool_name=b"bash"),)),  # type: ignore[arg-type]
         "Message.tool_name must be text (str), got b'bash' (session 's', message 1)"),
        (Conversation(Session(id="s"), (Message(
            session_id="s", position=0, role="assistant",
            tool_calls=(ToolCall(id="c", name="x", arguments=None),)),)),  # type: ignore[arg-type]
         "ToolCall.arguments must be text (str), got None (session 's', message 0, tool call)"),
    ])
    async def test_a_text_field_holding_no_text_is_refused_by_every_store(
            self, store: SessionStore, conversation: Conversation, refusal: str) -> None:
        """``None`` or a number where a record holds text: the memory store kept it, SQLite
        failed as "store unavailable" (NOT NULL), PostgreSQL stored ``7`` as ``'7'``. Every
        store now refuses the whole batch alike, naming the field, and stores nothing."""
        good = Conversation(Session(id="fine"), (Message(session_id="fine", position=0,
                                                         role="user", content="docker"),))
        with pytest.raises(TypeError) as refused:
            await store.ingest([good, conversation]).awaitable()
        assert str(refused.value) == refusal
        assert await ok(store.sessions(["fine", "s"])) == ()

    async def test_half_characters_in_a_request_read_as_stored(self, store: SessionStore
                                                               ) -> None:
        """A search's current session, sources and projects and a read's session id holding
        a lone surrogate find what the store holds for them (U+FFFD), in every store."""
        await ok(store.ingest([Conversation(Session(id="s\ufffd", source="cli\ufffd",
                                                    project="/w/p\ufffd", started_at=1.0), (
            Message(session_id="s\ufffd", position=0, role="user", content="docker bridge"),)),
            Conversation(Session(id="other", source="cli", started_at=2.0), (
                Message(session_id="other", position=0, role="user", content="docker"),))]))
        hb = Harkback(store=store)

        async def found(**options: Any) -> list[str]:
            payload = (await hb.search("docker", **options)).to_payload()
            assert payload["success"], payload
            return [r["session_id"] for r in payload["results"]]
        assert await found(current_session_id="s\udc80") == ["other"]
        assert await found(sources=("cli\ud800",)) == ["s\ufffd"]
        assert await found(projects=("p\ud800",)) == ["s\ufffd"]
        page = (await hb.read_session("s\ud800", around="s\udfff:0")).unwrap()
        assert [m.content for m in page.messages] == ["docker bridge"]

    async def test_tool_call_arguments_are_searchable(self, store: SessionStore) -> None:
        """A word only present in a tool call's arguments finds the message."""
        call = ToolCall(id="c1", name="bash", arguments='{"cmd": "kubectl get pods"}')
        await ok(store.ingest([Conversation(Session(id="s1"), (
            Message(session_id="s1", position=0, role="assistant", tool_calls=(call,)),))]))
        hits = await ok(store.search(match("kubectl")))
        assert [(h.session_id, h.position) for h in hits] == [("s1", 0)]

    async def test_a_hit_holds_the_text_that_matched(self, store: SessionStore) -> None:
        """A hit's text is what the index holds of its message (content, tool name, calls),
        so a ranker re-scoring hits sees the word that selected it."""
        call = ToolCall(id="c1", name="bash", arguments='{"command": "npx playwright test"}')
        await ok(store.ingest([Conversation(Session(id="s1"), (
            Message(session_id="s1", position=0, role="assistant", content="running the suite",
                    tool_calls=(call,)),
            Message(session_id="s1", position=1, role="tool", content="80 passed",
                    tool_name="playwright_runner"),
            Message(session_id="s1", position=2, role="user", content="playwright is green"),
        ))]))
        hits = sorted(await ok(store.search(match("playwright"))), key=lambda h: h.position)
        assert [h.content.split("\n") for h in hits] == [
            ["running the suite", "bash", '{"command": "npx playwright test"}'],
            ["80 passed", "playwright_runner"],
            ["playwright is green"]]

    async def test_a_huge_message_is_read_by_its_start(self, store: SessionStore) -> None:
        """A hit reads no more than LONGEST_READ characters of a text (NULs and astral
        characters counted as one each) and gives the whole one's length in tokens; a text
        of that many characters exactly is read whole."""
        huge = "docker \x00é😀 " * (LONGEST_READ // 10 + 7)
        edge = "😀" * (LONGEST_READ - 7) + " docker"
        await ok(store.ingest([Conversation(Session(id="s1"), (
            Message(session_id="s1", position=0, role="user", content=huge),
            Message(session_id="s1", position=1, role="user", content=edge),
            Message(session_id="s1", position=2, role="user", content="docker here"),
        ))]))
        hits = sorted(await ok(store.search(match("docker"))), key=lambda h: h.position)
        assert [(h.content, h.length) for h in hits] == [
            (huge[:LONGEST_READ], len(index_tokens(huge))), (edge, None),
            ("docker here", None)]

    async def test_messages_read_to_a_length_end_with_a_note(self, store: SessionStore) -> None:
        """Asked for ``longest`` characters, a longer content is its start and a note; the
        others, and every content asked for whole, are as stored."""
        huge = "log line \x00é😀\n" * 5_000
        await ok(store.ingest([Conversation(Session(id="s1"), (
            Message(session_id="s1", position=0, role="user", content=huge),
            Message(session_id="s1", position=1, role="assistant", content="x" * 1000),
        ))]))
        cut = await ok(store.messages(["s1"], 1000))
        assert [m.content for m in cut] == [f"{huge[:1000]}\n{UNREAD}", "x" * 1000]
        assert [m.content for m in await ok(store.messages(["s1"]))] == [huge, "x" * 1000]

    async def test_recent_lists_roots_newest_first(self, store: SessionStore,
                                                   make_conversation: Make) -> None:
        """Recent sessions come newest first, undated ones last."""
        await ok(store.ingest([
            make_conversation("mid", started_at=20.0),
            make_conversation("undated"),
            make_conversation("new", started_at=30.0),
            make_conversation("old", started_at=10.0),
        ]))
        listed = await ok(store.recent(RecentQuery(limit=10)))
        assert [o.session.id for o in listed] == ["new", "mid", "old", "undated"]

    async def test_recent_honours_time_bounds(self, store: SessionStore,
                                              make_conversation: Make) -> None:
        """``since``/``until`` bound the start time; undated sessions drop out with a bound."""
        await ok(store.ingest([
            make_conversation("old", started_at=10.0),
            make_conversation("mid", started_at=20.0),
            make_conversation("new", started_at=30.0),
            make_conversation("undated"),
        ]))
        listed = await ok(store.recent(RecentQuery(limit=10, since=15.0, until=25.0)))
        assert [o.session.id for o in listed] == ["mid"]

    async def test_recent_parts_lists_the_undated_sessions_that_are_no_root(
            self, store: SessionStore, make_conversation: Make) -> None:
        """``parts`` with ``undated``: the sub-agents and continuations with no time,
        whatever their root's time; not an undated root, nor an orphan (a root), nor the
        first of a loop of parents (the loop's root)."""
        await ok(store.ingest([
            make_conversation("dated-root", started_at=10.0),
            make_conversation("undated-sub", parent="dated-root"),
            make_conversation("dated-sub", parent="dated-root", started_at=11.0),
            make_conversation("undated-grandchild", parent="dated-sub"),
            make_conversation("undated-root"),
            make_conversation("undated-under-undated", parent="undated-root"),
            make_conversation("orphan", parent="gone"),
            make_conversation("loop-a", parent="loop-b"),
            make_conversation("loop-b", parent="loop-a"),
        ]))
        parts = await ok(store.recent(RecentQuery(limit=10, undated=True, parts=True)))
        assert sorted(o.session.id for o in parts) == [
            "loop-b", "undated-grandchild", "undated-sub", "undated-under-undated"]
        roots = await ok(store.recent(RecentQuery(limit=10, undated=True)))
        assert sorted(o.session.id for o in roots) == ["loop-a", "orphan", "undated-root"]

    async def test_a_bounded_search_notes_roots_in_range_with_an_undated_part(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Results are one per root: an undated sub-agent (or a deeper one) of a root in
        the range is not searched, so that root is counted, once however many such parts
        it has; a root out of the range, or an undated one (counted as such), is not."""
        await ok(store.ingest([
            make_conversation("in-range", started_at=20.0),
            make_conversation("sub-1", parent="in-range"),
            make_conversation("dated-sub", parent="in-range", started_at=21.0),
            make_conversation("sub-2", parent="dated-sub"),
            make_conversation("also-in-range", started_at=22.0),
            make_conversation("sub-3", parent="also-in-range"),
            make_conversation("out-of-range", started_at=90.0),
            make_conversation("sub-4", parent="out-of-range"),
            make_conversation("undated-root"),
            make_conversation("sub-5", parent="undated-root"),
        ]))
        bounded = RecentQuery(limit=10, since=15.0, until=25.0)
        notes = await undated_left_out(bounded, "searched")(Deps(store=store)).awaitable()
        said, in_range = unsafe_perform_io(notes.unwrap())
        assert said.startswith("1 session with no time is not searched"), said
        assert in_range.startswith("in 2 sessions of the time range, a sub-agent or "
                                   "continuation with no time is not searched"), in_range
        listed = await undated_left_out(bounded, "listed")(Deps(store=store)).awaitable()
        assert len(unsafe_perform_io(listed.unwrap())) == 1  # parts are listed with their roots

    async def test_recent_treats_an_orphan_as_a_root(self, store: SessionStore,
                                                     make_conversation: Make) -> None:
        """Children are not listed, but a session whose parent is not stored is."""
        await ok(store.ingest([
            make_conversation("root", started_at=1.0),
            make_conversation("child", parent="root", started_at=2.0),
            make_conversation("orphan", parent="gone", started_at=3.0),
        ]))
        listed = await ok(store.recent(RecentQuery(limit=10)))
        assert [o.session.id for o in listed] == ["orphan", "root"]

    async def test_recent_excludes_roots_and_hidden_sources(self, store: SessionStore,
                                                           make_conversation: Make) -> None:
        """``exclude_roots`` and ``hidden_sources`` remove sessions from the list."""
        await ok(store.ingest([
            make_conversation("current", started_at=3.0),
            make_conversation("cron", source="cron", started_at=2.0),
            make_conversation("kept", started_at=1.0),
        ]))
        listed = await ok(store.recent(RecentQuery(limit=10, exclude_roots=("current",),
                                                   hidden_sources=("cron",))))
        assert [o.session.id for o in listed] == ["kept"]

    async def test_recent_honours_the_limit(self, store: SessionStore,
                                            make_conversation: Make) -> None:
        """No more than ``limit`` sessions are listed, the newest ones."""
        await ok(store.ingest([make_conversation(f"s{i}", started_at=float(i))
                               for i in range(6)]))
        listed = await ok(store.recent(RecentQuery(limit=2)))
        assert [o.session.id for o in listed] == ["s5", "s4"]

    async def test_recent_breaks_ties_by_id_and_fills_the_limit_with_undated_ones(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Sessions started at one time come by id, byte by byte ("B" before "a"); a limit
        reaching past the dated sessions is filled with undated ones, by id; a listing of
        the undated alone stops at its limit."""
        await ok(store.ingest([
            make_conversation("u2"), make_conversation("a", started_at=5.0),
            make_conversation("old", started_at=1.0), make_conversation("U1"),
            make_conversation("B", started_at=5.0), make_conversation("u3")]))
        for limit, expected in ((2, ["B", "a"]), (3, ["B", "a", "old"]),
                                (5, ["B", "a", "old", "U1", "u2"])):
            listed = await ok(store.recent(RecentQuery(limit=limit)))
            assert [o.session.id for o in listed] == expected
        undated = await ok(store.recent(RecentQuery(limit=2, undated=True)))
        assert [o.session.id for o in undated] == ["U1", "u2"]

    async def test_recent_counts_messages_and_previews_first_user_turn(
            self, store: SessionStore, make_conversation: Make) -> None:
        """The overview counts the session's messages and previews its first user message."""
        long_text = "  please\n\n  fix   the\tbridge " + "x" * 300
        await ok(store.ingest([
            make_conversation("s1", ("system", "you are helpful"), ("user", long_text),
                              ("user", "second question"), started_at=1.0),
            make_conversation("silent", ("assistant", "nobody asked"), started_at=0.5),
        ]))
        listed = {o.session.id: o for o in await ok(store.recent(RecentQuery(limit=5)))}
        assert listed["s1"].message_count == 3
        assert listed["s1"].preview == ("please fix the bridge " + "x" * 300)[:200]
        assert (listed["silent"].message_count, listed["silent"].preview) == (1, "")

    @pytest.mark.parametrize("query", ["端口冲突", "冲突"])
    async def test_cjk_words_inside_a_run_are_found(self, store: SessionStore,
                                                    make_conversation: Make, query: str) -> None:
        """Chinese text is found by a word that sits inside a longer run of characters."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "上次怎么解决端口冲突"), ("user", "今天天气很好"))]))
        hits = await ok(store.search(match(query)))
        assert [h.content for h in hits] == ["上次怎么解决端口冲突"]

    async def test_a_lone_cjk_character_as_a_whole_word_is_no_prefix(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A one-character CJK term that is not a prefix (a Korean noun the planner searches
        by its forms: 큐, 큐에) matches that token only, never 큐브 or 시큐리티."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "큐 비우기"), ("user", "큐브 아이콘"), ("user", "시큐리티 설정"))]))
        hits = await ok(store.search(MatchQuery(expression=Term("큐"), roles=ROLES)))
        assert [h.content for h in hits] == ["큐 비우기"]

    async def test_term_stats_count_messages_holding_each_term(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Each term is counted once per message holding it; absent terms are left out."""
        await ok(store.ingest([
            make_conversation("s1", ("user", "bike bike repair"), ("assistant", "the bikes")),
            make_conversation("s2", ("tool", "bike shop"), ("user", "nothing here")),
        ]))
        stats = await ok(store.term_stats(["bike", "bikes", "unicycle"]))
        assert dict(stats.counts) == {"bike": 2, "bikes": 1}

    async def test_term_stats_count_a_prefix_as_the_messages_it_matches(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A prefix (a question's lone CJK character) is counted as a prefix search matches:
        改 in 改成 too, not only where the character ends a run and is a token alone."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "改成 utf8"), ("assistant", "修改 配置 再改"), ("tool", "改了 docker"),
            ("user", "dockerd 改"), ("user", "docs"))]))
        stats = await ok(store.term_stats(["改"], ["改", "dock", "无"]))
        matched = {p: len(await ok(store.search(MatchQuery(
            expression=Term(p, prefix=True), roles=ROLES, max_scored=None))))
            for p in ("改", "dock")}
        assert dict(stats.prefix_counts) == matched == {"改": 4, "dock": 2}
        assert dict(stats.counts) == {"改": 2}

    async def test_term_stats_report_size_and_mean_length(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Documents are the messages indexed; the mean length is in index tokens."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "one two three"), ("assistant", "four"), ("user", "five six"))]))
        stats = await ok(store.term_stats([]))
        assert (stats.documents, stats.average_length, stats.counts) == (3, 2.0, ())

    async def test_term_stats_follow_a_reingest(self, store: SessionStore,
                                               make_conversation: Make) -> None:
        """Replacing a session replaces its counts too."""
        await ok(store.ingest([make_conversation("s1", ("user", "kiwi"), ("user", "kiwi pie"))]))
        await ok(store.ingest([make_conversation("s1", ("user", "mango"))]))
        stats = await ok(store.term_stats(["kiwi", "mango"]))
        assert (stats.documents, dict(stats.counts)) == (1, {"mango": 1})

    async def test_term_stats_above_the_cap_stay_close_to_the_truth(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Past a few thousand matches counts may be estimated, but a word frequent only
        in the newest messages (a current topic) is not taken for one found everywhere."""
        turns = [("user", "common old topic") for _ in range(6000)]
        turns += [("user", "common kubernetes") for _ in range(2500)]
        await ok(store.ingest([make_conversation("long", *turns)]))
        stats = await ok(store.term_stats(["common", "kubernetes", "old"], ["comm", "kub"]))
        counts = dict(stats.counts)
        assert abs(counts["common"] - 8500) <= 85
        assert abs(counts["kubernetes"] - 2500) <= 25
        assert abs(counts["old"] - 6000) <= 60
        prefixed = dict(stats.prefix_counts)  # a prefix past the limit, estimated alike
        assert abs(prefixed["comm"] - 8500) <= 85
        assert abs(prefixed["kub"] - 2500) <= 25

    async def test_term_stats_of_an_empty_store(self, store: SessionStore) -> None:
        """An empty store has no documents and no counts."""
        stats = await ok(store.term_stats(["anything"]))
        assert (stats.documents, stats.counts) == (0, ())

    @pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=lambda q: repr(q[:20]))
    async def test_hostile_queries_never_fail(self, store: SessionStore,
                                              make_conversation: Make, query: str) -> None:
        """Whatever the text, a parsed query searches without error."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "C++ chat-send TODO fix the problem with word1-7.x"))]))
        expression = parse_query(query).expression
        if expression is not None:
            await ok(store.search(MatchQuery(expression=expression, roles=ROLES)))

    async def test_titles_are_found_by_their_words_best_first(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A session is found by words of its title, the title holding more of them first;
        titles are searched apart from messages."""
        await ok(store.ingest([
            make_conversation("both", ("user", "hello"), title="CORS fix for the API",
                              started_at=1.0),
            make_conversation("one", ("user", "hello"), title="API keys rotated",
                              started_at=2.0),
            make_conversation("body", ("user", "the CORS API broke"), title="lunch plans"),
        ]))
        hits = await ok(store.search_titles(match("CORS API")))
        assert [(h.session_id, h.title, h.source, h.started_at) for h in hits] == [
            ("both", "CORS fix for the API", "cli", 1.0), ("one", "API keys rotated", "cli", 2.0)]
        assert hits[0].score > hits[1].score > 0

    async def test_a_session_is_found_by_its_source(self, store: SessionStore,
                                                    make_conversation: Make) -> None:
        """The source a session was imported from is searchable like its title."""
        await ok(store.ingest([make_conversation("a", title="deploy", source="claude-code"),
                               make_conversation("b", title="deploy", source="codex")]))
        assert [h.session_id for h in await ok(store.search_titles(match("claude")))] == ["a"]

    @pytest.mark.parametrize("query", ["端口冲突", "冲突", "ポート"])
    async def test_cjk_titles_are_found_by_a_word_inside_them(
            self, store: SessionStore, make_conversation: Make, query: str) -> None:
        """A CJK title is indexed as its messages are: a word inside a run finds it."""
        await ok(store.ingest([make_conversation("zh", title="修复端口冲突的问题"),
                               make_conversation("ja", title="ポート競合を直した"),
                               make_conversation("other", title="今天天气很好")]))
        found = [h.session_id for h in await ok(store.search_titles(match(query)))]
        assert found == (["ja"] if query == "ポート" else ["zh"])

    async def test_title_search_honours_time_hidden_sources_and_limit(
            self, store: SessionStore, make_conversation: Make) -> None:
        """``since``/``until`` bound the session's start (undated sessions fall outside),
        hidden sources are left out, no more than ``limit`` come back."""
        await ok(store.ingest([
            make_conversation("old", title="kiwi", started_at=100.0),
            make_conversation("mid", title="kiwi", started_at=200.0),
            make_conversation("new", title="kiwi", started_at=300.0),
            make_conversation("undated", title="kiwi"),
            make_conversation("cron", title="kiwi", source="cron", started_at=200.0),
        ]))

        async def found(**fields: Any) -> list[str]:
            return [h.session_id for h in await ok(store.search_titles(match("kiwi", **fields)))]
        assert await found(since=150.0, until=250.0) == ["cron", "mid"]  # a tie: by id
        assert await found(since=150.0, hidden_sources=("cron",)) == ["new", "mid"]
        assert await found(until=150.0) == ["old"]
        assert await found(limit=2) == ["new", "cron"]
        assert sorted(await found()) == ["cron", "mid", "new", "old", "undated"]

    async def test_a_word_in_too_many_titles_selects_none(self, store: SessionStore,
                                                          make_conversation: Make) -> None:
        """A word found in more than ``max_scored`` titles (a source most sessions share)
        selects no session by itself; the rarer words still do, and an AND still holds."""
        await ok(store.ingest([
            *[make_conversation(f"s{i}", title=f"chore {i}", source="codex") for i in range(4)],
            make_conversation("deploy", title="deploy plan", source="codex"),
            make_conversation("other", title="deploy notes", source="cli")]))

        async def found(text: str, cap: int | None) -> list[str]:
            hits = await ok(store.search_titles(match(text, max_scored=cap)))
            return sorted(h.session_id for h in hits)
        assert await found("codex", 3) == []
        assert await found("codex deploy", 3) == ["deploy", "other"]
        assert await found("codex AND deploy", 3) == ["deploy"]
        assert len(await found("codex", None)) == 5

    async def test_reingest_replaces_the_title(self, store: SessionStore,
                                               make_conversation: Make) -> None:
        """Ingesting a session again with a new title finds it by the new title only."""
        await ok(store.ingest([make_conversation("s1", ("user", "x"), title="walrus plans")]))
        await ok(store.ingest([make_conversation("s1", ("user", "x"), title="narwhal plans")]))
        await ok(store.ingest([make_conversation("s1", ("user", "x"), title="narwhal plans")]))
        assert await ok(store.search_titles(match("walrus"))) == ()
        assert [h.title for h in await ok(store.search_titles(match("plans")))] == [
            "narwhal plans"]

    async def test_title_search_of_an_empty_store_finds_nothing(self,
                                                                store: SessionStore) -> None:
        """Searching titles before any ingest succeeds with no hits."""
        assert await ok(store.search_titles(match("anything"))) == ()

    @pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=lambda q: repr(q[:20]))
    async def test_hostile_queries_never_fail_on_titles(
            self, store: SessionStore, make_conversation: Make, query: str) -> None:
        """Whatever the text, a parsed query searches titles without error."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "x"), title="C++ chat-send TODO fix the problem with word1-7.x")]))
        expression = parse_query(query).expression
        if expression is not None:
            await ok(store.search_titles(MatchQuery(expression=expression, roles=ROLES)))

    async def test_its_vectors_are_those_of_its_own_messages(
            self, store: SessionStore, make_conversation: Make) -> None:
        """The store's vector capability sees the messages the store holds."""
        await ok(store.ingest([make_conversation("s1", ("user", "alpha"), ("assistant", "b"))]))
        vectors = store.vector_store()
        assert vectors is not None
        pending = await ok(vectors.unembedded("m", ("user",), 10))
        assert [(m.session_id, m.position, m.content) for m in pending] == [("s1", 0, "alpha")]

    async def test_its_summary_cache_gives_back_what_it_kept(self, store: SessionStore) -> None:
        """A summary kept in the store's cache is found again by the same key only."""
        cache = store.summary_cache()
        assert cache is not None
        key = SummaryKey(root_session_id="s1", content="c", query="docker", model="m",
                         prompt_version="v")
        await ok(cache.keep_summary(key, Summary(text="Rebuilt the bridge.", kind="llm")))
        kept = await ok(cache.cached_summary(key))
        assert kept is not None and kept.text == "Rebuilt the bridge."
        assert await ok(cache.cached_summary(attrs.evolve(key, query="cors"))) is None

    async def test_its_import_ledger_remembers_a_source(self, store: SessionStore) -> None:
        """Marks kept in the store's ledger come back with the source's state."""
        ledger = store.import_ledger()
        assert ledger is not None
        key = SourceKey(kind="codex", location="/x")
        await ok(ledger.keep(key, (Mark(item="a.jsonl", fingerprint="1:2", sessions=1,
                                        messages=3),), now=10.0))
        state = await ok(ledger.state(key))
        assert (state.marks_by_item()["a.jsonl"].fingerprint, state.messages) == ("1:2", 3)
        assert [s.key for s in await ok(ledger.sources())] == [key]

    async def test_optimize_keeps_every_search_result(self, store: SessionStore,
                                                      make_conversation: Make) -> None:
        """After optimize the same query finds the same messages in the same order."""
        for i in range(3):  # several writes, so an index has pieces to merge
            await ok(store.ingest([make_conversation(
                f"s{i}", ("user", f"docker bridge {i}"), ("assistant", "docker restart"))]))
        before = await ok(store.search(match("docker")))
        merged = await ok(store.optimize())
        after = await ok(store.search(match("docker")))
        assert [(h.session_id, h.position) for h in after] == [
            (h.session_id, h.position) for h in before]
        assert len(after) == 6
        # What was merged, in words, or None (a store that merges no index); run again
        # at once, nothing is left to merge.
        assert merged is None or (merged and all(isinstance(m, str) for m in merged))
        assert not await ok(store.optimize())

    async def test_rewrite_replaces_texts_everywhere_and_drops_what_it_touched(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Titles, contents and tool arguments are rewritten and searched as rewritten; the
        vectors of changed messages and the summaries holding the text go; a dry run only
        counts."""
        secret = "AKIAIOSFODNN7EXAMPLE"
        chat = make_conversation("s1", ("user", f"key {secret} kiwi"), ("assistant", "plain"),
                                 title=f"rotate {secret}")
        calls = (ToolCall(id="c", name="bash", arguments=f"echo {secret}"),)
        chat = Conversation(chat.session, (chat.messages[0], attrs.evolve(
            chat.messages[1], tool_calls=calls)))
        await ok(store.ingest([chat, make_conversation("s2", ("user", "nothing here"))]))
        vectors, cache = store.vector_store(), store.summary_cache()
        rewriter = store.text_rewriter()
        assert vectors is not None and cache is not None and rewriter is not None
        await ok(vectors.keep_vectors("m", [(MessageKey(session_id=s, position=0), (1.0, 0.0))
                                            for s in ("s1", "s2")]))
        key = SummaryKey(root_session_id="s1", content="c", query="q", model="m",
                         prompt_version="v")
        await ok(cache.keep_summary(key, Summary(text=f"Used {secret}.", kind="llm")))

        def edit(text: str) -> str:
            return text.replace(secret, "[gone]")
        dry = await ok(rewriter.rewrite_texts(edit, dry_run=True))
        assert (dry.sessions, dry.messages, dry.titles, dry.summaries_dropped) == (1, 2, 1, 1)
        assert {h.session_id for h in await ok(store.search(match(secret)))} == {"s1"}
        done = await ok(rewriter.rewrite_texts(edit))
        assert done == dry
        assert await ok(store.search(match(secret))) == ()
        assert await ok(store.search_titles(match(secret))) == ()
        assert {h.session_id for h in await ok(store.search(match("gone kiwi")))} == {"s1"}
        (session,) = await ok(store.sessions(["s1"]))
        stored = await ok(store.messages(["s1"]))
        assert session.title == "rotate [gone]"
        assert stored[1].tool_calls[0].arguments == "echo [gone]"
        assert await ok(vectors.vector_count("m")) == 1  # s2's vector stays
        assert await ok(cache.cached_summary(key)) is None
        again = await ok(rewriter.rewrite_texts(edit))
        assert (again.sessions, again.summaries_dropped) == (0, 0)

    async def test_rewrite_reaches_the_project(self, store: SessionStore,
                                               make_conversation: Make) -> None:
        """A session's project is rewritten too (a folder path can hold a token), and the
        session is still found by the project's last folder."""
        secret = "AKIAIOSFODNN7EXAMPLE"
        await ok(store.ingest([make_conversation("s1", ("user", "kiwi build"),
                                                 project=f"/src/{secret}/api")]))
        rewriter = store.text_rewriter()
        assert rewriter is not None
        done = await ok(rewriter.rewrite_texts(lambda text: text.replace(secret, "[gone]")))
        assert (done.sessions, done.messages, done.titles) == (1, 0, 0)
        (session,) = await ok(store.sessions(["s1"]))
        assert session.project == "/src/[gone]/api"
        found = await ok(store.search(match("kiwi", projects=("api",))))
        assert [h.session_id for h in found] == ["s1"]

    async def test_stats_count_what_the_store_holds(self, store: SessionStore,
                                                    make_conversation: Make) -> None:
        """Sessions and messages in all and per source (most sessions first), the span of
        start times, vectors per model and cached summaries; empty, all zero."""
        reading = store.stats()
        assert reading is not None
        empty = await ok(reading)
        assert (empty.sessions, empty.messages, empty.sources, empty.oldest) == (0, 0, (), None)
        await ok(store.ingest([
            make_conversation("a", ("user", "x"), ("assistant", "y"), started_at=300.0),
            make_conversation("b", ("user", "x"), started_at=100.0, source="cron"),
            make_conversation("c", ("user", "x"), ("user", "z"), ("assistant", "w"),
                              source="cron"),
            make_conversation("a", ("user", "replaced"), started_at=200.0)]))
        vectors = store.vector_store()
        cache = store.summary_cache()
        assert vectors is not None and cache is not None
        await ok(vectors.keep_vectors("m1", [(MessageKey(session_id="b", position=0), (1.0, 0.0))]))
        await ok(cache.keep_summary(SummaryKey(root_session_id="a", content="c", query="q",
                                               model="m", prompt_version="v"),
                                    Summary(text="s", kind="llm")))
        reading = store.stats()
        assert reading is not None
        counted = await ok(reading)
        assert (counted.sessions, counted.messages) == (3, 5)
        assert [(s.source, s.sessions, s.messages) for s in counted.sources] == [
            ("cron", 2, 4), ("cli", 1, 1)]
        assert (counted.oldest, counted.newest) == (100.0, 200.0)
        assert counted.vectors == (("m1", 1),)
        assert counted.cached_summaries == 1
