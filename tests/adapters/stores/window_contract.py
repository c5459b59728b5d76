"""The message-window contract (``SessionStore.message_window``, what ``harkback show``
reads): every store's window is the slice of the session's messages in position order
that the query names, with the session's count, and reads nothing of other sessions.

:class:`WindowContract` is mixed into each store's contract test class, beside
:class:`~tests.adapters.stores.store_contract.StoreContract`.
"""

from __future__ import annotations

from harkback.stages.message_window import MessageWindow, WindowQuery
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message, Session, ToolCall
from tests.adapters.stores.store_contract import ok

GAPPED = (0, 1, 3, 4, 8, 9, 10, 15, 16, 17, 30)
"""Positions with gaps, as a session with dropped turns has: an index is not a position."""


def _chat(session_id: str, positions: tuple[int, ...] = GAPPED, started_at: float = 100.0
          ) -> Conversation:
    messages = tuple(
        Message(session_id=session_id, position=p, role="user" if p % 2 else "assistant",
                content=f"{session_id} turn {p}" + ("\x00é😀" if p == 9 else ""),
                timestamp=None if p == 4 else 1_000.0 + p,
                tool_calls=(ToolCall(id=f"c{p}", name="bash", arguments='{"cmd": "ls"}'),)
                if p == 15 else ())
        for p in positions)
    return Conversation(Session(id=session_id, started_at=started_at), messages)


async def _stored(store: SessionStore) -> tuple[Message, ...]:
    """Three sessions whose ids share a prefix (the one read and two neighbours), stored
    in an order that is neither their ids' nor their positions'; the middle one's messages."""
    await ok(store.ingest([_chat("s-b", (2, 0, 1), started_at=50.0),
                           Conversation(_chat("s").session, tuple(reversed(_chat("s").messages))),
                           _chat("s-", (5, 6), started_at=10.0)]))
    return await ok(store.messages(["s"]))


def _positions(window: MessageWindow) -> list[int]:
    return [m.position for m in window.messages]


class WindowContract:
    """What every SessionStore promises of ``message_window``."""

    async def test_windows_by_offset_are_slices_of_the_session_in_position_order(
            self, store: SessionStore) -> None:
        """From every offset and at every size, the window is that slice of the session's
        messages (every field as stored) and the count is the session's."""
        whole = await _stored(store)
        assert [m.position for m in whole] == list(GAPPED)
        for limit in (1, 3, 4, len(GAPPED), 200):
            for offset in range(len(GAPPED)):
                window = await ok(store.message_window(
                    WindowQuery(session_id="s", limit=limit, offset=offset)))
                assert window == MessageWindow(messages=whole[offset:offset + limit],
                                               offset=offset, total=len(GAPPED))

    async def test_a_window_around_a_position_is_centred_on_it_and_full(
            self, store: SessionStore) -> None:
        """Around a position: the message's index, and a full window holding it, shifted to
        stay inside the session near either end."""
        whole = await _stored(store)
        found = {}
        for position in (0, 3, 10, 17, 30):
            window = await ok(store.message_window(
                WindowQuery(session_id="s", limit=4, around=position)))
            found[position] = (window.around_index, window.offset, _positions(window))
            assert window.total == len(GAPPED)
            assert window.messages == whole[window.offset:window.offset + 4]
        assert found == {0: (0, 0, [0, 1, 3, 4]), 3: (2, 0, [0, 1, 3, 4]),
                         10: (6, 4, [8, 9, 10, 15]), 17: (9, 7, [15, 16, 17, 30]),
                         30: (10, 7, [15, 16, 17, 30])}

    async def test_a_position_the_session_lacks_is_named_missing_and_reads_nothing(
            self, store: SessionStore) -> None:
        """A gap, a position past the last one, and one of another session: no index, no
        messages; the count is still the session's."""
        await _stored(store)
        for position in (2, 31, 10**17):
            window = await ok(store.message_window(
                WindowQuery(session_id="s", limit=5, around=position)))
            assert (window.around_index, window.messages, window.total) == (
                None, (), len(GAPPED))

    async def test_past_the_end_an_empty_or_unknown_session_reads_no_message(
            self, store: SessionStore) -> None:
        """An offset at or far past the end reads nothing (the count says how many there
        are); a session with no messages, or none stored, counts 0."""
        await _stored(store)
        await ok(store.ingest([Conversation(Session(id="empty"), ())]))
        for offset in (len(GAPPED), len(GAPPED) + 1, 10**30):
            window = await ok(store.message_window(
                WindowQuery(session_id="s", limit=20, offset=offset)))
            assert (window.messages, window.offset, window.total) == ((), offset, len(GAPPED))
        for session_id in ("empty", "unknown", "s-b-"):
            assert await ok(store.message_window(WindowQuery(session_id=session_id, limit=20))
                            ) == MessageWindow(messages=(), offset=0, total=0)

    async def test_a_window_follows_a_reingest(self, store: SessionStore) -> None:
        """A session stored again with fewer messages: the window and count are the new ones."""
        await _stored(store)
        await ok(store.ingest([_chat("s", (7, 8))]))
        window = await ok(store.message_window(WindowQuery(session_id="s", limit=20)))
        assert (_positions(window), window.total) == ([7, 8], 2)
