"""Tests of the load stage against the in-memory store."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import attrs
from returns.future import FutureResult
from returns.io import IOFailure, IOSuccess
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.errors import RecallError, StoreUnavailable
from harkback.stages.flow import Loaded, Resolved
from harkback.stages.load.load import Load
from harkback.stages.load.render import CLIP_MARKER
from harkback.stages.load.truncate import EARLIER, LATER
from harkback.stages.message_window import MessageWindow, WindowQuery
from harkback.stages.ports import Deps, IngestReport, MatchQuery, RecentQuery, TermStats
from harkback.stages.query import parse_query
from harkback.stages.records import (
    Candidate,
    Conversation,
    Message,
    MessageHit,
    Session,
    SessionLink,
    SessionOverview,
    TitleHit,
)
from harkback.stages.request import SearchRequest
from harkback.stages.stage import Step


def _chat(session: Session, *turns: tuple[str, str], **extra: Any) -> Conversation:
    messages = tuple(Message(session_id=session.id, position=i, role=role,  # type: ignore[arg-type]
                             content=content, **extra)
                     for i, (role, content) in enumerate(turns))
    return Conversation(session, messages)


async def _store(*chats: Conversation) -> MemoryStore:
    store = MemoryStore()
    outcome = await store.ingest(chats).awaitable()
    assert isinstance(outcome, IOSuccess)
    return store


def _hit(session_id: str, position: int, score: float = 1.0) -> MessageHit:
    return MessageHit(session_id=session_id, position=position, role="user", content="",
                      score=score)


def _resolved(query: str, *candidates: Candidate) -> Resolved:
    return Resolved(request=SearchRequest(query=query), parsed=parse_query(query),
                    candidates=candidates, sessions_searched=len(candidates))


async def _run(step: Step[Loaded], store: Any) -> Loaded:
    outcome = await asyncio.wait_for(step(Deps(store=store)).awaitable(), timeout=5)
    assert isinstance(outcome, IOSuccess), outcome
    loaded: Loaded = unsafe_perform_io(outcome.unwrap())
    return loaded


ROOT = Session(id="root", started_at=100.0, ended_at=190.0, end_reason="compression")
CONT = Session(id="cont", parent_session_id="root", started_at=200.0)
SUB = Session(id="sub", parent_session_id="root", started_at=150.0, source="delegate")
GRAND = Session(id="grand", parent_session_id="cont", started_at=250.0, source="delegate")


async def test_single_session_is_rendered_whole() -> None:
    """A short session comes back as its full transcript, not truncated."""
    store = await _store(_chat(ROOT, ("user", "docker is down"), ("assistant", "restart it")))
    loaded = await _run(Load()(_resolved("docker", Candidate(root=ROOT, hits=(_hit("root", 0),)))),
                        store)
    transcript = loaded.transcripts[0]
    assert transcript.text == "[USER]: docker is down\n\n[ASSISTANT]: restart it"
    assert not transcript.truncated
    assert transcript.full_chars == len(transcript.text)


async def test_whole_lineage_is_rendered_in_order() -> None:
    """Root, then its descendants of every depth by start time, each with a header."""
    store = await _store(_chat(ROOT, ("user", "first")), _chat(CONT, ("user", "third")),
                         _chat(SUB, ("assistant", "second")), _chat(GRAND, ("user", "fourth")))
    loaded = await _run(Load()(_resolved("x", Candidate(root=ROOT, hits=(_hit("root", 0),)))),
                        store)
    assert loaded.transcripts[0].text == (
        "[USER]: first\n\n--- sub-agent session sub (delegate) ---\n\n[ASSISTANT]: second"
        "\n\n--- continued in session cont ---\n\n[USER]: third"
        "\n\n--- sub-agent session grand (delegate) ---\n\n[USER]: fourth")


async def test_candidate_lineage_is_filled() -> None:
    """The transcript's candidate lists every session of the lineage, root first."""
    store = await _store(_chat(ROOT, ("user", "a")), _chat(CONT, ("user", "b")),
                         _chat(SUB, ("user", "c")), _chat(GRAND, ("user", "d")))
    loaded = await _run(Load()(_resolved("a", Candidate(root=ROOT, hits=(_hit("root", 0),)))),
                        store)
    lineage = loaded.transcripts[0].candidate.lineage
    assert [s.id for s in lineage] == ["root", "sub", "cont", "grand"]


