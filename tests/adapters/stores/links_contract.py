"""The links contract (``SessionStore.session_links``, what the walk to a lineage's root
reads of a session): every store gives each asked session's parent, source and start as
its whole record (``sessions``) holds them, in the order asked, once each, unknown ids
left out.

:class:`LinksContract` is mixed into each store's contract test class, beside
:class:`~tests.adapters.stores.store_contract.StoreContract`.
"""

from __future__ import annotations

from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Session, SessionLink
from tests.adapters.stores.store_contract import ok

SESSIONS = (
    Session(id="root", source="cli", model="m", title="Fix CORS", started_at=1.5,
            ended_at=9.25, end_reason="compressed", project="/w/api"),
    Session(id="cont", source="cli", started_at=10.0, parent_session_id="root"),
    Session(id="sub \ufffe'q\" %s", source="subagent", parent_session_id="cont"),
    Session(id="orphan", parent_session_id="gone", started_at=3.0),
)


class LinksContract:
    """What every SessionStore promises of ``session_links``."""

    async def test_links_are_what_the_whole_sessions_hold(self, store: SessionStore) -> None:
        """A root, its continuation, an undated sub-agent whose id holds U+FFFE (the
        PostgreSQL store's escape mark), quotes and ``%s``, and a session whose parent is
        not stored: each link is its session's, in the order asked, a repeated id once
        and an unknown one left out."""
        await ok(store.ingest([Conversation(s) for s in SESSIONS]))
        asked = [SESSIONS[2].id, "nope", "root", "cont", "root", "orphan"]
        links = await ok(store.session_links(asked))
        assert links == tuple(map(SessionLink.of, await ok(store.sessions(asked))))
        assert [(link.id, link.parent_session_id, link.source, link.started_at)
                for link in links] == [(SESSIONS[2].id, "cont", "subagent", None),
                                       ("root", None, "cli", 1.5), ("cont", "root", "cli", 10.0),
                                       ("orphan", "gone", "", 3.0)]

    async def test_a_session_ingested_again_is_linked_as_it_is_now(
            self, store: SessionStore) -> None:
        """A session stored again under another parent and source is read as stored last;
        asking for no id, or for unknown ones only, reads none."""
        await ok(store.ingest([Conversation(s) for s in SESSIONS]))
        await ok(store.ingest([Conversation(Session(id="cont", source="codex",
                                                    parent_session_id="orphan"))]))
        assert await ok(store.session_links(["cont"])) == (
            SessionLink("cont", "orphan", "codex", None),)
        assert await ok(store.session_links([])) == ()
        assert await ok(store.session_links(["nope", "gone"])) == ()
