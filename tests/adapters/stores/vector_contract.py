"""The VectorStore contract: every backend's test class subclasses :class:`VectorContract`.

A subclass lives in a module that defines a ``store`` fixture yielding a fresh, empty store
that is both a SessionStore and a VectorStore.
"""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Sequence
from typing import Any, Protocol

import pytest

from harkback.adapters.stores.sql.vectors import SESSIONS_BY_INDEX
from harkback.stages.ports import MessageKey, NearestQuery, SessionStore, Vector, VectorStore
from harkback.stages.records import ROLES, Message, MessageHit, Role
from tests.adapters.stores.store_contract import Make, failed, ok

DIMENSIONS = 4


class Store(SessionStore, VectorStore, Protocol):
    """A store of sessions that also keeps their vectors."""


def axis(index: int, dimensions: int = DIMENSIONS) -> Vector:
    """The unit vector along ``index``."""
    return tuple(1.0 if i == index else 0.0 for i in range(dimensions))


def between(first: int, second: int, weight: float) -> Vector:
    """The unit vector at cosine ``weight`` from axis ``first``, turned towards ``second``."""
    values = [0.0] * DIMENSIONS
    values[first], values[second] = weight, math.sqrt(1 - weight * weight)
    return tuple(values)


def key(session_id: str, position: int) -> MessageKey:
    """The key of one stored message."""
    return MessageKey(session_id=session_id, position=position)


def near(vector: Vector, *, model: str = "m", roles: tuple[Role, ...] = ROLES,
         **fields: Any) -> NearestQuery:
    """A nearest query for ``vector`` among vectors of ``model``."""
    return NearestQuery(vector=vector, model=model, roles=roles, **fields)


def places(hits: Sequence[MessageHit] | Sequence[Message]) -> list[tuple[str, int]]:
    """(session id, position) of each hit or message, in order."""
    return [(h.session_id, h.position) for h in hits]


async def embed_all(store: Store, model: str, roles: tuple[Role, ...], batch: int,
                    vector: Vector | None = None, sessions: Sequence[str] | None = None
                    ) -> list[tuple[str, int]]:
    """Keep ``vector`` (default: the first axis) for every message ``unembedded`` lists
    (of ``sessions``, when given), batch by batch, as an embedding run does; returns the
    messages in the order listed."""
    vector = axis(0) if vector is None else vector
    listed: list[tuple[str, int]] = []
    while pending := await ok(store.unembedded(model, roles, batch, sessions=sessions)):
        assert len(pending) <= batch
        kept = await ok(store.keep_vectors(model, [(key(*p), vector) for p in places(pending)]))
        assert kept == len(pending)
        listed += places(pending)
        assert len(listed) <= 1000, "unembedded() makes no progress"
    return listed