async def test_parent_cycle_does_not_loop() -> None:
    """Sessions that are each other's parent are each rendered once."""
    a = Session(id="a", parent_session_id="b", started_at=1.0)
    b = Session(id="b", parent_session_id="a", started_at=2.0)
    store = await _store(_chat(a, ("user", "in a")), _chat(b, ("user", "in b")))
    loaded = await _run(Load()(_resolved("a", Candidate(root=a, hits=(_hit("a", 0),)))), store)
    text = loaded.transcripts[0].text
    assert text.count("in a") == 1 and text.count("in b") == 1


async def test_long_session_is_cut_around_the_hit() -> None:
    """A session over budget keeps the hit message, with markers, within the budget."""
    turns = [("user", f"filler message number {i} " + "blah " * 30) for i in range(400)]
    turns[250] = ("user", "the nginx proxy_hide_header line was the culprit")
    store = await _store(_chat(ROOT, *turns))
    loaded = await _run(Load(budget_chars=5000)(_resolved(
        "nginx", Candidate(root=ROOT, hits=(_hit("root", 250),)))), store)
    transcript = loaded.transcripts[0]
    assert transcript.truncated and len(transcript.text) <= 5000
    assert "[USER]: the nginx proxy_hide_header line was the culprit" in transcript.text
    assert transcript.text.startswith(EARLIER) and transcript.text.endswith(LATER)
    assert transcript.full_chars > 5000


def _spelled(query: str, *candidates: Candidate,
             spellings: tuple[tuple[str, ...], ...]) -> Resolved:
    # As the ranker hands it on: the question's units and the other spellings it searched.
    resolved = _resolved(query, *candidates)
    return attrs.evolve(resolved, parsed=attrs.evolve(resolved.parsed, spellings=spellings))


async def test_a_long_hit_found_by_another_spelling_is_cut_around_it() -> None:
    """'bikes' matched "bike" deep in a message longer than the budget: the cut keeps it."""
    long_turn = "filler words about nothing much " * 300 + "then the bike was serviced"
    store = await _store(_chat(ROOT, ("user", long_turn)))
    loaded = await _run(Load(budget_chars=2000)(_spelled(
        "bikes", Candidate(root=ROOT, hits=(_hit("root", 0),)), spellings=(("bike",),))), store)
    assert "the bike was serviced" in loaded.transcripts[0].text


async def test_without_a_placed_hit_lines_of_another_spelling_are_kept() -> None:
    """No hit to place: the lines holding a unit as another spelling are what is kept."""
    turns = [("user", f"filler message number {i} " + "blah " * 30) for i in range(300)]
    turns[200] = ("assistant", "the bike was serviced at the shop on main street")
    store = await _store(_chat(ROOT, *turns))
    loaded = await _run(Load(budget_chars=3000)(_spelled(
        "bikes", Candidate(root=ROOT, hits=()), spellings=(("bike",),))), store)
    assert "the bike was serviced at the shop" in loaded.transcripts[0].text


async def test_hits_in_a_child_session_are_kept() -> None:
    """A hit in a continuation is found in the lineage's transcript and kept."""
    store = await _store(
        _chat(ROOT, *[("user", f"early talk {i} " + "blah " * 30) for i in range(200)]),
        _chat(CONT, ("user", "unrelated"), ("assistant", "the answer is port 8080")))
    loaded = await _run(Load(budget_chars=3000)(_resolved(
        "port", Candidate(root=ROOT, hits=(_hit("cont", 1),)))), store)
    assert "[ASSISTANT]: the answer is port 8080" in loaded.transcripts[0].text


