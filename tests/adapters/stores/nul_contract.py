"""The NUL contract: what a library or MCP caller asks holding a NUL character (which argv
cannot carry) gets one clear refusal from every store, the same, before the store reads
it. SQLite's JSON lists end a text at a NUL, so there it read as its start: the session
``s`` shown for ``s\\0x``, the cli sessions hidden for ``cli\\0x``. What a library caller
ingests holding one in a key or filter is refused the same way, before anything is written.

:class:`NulContract` is mixed into each store's contract test class, beside
:class:`~tests.adapters.stores.store_contract.StoreContract`.
"""

from __future__ import annotations

import attrs
import pytest

from harkback.pipeline import Harkback
from harkback.stages.errors import QueryRejected
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message, ToolCall
from harkback.stages.tails import Tail, TailWriter
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation

_ID, _NAME, _CALL = (f"a {what} cannot hold a NUL character" for what in (
    "session id", "source or project name", "tool call id"))
_KEYS = (  # a session holding a NUL where it is a key or a filter: the field, the reason
    ("id", _ID, lambda c: _named(c, "s\x00x")),
    ("parent_session_id", _ID, lambda c: attrs.evolve(c, session=attrs.evolve(
        c.session, parent_session_id="p\x00q"))),
    ("source", _NAME, lambda c: attrs.evolve(c, session=attrs.evolve(c.session,
                                                                     source="cli\x00x"))),
    ("project", _NAME, lambda c: attrs.evolve(c, session=attrs.evolve(c.session,
                                                                      project="/w\x00x"))),
    ("messages[1].tool_call_id", _CALL, lambda c: attrs.evolve(c, messages=(
        c.messages[0], Message(session_id=c.session.id, position=1, role="tool",
                               tool_call_id="c\x001")))),
    ("messages[1].tool_calls[0].id", _CALL, lambda c: attrs.evolve(c, messages=(
        c.messages[0], Message(session_id=c.session.id, position=1, role="assistant",
                               tool_calls=(ToolCall(id="c\x001", name="bash"),))))),
)


def _named(talk: Conversation, session_id: str) -> Conversation:
    return Conversation(attrs.evolve(talk.session, id=session_id), tuple(
        attrs.evolve(m, session_id=session_id) for m in talk.messages))


async def _stored(store: SessionStore) -> Harkback:
    await ok(store.ingest([conversation("s", ("user", "docker bridge"), started_at=1.0),
                           conversation("u", ("user", "docker swarm"), started_at=2.0)]))
    return Harkback(store=store)


class NulContract:
    """What every store answers to a NUL in a session id or a hidden source."""

    async def test_a_session_id_holding_a_nul_is_refused_never_its_start_shown(
            self, store: SessionStore) -> None:
        """``s\\0x`` (the id, or a message id of it to centre on) is one refusal naming
        it, and session ``s`` is not shown."""
        hb = await _stored(store)
        for asked, around in (("s\x00x", None), ("s", "s\x00x:0")):
            page = await hb.read_session(asked, around=around)
            assert page.failure() == QueryRejected(
                "a session id cannot hold a NUL character, got 's\\x00x'"), page

    async def test_a_hidden_source_holding_a_nul_is_refused(self, store: SessionStore) -> None:
        """``cli\\0x`` hidden is one refusal naming it, for a search and a browse alike."""
        hb = await _stored(store)
        for query in ("docker", ""):
            found = (await hb.search(query, hidden_sources=("cli\x00x",))).to_payload()
            assert (found["success"], found["error"]) == (
                False, "query rejected: hidden source names cannot hold a NUL character, "
                       "got 'cli\\x00x'"), found

    async def test_a_nul_in_a_key_or_filter_ingested_is_refused_naming_the_session(
            self, store: SessionStore) -> None:
        """A session whose id, parent, source, project or tool call id holds a NUL was
        stored by SQLite, then could not be read by id and searches left it out silently:
        it is one ValueError naming the field and the session, and nothing of its batch
        (the good session beside it included) is written, by ingest and by a tail alike."""
        good = conversation("ok", ("user", "docker bridge"), started_at=1.0)
        assert isinstance(store, TailWriter)
        for field, reason, spoil in _KEYS:
            bad = spoil(conversation("bad", ("user", "docker swarm"), started_at=2.0))
            said = f"{field}: {reason} (session {bad.session.id!r})"
            with pytest.raises(ValueError) as refused:
                store.ingest([good, bad])
            assert str(refused.value) == said
            with pytest.raises(ValueError) as refused:
                store.ingest_tails([Tail(conversation=bad, since=0, below=())])
            assert str(refused.value) == said
        assert await ok(store.sessions(["ok", "bad", "s\x00x"])) == ()
        found = (await Harkback(store=store).search("docker")).to_payload()
        assert (found["success"], found["count"]) == (True, 0), found