async def peak_while_keeping(store: Store, make_conversation: Make, *, messages: int = 16,
                             size: int = 1 << 20) -> tuple[int, int]:
    """How many vectors ``store`` kept of ``messages`` messages of ``size`` bytes each
    (their keys holding their texts, as ``embed`` makes them), and the most memory this
    process took on top meanwhile (Python's allocations, the store's thread too)."""
    await ok(store.ingest([make_conversation("big", *[
        ("user", f"{i} " + "lorem " * (size // 6)) for i in range(messages)])]))
    made = [(MessageKey(session_id=m.session_id, position=m.position, content=m.content),
             axis(0)) for m in await ok(store.unembedded("m", ("user",), messages))]
    tracemalloc.start()
    try:
        kept = await ok(store.keep_vectors("m", made))
        return kept, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


class VectorContract:
    """What every VectorStore promises."""

    async def test_nearest_ranks_by_cosine_best_first(self, store: Store,
                                                      make_conversation: Make) -> None:
        """Hits come best first, carrying the message's fields and its cosine as the score."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "far"), ("user", "same"), ("user", "close"), source="cli",
            started_at=5.0, timestamps=(None, 7.0))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(1)), (key("s1", 1), axis(0)),
                                          (key("s1", 2), between(0, 1, 0.8))]))
        hits = await ok(store.nearest(near(axis(0))))
        assert [(h.content, h.role, h.source, h.timestamp) for h in hits] == [
            ("same", "user", "cli", 7.0), ("close", "user", "cli", 5.0),
            ("far", "user", "cli", 5.0)]
        assert [h.score for h in hits] == pytest.approx([1.0, 0.8, 0.0], abs=1e-6)

    async def test_scores_are_cosines_whatever_the_lengths(self, store: Store,
                                                           make_conversation: Make) -> None:
        """Vectors that are not of unit length are scaled to it, so scores stay cosines."""
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), (3.0, 4.0, 0.0, 0.0))]))
        hits = await ok(store.nearest(near((2.0, 0.0, 0.0, 0.0))))
        assert [h.score for h in hits] == pytest.approx([0.6], abs=1e-6)

    async def test_nearest_honours_the_limit(self, store: Store, make_conversation: Make) -> None:
        """No more than ``limit`` hits come back, the best ones."""
        await ok(store.ingest([make_conversation("s1", *[("user", f"m{i}") for i in range(8)])]))
        await ok(store.keep_vectors("m", [(key("s1", i), between(0, 1, i / 10))
                                          for i in range(8)]))
        hits = await ok(store.nearest(near(axis(0), limit=3)))
        assert [h.position for h in hits] == [7, 6, 5]

    async def test_ties_keep_the_stored_order(self, store: Store,
                                              make_conversation: Make) -> None:
        """Equal scores come in stored order, however many tie (more than a store might
        score in a first cut)."""
        await ok(store.ingest([make_conversation("s1", *[("user", f"m{i}") for i in range(260)])]))
        await ok(store.keep_vectors("m", [(key("s1", i), axis(0)) for i in range(260)]))
        hits = await ok(store.nearest(near(axis(0), limit=3)))
        assert [h.position for h in hits] == [0, 1, 2]

    async def test_nearest_honours_roles(self, store: Store, make_conversation: Make) -> None:
        """Only messages of the asked roles come back."""
        await ok(store.ingest([make_conversation(
            "s1", ("user", "u"), ("assistant", "a"), ("tool", "t"))]))
        await ok(store.keep_vectors("m", [(key("s1", i), axis(0)) for i in range(3)]))
        hits = await ok(store.nearest(near(axis(0), roles=("assistant", "tool"))))
        assert sorted(h.role for h in hits) == ["assistant", "tool"]

    async def test_nearest_leaves_out_hidden_sources(self, store: Store,
                                                     make_conversation: Make) -> None:
        """Sessions from hidden sources never come back."""
        await ok(store.ingest([make_conversation("mine", ("user", "x"), source="cli"),
                               make_conversation("cron", ("user", "x"), source="cron")]))
        await ok(store.keep_vectors("m", [(key("mine", 0), axis(1)),
                                          (key("cron", 0), axis(0))]))
        hits = await ok(store.nearest(near(axis(0), hidden_sources=("cron",))))
        assert [h.session_id for h in hits] == ["mine"]

    async def test_since_uses_message_time_else_session_start(
            self, store: Store, make_conversation: Make) -> None:
        """``since`` keeps messages at or after it, timed as search times them."""
        await ok(store.ingest([
            make_conversation("old", ("user", "untimed"), ("user", "late"),
                              started_at=100.0, timestamps=(None, 300.0)),
            make_conversation("new", ("user", "fresh"), started_at=250.0),
            make_conversation("undated", ("user", "undated"))]))
        await ok(store.keep_vectors("m", [(key(s, p), axis(0)) for s, p in
                                          [("old", 0), ("old", 1), ("new", 0), ("undated", 0)]]))
        hits = await ok(store.nearest(near(axis(0), since=250.0)))
        assert sorted(h.content for h in hits) == ["fresh", "late"]

    async def test_until_uses_message_time_else_session_start(
            self, store: Store, make_conversation: Make) -> None:
        """``until`` keeps messages at or before it; undated ones fall outside any bound."""
        await ok(store.ingest([
            make_conversation("old", ("user", "untimed"), ("user", "late"),
                              started_at=100.0, timestamps=(None, 300.0)),
            make_conversation("undated", ("user", "undated"))]))
        await ok(store.keep_vectors("m", [(key(s, p), axis(0)) for s, p in
                                          [("old", 0), ("old", 1), ("undated", 0)]]))
        hits = await ok(store.nearest(near(axis(0), until=100.0)))
        assert [h.content for h in hits] == ["untimed"]

    async def test_models_are_kept_apart(self, store: Store, make_conversation: Make) -> None:
        """Each model has its own vectors, lengths, counts and unembedded messages."""
        await ok(store.ingest([make_conversation("s1", ("user", "a"), ("user", "b"))]))
        await ok(store.keep_vectors("small", [(key("s1", 0), (1.0, 0.0))]))
        await ok(store.keep_vectors("large", [(key("s1", 1), (0.0, 0.0, 1.0))]))
        assert places(await ok(store.nearest(near((1.0, 0.0), model="small")))) == [("s1", 0)]
        assert places(await ok(store.nearest(near((0.0, 0.0, 1.0), model="large")))) == [
            ("s1", 1)]
        assert (await ok(store.vector_count("small")), await ok(store.vector_count("large")),
                await ok(store.vector_count("other"))) == (1, 1, 0)
        assert places(await ok(store.unembedded("small", ("user",), 10))) == [("s1", 1)]
        assert places(await ok(store.unembedded("large", ("user",), 10))) == [("s1", 0)]

    async def test_holds_vectors_says_whether_a_model_has_one(self, store: Store,
                                                               make_conversation: Make) -> None:
        """What a search asks before it embeds its question: not a count (PostgreSQL's
        reads every vector); a model whose vectors all went holds none."""
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        assert await ok(store.holds_vectors("m")) is False
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0))]))
        assert (await ok(store.holds_vectors("m")), await ok(store.holds_vectors("n"))) == (
            True, False)
        await ok(store.ingest([make_conversation("s1", ("user", "b"))]))  # its vector goes
        assert await ok(store.holds_vectors("m")) is False

    async def test_nearest_without_vectors_finds_nothing(self, store: Store,
                                                         make_conversation: Make) -> None:
        """An empty store, or a model with no vectors, answers with no hits."""
        assert await ok(store.nearest(near(axis(0)))) == ()
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0))]))
        assert await ok(store.nearest(near(axis(0), model="unknown"))) == ()

    async def test_a_query_of_another_length_fails(self, store: Store,
                                                   make_conversation: Make) -> None:
        """Comparing vectors of different lengths is refused with the reason."""
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0))]))
        error = await failed(store.nearest(near((1.0, 0.0))))
        assert "2 dimensions" in error.reason
        assert "have 4" in error.reason

    async def test_keep_skips_messages_not_stored(self, store: Store,
                                                  make_conversation: Make) -> None:
        """Keys of unknown sessions or positions are skipped and not counted."""
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        kept = await ok(store.keep_vectors("m", [
            (key("s1", 0), axis(0)), (key("s1", 5), axis(1)), (key("gone", 0), axis(2))]))
        assert (kept, await ok(store.vector_count("m"))) == (1, 1)
        assert await ok(store.keep_vectors("m", [])) == 0

    async def test_keep_replaces_a_vector(self, store: Store, make_conversation: Make) -> None:
        """Keeping a vector for a message that has one replaces it, and counts no message
        that gained one (two embed runs at once each counted what the other kept)."""
        await ok(store.ingest([make_conversation("s1", ("user", "a"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0))]))
        assert await ok(store.keep_vectors("m", [(key("s1", 0), axis(1))])) == 0
        assert await ok(store.vector_count("m")) == 1
        hits = await ok(store.nearest(near(axis(1))))
        assert [h.score for h in hits] == pytest.approx([1.0], abs=1e-6)

    async def test_a_vector_of_another_length_fails_the_batch(
            self, store: Store, make_conversation: Make) -> None:
        """Vectors unlike the model's stored ones, or unlike each other, keep nothing."""
        await ok(store.ingest([make_conversation("s1", ("user", "a"), ("user", "b"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0))]))
        error = await failed(store.keep_vectors("m", [(key("s1", 1), (1.0, 0.0, 0.0))]))
        assert "4 dimensions, these have 3" in error.reason
        error = await failed(store.keep_vectors("fresh", [(key("s1", 0), (1.0, 0.0)),
                                                          (key("s1", 1), (1.0, 0.0, 0.0))]))
        assert "differ in length" in error.reason
        assert (await ok(store.vector_count("m")), await ok(store.vector_count("fresh"))) == (1, 0)

    async def test_a_vector_that_is_not_finite_fails(self, store: Store,
                                                     make_conversation: Make) -> None:
        """A NaN or infinite value is refused with the reason; nothing is kept."""
        await ok(store.ingest([make_conversation("s1", ("user", "a"), ("user", "b"))]))
        error = await failed(store.keep_vectors("m", [
            (key("s1", 0), axis(0)), (key("s1", 1), (math.nan, 0.0, 0.0, 1.0))]))
        assert "not a finite number" in error.reason
        assert await ok(store.vector_count("m")) == 0

    async def test_unembedded_lists_eligible_messages_in_stored_order(
            self, store: Store, make_conversation: Make) -> None:
        """Messages of the roles, with non-blank content and no vector, in stored order."""
        await ok(store.ingest([
            make_conversation("a", ("user", "one"), ("assistant", "reply"), ("user", " \t\r\n"),
                              ("user", "two")),
            make_conversation("b", ("user", "three"), ("tool", "output"), ("user", ""))]))
        await ok(store.keep_vectors("m", [(key("a", 3), axis(0))]))
        assert places(await ok(store.unembedded("m", ("user",), 10))) == [("a", 0), ("b", 0)]
        assert places(await ok(store.unembedded("m", ("user", "tool"), 10))) == [
            ("a", 0), ("b", 0), ("b", 1)]
        assert places(await ok(store.unembedded("other", ("user",), 2))) == [("a", 0), ("a", 3)]
        found = await ok(store.unembedded("m", ("user",), 1))
        assert [m.content for m in found] == ["one"]
        assert await ok(store.unembedded("m", ("user",), 0)) == ()

    async def test_unembedded_lists_the_same_until_vectors_are_kept(
            self, store: Store, make_conversation: Make) -> None:
        """Asking twice without keeping vectors lists the same messages."""
        await ok(store.ingest([make_conversation("s1", *[("user", f"m{i}") for i in range(5)])]))
        first = await ok(store.unembedded("m", ("user",), 2))
        assert await ok(store.unembedded("m", ("user",), 2)) == first

    async def test_embedding_in_batches_reaches_every_message_once(
            self, store: Store, make_conversation: Make) -> None:
        """Keeping vectors for each batch listed moves on until nothing is left."""
        await ok(store.ingest([
            make_conversation("a", *[("user" if i % 3 else "assistant", f"a{i}")
                                     for i in range(10)]),
            make_conversation("b", *[("user", f"b{i}") for i in range(4)])]))
        listed = await embed_all(store, "m", ("user",), batch=3)
        expected = [("a", i) for i in range(10) if i % 3] + [("b", i) for i in range(4)]
        assert listed == expected
        assert await ok(store.vector_count("m")) == len(expected)

    @pytest.mark.parametrize("count", [3, SESSIONS_BY_INDEX + 6])
    async def test_unembedded_of_some_sessions_lists_theirs_alone(
            self, store: Store, make_conversation: Make, count: int) -> None:
        """sync35: a sync embeds what it stored, not the whole history: ``sessions``
        lists the messages of those sessions alone, batch by batch to the last, in stored
        order, whether few (read by their index) or many (read in stored order)."""
        await ok(store.ingest([make_conversation(f"s{i}", ("user", f"a{i}"), ("assistant", "x"),
                                                 ("user", f"b{i}")) for i in range(count)]))
        asked = [f"s{i}" for i in range(count) if i != 1] + ["not stored"]
        listed = await embed_all(store, "m", ("user",), batch=2, sessions=asked)
        assert listed == [(s, p) for s in asked[:-1] for p in (0, 2)]
        assert places(await ok(store.unembedded("m", ("user",), 5))) == [("s1", 0), ("s1", 2)]
        assert await ok(store.unembedded("m", ("user",), 5, sessions=[])) == ()

    async def test_dropping_a_models_vectors_lets_other_dimensions_be_kept(
            self, store: Store, make_conversation: Make) -> None:
        """sync35: a model whose vectors were made with other dimensions (its settings
        changed under the same name) refused every new vector for good, with no way to
        drop them. ``drop_vectors`` removes that model's (not another's), and vectors of
        the new dimensions are then kept and listed as usual."""
        await ok(store.ingest([make_conversation("s1", ("user", "one"), ("user", "two"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0)), (key("s1", 1), axis(1))]))
        await ok(store.keep_vectors("other", [(key("s1", 0), axis(2))]))
        wider = axis(0, DIMENSIONS + 2)
        refused = await failed(store.keep_vectors("m", [(key("s1", 0), wider)]))
        assert "harkback embed --replace" in refused.reason
        assert await ok(store.drop_vectors("m")) == 2
        assert (await ok(store.vector_count("m")), await ok(store.vector_count("other"))) == (0, 1)
        assert await ok(store.keep_vectors("m", [(key("s1", 0), wider)])) == 1
        assert places(await ok(store.nearest(near(wider)))) == [("s1", 0)]
        assert await ok(store.drop_vectors("never kept")) == 0

    async def test_a_changed_message_is_listed_again(self, store: Store,
                                                     make_conversation: Make) -> None:
        """After every message has a vector, one that a re-ingest made eligible (new text,
        or a new role for the same text) is listed, however early it was stored."""
        await ok(store.ingest([
            make_conversation("a", ("user", "one"), ("user", " "), ("assistant", "said")),
            make_conversation("b", ("user", "two"))]))
        await embed_all(store, "m", ("user",), batch=2)
        assert await ok(store.unembedded("m", ("user",), 5)) == ()
        await ok(store.ingest([make_conversation(
            "a", ("user", "one"), ("user", "now said"), ("user", "said"))]))
        assert sorted(places(await ok(store.unembedded("m", ("user",), 5)))) == [
            ("a", 1), ("a", 2)]

    async def test_reingest_drops_stale_vectors_and_keeps_unchanged_ones(
            self, store: Store, make_conversation: Make) -> None:
        """A replaced session loses the vectors of changed and vanished messages only."""
        await ok(store.ingest([
            make_conversation("s1", ("user", "alpha"), ("user", "beta"), ("user", "gamma")),
            make_conversation("s2", ("user", "other"))]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0)), (key("s1", 1), axis(1)),
                                          (key("s1", 2), axis(2)), (key("s2", 0), axis(3))]))
        await ok(store.ingest([make_conversation(
            "s1", ("user", "alpha"), ("user", "beta, changed"), ("user", "delta"),
            ("user", "epsilon"))]))
        assert await ok(store.vector_count("m")) == 2
        assert places(await ok(store.unembedded("m", ("user",), 10))) == [
            ("s1", 1), ("s1", 2), ("s1", 3)]
        assert sorted(places(await ok(store.nearest(near(axis(1)))))) == [("s1", 0), ("s2", 0)]
        best = await ok(store.nearest(near(axis(0), limit=1)))
        assert [h.content for h in best] == ["alpha"]
        assert best[0].score == pytest.approx(1.0)

    async def test_reingesting_the_same_session_keeps_its_vectors(
            self, store: Store, make_conversation: Make) -> None:
        """An identical re-ingest (as an incremental import does) keeps every vector."""
        chat = make_conversation("s1", ("user", "alpha"), ("user", "beta"))
        await ok(store.ingest([chat]))
        await ok(store.keep_vectors("m", [(key("s1", 0), axis(0)), (key("s1", 1), axis(1))]))
        await ok(store.ingest([chat]))
        assert await ok(store.vector_count("m")) == 2
        assert await ok(store.unembedded("m", ("user",), 10)) == ()

    async def test_a_vector_of_text_the_message_no_longer_holds_is_not_kept(
            self, store: Store, make_conversation: Make) -> None:
        """A vector made from a message's old text (an ingest changed it while it was being
        embedded) is skipped; the message stays listed to embed, and its new text's is kept."""
        await ok(store.ingest([make_conversation("s1", ("user", "old text"), ("user", "same"))]))
        listed = await ok(store.unembedded("m", ("user",), 10))
        await ok(store.ingest([make_conversation("s1", ("user", "new text"), ("user", "same"))]))
        made = [(MessageKey(session_id=m.session_id, position=m.position, content=m.content),
                 axis(m.position)) for m in listed]
        assert await ok(store.keep_vectors("m", made)) == 1
        again = await ok(store.unembedded("m", ("user",), 10))
        assert [(m.position, m.content) for m in again] == [(0, "new text")]
        assert await ok(store.keep_vectors("m", [(MessageKey(
            session_id="s1", position=0, content="new text"), axis(2))])) == 1
        assert places(await ok(store.nearest(near(axis(2), limit=1)))) == [("s1", 0)]