async def test_spread_hits_each_keep_a_window() -> None:
    """Hits far apart in one long session each survive the cut."""
    turns = [("user", f"filler {i} " + "blah " * 30) for i in range(400)]
    turns[20] = ("user", "first clue: docker bridge")
    turns[380] = ("user", "last clue: docker dns")
    store = await _store(_chat(ROOT, *turns))
    loaded = await _run(Load(budget_chars=4000)(_resolved(
        "docker", Candidate(root=ROOT, hits=(_hit("root", 380, 2.0), _hit("root", 20))))), store)
    text = loaded.transcripts[0].text
    assert "first clue" in text and "last clue" in text


async def test_unplaceable_hits_fall_back_to_query_terms() -> None:
    """When no hit is in the transcript, the lines holding query terms are kept."""
    turns = [("user", f"filler {i} " + "blah " * 30) for i in range(300)]
    turns[150] = ("user", "the kubernetes ingress was misconfigured")
    store = await _store(_chat(ROOT, *turns))
    loaded = await _run(Load(budget_chars=2000)(_resolved(
        "kubernetes ingress", Candidate(root=ROOT, hits=(_hit("root", 999),)))), store)
    assert "kubernetes ingress was misconfigured" in loaded.transcripts[0].text


async def test_tool_output_limit_is_applied() -> None:
    """Tool output is cut to the configured head and tail."""
    chat = Conversation(ROOT, (
        Message(session_id="root", position=0, role="user", content="run it"),
        Message(session_id="root", position=1, role="tool", tool_name="bash",
                content="HEAD" + "x" * 500 + "TAIL")))
    store = await _store(chat)
    loaded = await _run(Load(tool_output_chars=8)(_resolved(
        "run", Candidate(root=ROOT, hits=(_hit("root", 0),)))), store)
    assert "[TOOL:bash]: HEAD" + CLIP_MARKER + "TAIL" in loaded.transcripts[0].text


async def test_candidates_keep_their_order_and_request() -> None:
    """Transcripts come out in candidate order, carrying the request along."""
    other = Session(id="other", started_at=5.0)
    store = await _store(_chat(ROOT, ("user", "root talk")), _chat(other, ("user", "other talk")))
    resolved = _resolved("talk", Candidate(root=other, hits=(_hit("other", 0),)),
                         Candidate(root=ROOT, hits=(_hit("root", 0),)))
    loaded = await _run(Load()(resolved), store)
    assert [t.candidate.root.id for t in loaded.transcripts] == ["other", "root"]
    assert loaded.request == resolved.request and loaded.sessions_searched == 2


async def test_no_candidates_load_nothing() -> None:
    """An empty candidate list gives an empty transcript list."""
    loaded = await _run(Load()(_resolved("x")), MemoryStore())
    assert loaded.transcripts == ()


class _BrokenStore:
    """A store whose every call fails, as a locked or missing database would."""

    def _fail(self) -> FutureResult[Any, StoreUnavailable]:
        return FutureResult.from_failure(StoreUnavailable("database is locked"))

    def search(self, query: MatchQuery) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
        return self._fail()

    def search_titles(self, query: MatchQuery
                      ) -> FutureResult[tuple[TitleHit, ...], StoreUnavailable]:
        return self._fail()

    def sessions(self, ids: Sequence[str]) -> FutureResult[tuple[Session, ...], StoreUnavailable]:
        return self._fail()

    def session_links(self, ids: Sequence[str]
                      ) -> FutureResult[tuple[SessionLink, ...], StoreUnavailable]:
        return self._fail()

    def ids_alike(self, session_id: str, limit: int
                  ) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        return self._fail()

    def children(self, ids: Sequence[str]) -> FutureResult[tuple[Session, ...], StoreUnavailable]:
        return self._fail()

    def messages(self, session_ids: Sequence[str], longest: int | None = None
                 ) -> FutureResult[tuple[Message, ...], StoreUnavailable]:
        return self._fail()

    def message_window(self, query: WindowQuery
                       ) -> FutureResult[MessageWindow, StoreUnavailable]:
        return self._fail()

    def recent(self, query: RecentQuery
               ) -> FutureResult[tuple[SessionOverview, ...], StoreUnavailable]:
        return self._fail()

    def ingest(self, conversations: Sequence[Conversation]
               ) -> FutureResult[IngestReport, StoreUnavailable]:
        return self._fail()

    def term_stats(self, terms: Sequence[str], prefixes: Sequence[str] = ()
                   ) -> FutureResult[TermStats, StoreUnavailable]:
        return self._fail()

    def source_names(self) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        return self._fail()

    def close(self) -> None:
        """Nothing to release."""

    def vector_store(self) -> None:
        return None

    def summary_cache(self) -> None:
        return None

    def import_ledger(self) -> None:
        return None

    def session_remover(self) -> None:
        return None

    def text_rewriter(self) -> None:
        return None

    def stats(self) -> None:
        return None

    def optimize(self) -> FutureResult[None, StoreUnavailable]:
        return self._fail()


