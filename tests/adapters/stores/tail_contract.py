"""The tail-write contract (:class:`~harkback.stages.tails.TailWriter`): a session written by
its tail reads back as if ingested whole, and a tail the store does not fit writes nothing."""

from __future__ import annotations

from typing import Protocol

import attrs

from harkback.stages.records import Conversation
from harkback.stages.tails import Tail, TailWriter, tail_of
from tests.adapters.stores.store_contract import Make, match, ok
from tests.adapters.stores.vector_contract import Store, axis, key


class TailStore(Store, TailWriter, Protocol):
    """A store that writes sessions by their tails, and keeps vectors."""


async def _tail_of(store: TailStore, new: Conversation) -> Tail:
    """``new``'s tail against what ``store`` holds of its session."""
    held = await ok(store.messages([new.session.id]))
    return tail_of(new, {m.position: m for m in held})


class TailContract:
    """What every store offering ``ingest_tails`` promises."""

    async def test_a_grown_session_written_by_its_tail_reads_as_ingested_whole(
            self, store: TailStore, make_conversation: Make) -> None:
        """Kept messages stay (and their vectors), the changed one and the new one are
        stored and indexed, the replaced text is found no more, the new title is."""
        old = make_conversation("s1", ("user", "docker bridge down"), ("assistant", "restart"),
                                ("assistant", "kiwi draft"), title="bridge trouble")
        await ok(store.ingest([old]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0)), (key("s1", 2), axis(1))]))
        new = make_conversation("s1", ("user", "docker bridge down"), ("assistant", "restart"),
                                ("assistant", "mango final"), ("user", "papaya thanks"),
                                title="papaya answers", started_at=5.0)
        tail = await _tail_of(store, new)
        report = await ok(store.ingest_tails([tail]))
        assert report is not None and (report.updated, report.messages) == (1, 2)
        assert await ok(store.messages(["s1"])) == new.messages
        assert await ok(store.sessions(["s1"])) == (new.session,)
        assert await ok(store.search(match("kiwi"))) == ()
        found = await ok(store.search(match("docker mango papaya")))
        assert sorted(h.position for h in found) == [0, 2, 3]
        assert [h.session_id for h in await ok(store.search_titles(match("answers")))] == ["s1"]
        assert await ok(store.search_titles(match("trouble"))) == ()
        assert await ok(store.vector_count("m")) == 1

    async def test_a_shorter_session_loses_its_last_messages(
            self, store: TailStore, make_conversation: Make) -> None:
        """A tail with no message past the kept ones removes the stored messages after them."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "docker"), ("assistant", "bridge"), ("user", "kiwi"))]))
        new = make_conversation("s1", ("user", "docker"))
        assert await ok(store.ingest_tails([await _tail_of(store, new)])) is not None
        assert await ok(store.messages(["s1"])) == new.messages
        assert await ok(store.search(match("bridge kiwi"))) == ()

    async def test_a_tail_the_store_does_not_fit_writes_nothing(
            self, store: TailStore, make_conversation: Make) -> None:
        """A tail whose kept messages are not what the store holds below it (another writer
        changed the session since), or whose session is not stored, is refused whole."""
        stored = make_conversation("s1", ("user", "docker"), ("assistant", "bridge"))
        await ok(store.ingest([stored]))
        grown = make_conversation("s1", ("user", "docker"), ("assistant", "bridge"),
                                  ("user", "kiwi"))
        fits = await _tail_of(store, grown)
        stranger = make_conversation("s2", ("user", "mango"))
        for tails in ([attrs.evolve(fits, below=(*fits.below, *fits.below[-1:]))],
                      [fits, Tail(conversation=stranger, since=0, below=())]):
            assert await ok(store.ingest_tails(tails)) is None
        assert await ok(store.messages(["s1", "s2"])) == stored.messages
        assert await ok(store.search(match("kiwi mango"))) == ()

    async def test_a_kept_message_another_writer_changed_refuses_the_tail(
            self, store: TailStore, make_conversation: Make) -> None:
        """Another writer rewrote a message below the tail (as many messages there as
        compared) between the compare and the write: the tail is refused and that writer's
        copy stays whole. The stores compared only the count below the tail and wrote it,
        leaving the other writer's first message before this copy's new one."""
        await ok(store.ingest([make_conversation("s1", ("user", "docker"),
                                                 ("assistant", "bridge"))]))
        grown = make_conversation("s1", ("user", "docker"), ("assistant", "bridge"),
                                  ("user", "kiwi"))
        tail = await _tail_of(store, grown)
        other = make_conversation("s1", ("user", "mango"), ("assistant", "bridge"))
        await ok(store.ingest([other]))
        assert await ok(store.ingest_tails([tail])) is None
        assert await ok(store.messages(["s1"])) == other.messages
        assert await ok(store.search(match("kiwi"))) == ()