async def test_store_failure_is_a_value() -> None:
    """A failing store makes the stage fail with StoreUnavailable, not raise."""
    step = Load()(_resolved("x", Candidate(root=ROOT, hits=(_hit("root", 0),))))
    outcome = await step(Deps(store=_BrokenStore())).awaitable()
    assert isinstance(outcome, IOFailure)
    error: RecallError = unsafe_perform_io(outcome.failure())
    assert error == StoreUnavailable("database is locked")


class _CountingStore:
    """A memory store that counts the calls the load stage makes."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.calls: list[str] = []

    def children(self, ids: Sequence[str]) -> FutureResult[tuple[Session, ...], StoreUnavailable]:
        self.calls.append("children")
        return self.store.children(ids)

    def messages(self, session_ids: Sequence[str], longest: int | None = None
                 ) -> FutureResult[tuple[Message, ...], StoreUnavailable]:
        self.calls.append("messages")
        return self.store.messages(session_ids, longest)


async def test_lineages_load_together_as_each_alone() -> None:
    """Candidates of different depths load in one call per generation and one for every
    message, and each transcript is the one it gets loaded alone."""
    other = Session(id="other", started_at=50.0)
    side = Session(id="side", parent_session_id="other", started_at=60.0)
    store = await _store(_chat(ROOT, ("user", "root talk")), _chat(CONT, ("user", "cont talk")),
                         _chat(SUB, ("assistant", "sub talk")), _chat(GRAND, ("user", "grand")),
                         _chat(other, ("user", "other talk")), _chat(side, ("user", "side talk")),
                         _chat(Session(id="alone", started_at=1.0), ("user", "alone talk")))
    candidates = (Candidate(root=other, hits=(_hit("side", 0),)),
                  Candidate(root=ROOT, hits=(_hit("grand", 0),)),
                  Candidate(root=Session(id="alone", started_at=1.0), hits=(_hit("alone", 0),)))
    counting = _CountingStore(store)
    together = await _run(Load()(_resolved("talk", *candidates)), counting)
    # root -> cont -> grand is three generations deep, and the fourth finds none.
    assert counting.calls == ["children"] * 3 + ["messages"]
    for candidate, transcript in zip(candidates, together.transcripts, strict=True):
        alone = await _run(Load()(_resolved("talk", candidate)), store)
        assert transcript == alone.transcripts[0]
    assert "side talk" in together.transcripts[0].text
    assert "grand" in together.transcripts[1].text
    assert "root talk" not in together.transcripts[0].text


class _Unread(tuple[Message, ...]):
    """Messages that fail the test when looked at."""

    def __iter__(self) -> Any:
        raise AssertionError("the messages were read")


def test_hits_with_no_title_hit_are_placed_without_reading_the_messages() -> None:
    """Only a hit at position 0 (a title match) may move to its session's first message:
    without one the hits stay as they are and the lineage's messages are not scanned."""
    from harkback.stages.load.load import placed

    hits = (MessageHit(session_id="s", position=3, role="user", content="a", score=2.0),
            MessageHit(session_id="t", position=9, role="user", content="b", score=1.0))
    assert placed(hits, _Unread()) == hits
    title = MessageHit(session_id="s", position=0, role="user", content="", score=1.0)
    messages = (Message(session_id="s", position=4, role="user", content="x"),)
    assert [h.position for h in placed((title, *hits), messages)] == [4, 3, 9]
