"""The hybrid ranker: meaning added to the lexical ranking as bounded evidence, and its
fallbacks to the lexical ranking."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.future import FutureResult
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.embed import embed_missing
from harkback.stages.errors import StoreUnavailable
from harkback.stages.flow import Matched
from harkback.stages.match.hybrid import HybridMatch, fuse_sessions, session_order
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.sessions import SessionScoring
from harkback.stages.ports import Deps, NearestQuery
from harkback.stages.records import MessageHit
from harkback.stages.request import SearchRequest
from tests.adapters.stores.vector_contract import Store
from tests.conftest import conversation
from tests.support.embedding import ConceptEmbedder
from tests.support.new_stores import new_stores


def _hit(session_id: str, position: int = 0, score: float = 1.0) -> MessageHit:
    return MessageHit(session_id=session_id, position=position, role="user", content="",
                      score=score)


def _scores(*pairs: tuple[str, float]) -> tuple[tuple[str, float], ...]:
    return pairs


def _by_words(lexical: list[str]) -> tuple[tuple[str, float], ...]:
    """Lexical scores that fall with each session's place in ``lexical``."""
    order = list(session_order([_hit(s) for s in lexical]))
    return tuple((s, float(len(order) - i)) for i, s in enumerate(order))


def test_meaning_decides_between_sessions_words_find_about_equally() -> None:
    lexical = (_hit("a"), _hit("b"))
    dense = (_hit("b"), _hit("c"))
    fused = fuse_sessions(lexical, dense, _scores(("a", 10.0), ("b", 9.5)))
    assert [h.session_id for h in fused] == ["b", "a", "c"]


def test_meaning_does_not_pass_a_session_words_find_far_ahead() -> None:
    """The seed scenarios' look-alike: first by meaning, half as good by words."""
    lexical = (_hit("named-the-tool"), _hit("other"), _hit("look-alike"))
    dense = (_hit("look-alike"), *(_hit(f"near{i}") for i in range(3)), _hit("named-the-tool"))
    words = _scores(("named-the-tool", 10.0), ("other", 6.0), ("look-alike", 5.0))
    fused = fuse_sessions(lexical, dense, words)
    assert list(session_order(fused))[:2] == ["named-the-tool", "look-alike"]


def test_sessions_found_only_by_meaning_join_the_ranking() -> None:
    fused = fuse_sessions((_hit("a"),), (_hit("x"), _hit("y")), _scores(("a", 1.0)))
    assert {h.session_id for h in fused} == {"a", "x", "y"}


def test_a_session_found_only_by_meaning_passes_weak_lexical_matches() -> None:
    lexical = (_hit("strong"), _hit("weak"))
    fused = fuse_sessions(lexical, (_hit("meaning"),), _scores(("strong", 10.0), ("weak", 1.0)))
    assert list(session_order(fused)) == ["strong", "meaning", "weak"]


def test_without_words_the_order_is_that_of_meaning() -> None:
    fused = fuse_sessions((), (_hit("x"), _hit("y")), ())
    assert list(session_order(fused)) == ["x", "y"]


def test_each_session_keeps_few_hits_and_no_duplicate_lines() -> None:
    lexical = (_hit("a", 0), _hit("a", 1))
    dense = (_hit("a", 1), _hit("a", 2), _hit("a", 3))
    fused = fuse_sessions(lexical, dense, _scores(("a", 1.0)), per_session=3)
    assert [h.position for h in fused] == [0, 1, 2]


sessions = st.lists(st.sampled_from("abcdefgh"), max_size=12)


@given(sessions, sessions)
def test_no_dense_weight_keeps_the_lexical_order(lexical: list[str], dense: list[str]) -> None:
    fused = fuse_sessions([_hit(s, i) for i, s in enumerate(lexical)],
                          [_hit(s, 100 + i) for i, s in enumerate(dense)], _by_words(lexical),
                          dense_weight=0.0, limit=1000)
    order = list(session_order(fused))
    assert order[:len(set(lexical))] == list(session_order([_hit(s) for s in lexical]))


@given(sessions, sessions)
def test_fusion_is_symmetric_in_what_it_returns(lexical: list[str], dense: list[str]) -> None:
    fused = fuse_sessions([_hit(s) for s in lexical], [_hit(s) for s in dense],
                          _by_words(lexical), limit=1000)
    assert set(session_order(fused)) == set(lexical) | set(dense)


empty_store = new_stores("memory", "sqlite")
"""An empty store of each kind."""


@pytest.fixture
async def store(empty_store: Store) -> Store:
    """A store of each kind holding three sessions, their user turns embedded."""
    made = empty_store
    conversations = (
        conversation("school", ("user", "I finished my undergrad in computer science at UCLA"),
                     ("assistant", "Congratulations on graduating!")),
        conversation("pets", ("user", "our new puppy keeps chewing the couch")),
        conversation("words", ("user", "where did you say I should complete the form?")),
    )
    unsafe_perform_io((await made.ingest(conversations).awaitable()).unwrap())
    summary = await embed_missing(made, ConceptEmbedder(), progress=False)
    assert summary.ok and summary.embedded == 3
    return made


QUESTION = "where did I complete my bachelor degree?"

STRONG_RECENCY = HybridMatch(lexical=LexicalMatch(scoring=SessionScoring(recency_weight=1.0)))
"""Recency as strong as the first default (up to 2x), to test how the lift is applied."""


async def _ranked(match: HybridMatch | LexicalMatch, deps: Deps) -> list[str]:
    outcome = await match(SearchRequest(query=QUESTION, limit=10))(deps).awaitable()
    matched: Matched = unsafe_perform_io(outcome.unwrap())
    return list(session_order(matched.hits))


async def test_meaning_finds_the_session_words_miss(store: MemoryStore | SqliteStore) -> None:
    lexical = await _ranked(LexicalMatch(), Deps(store=store))
    assert "school" not in lexical  # shares no topic word with the question
    hybrid = await _ranked(HybridMatch(), Deps(store=store, embedder=ConceptEmbedder(),
                                               vectors=store))
    # Found by meaning alone, it ranks among the first two (the other one both sides find).
    assert "school" in hybrid[:2]


async def test_without_an_embedder_hybrid_is_lexical(store: MemoryStore | SqliteStore) -> None:
    assert (await _ranked(HybridMatch(), Deps(store=store))
            == await _ranked(LexicalMatch(), Deps(store=store)))


async def test_a_failing_embedder_falls_back_to_lexical(store: MemoryStore | SqliteStore
                                                        ) -> None:
    down = ConceptEmbedder(fail=True)
    hybrid = await _ranked(HybridMatch(), Deps(store=store, embedder=down, vectors=store))
    assert hybrid == await _ranked(LexicalMatch(), Deps(store=store))
    assert down.calls == [("query", 1)]


@attrs.frozen
class _BrokenVectors:
    def holds_vectors(self, model: str) -> FutureResult[bool, StoreUnavailable]:
        return FutureResult.from_value(True)

    def nearest(self, query: NearestQuery
                ) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
        return FutureResult.from_failure(StoreUnavailable("disk gone"))


async def test_a_failing_vector_store_falls_back_to_lexical(store: MemoryStore | SqliteStore
                                                            ) -> None:
    deps = Deps(store=store, embedder=ConceptEmbedder(), vectors=_BrokenVectors())  # type: ignore[arg-type]
    assert await _ranked(HybridMatch(), deps) == await _ranked(LexicalMatch(),
                                                               Deps(store=store))


async def test_vectors_of_another_model_are_not_compared(store: MemoryStore | SqliteStore
                                                         ) -> None:
    other = ConceptEmbedder(name="another-model")
    hybrid = await _ranked(HybridMatch(), Deps(store=store, embedder=other, vectors=store))
    assert hybrid == await _ranked(LexicalMatch(), Deps(store=store))


async def test_no_stored_vectors_means_no_query_embedding(store: MemoryStore | SqliteStore
                                                          ) -> None:
    unused = ConceptEmbedder(name="never-stored")
    hybrid = await _ranked(HybridMatch(), Deps(store=store, embedder=unused, vectors=store))
    assert hybrid == await _ranked(LexicalMatch(), Deps(store=store))
    assert unused.calls == []


async def test_hybrid_without_an_embedder_says_it_ranked_by_words(
        store: MemoryStore | SqliteStore) -> None:
    """tourh34: ``--ranker hybrid`` with no embedder configured ranked by words in silence."""
    matched = unsafe_perform_io((await HybridMatch()(SearchRequest(query=QUESTION, limit=10))(
        Deps(store=store)).awaitable()).unwrap())
    assert matched.notes == ("ranked by words alone: no embedder was given (--embedder SPEC, "
                             "$HARKBACK_EMBEDDER or embedder in the config file)",)


async def test_an_embedder_none_of_whose_vectors_are_stored_is_noted(
        store: MemoryStore | SqliteStore) -> None:
    """tourh34: it ranked by words alone in silence, as if meaning had found nothing."""
    deps = Deps(store=store, embedder=ConceptEmbedder(name="never-stored"), vectors=store)
    matched = unsafe_perform_io((await HybridMatch()(SearchRequest(query=QUESTION, limit=10))(
        deps).awaitable()).unwrap())
    assert matched.notes == ("ranked by words alone: no message has a vector of never-stored "
                             "yet (harkback embed with this embedder makes them)",)
    embedded = unsafe_perform_io((await HybridMatch()(SearchRequest(query=QUESTION, limit=10))(
        Deps(store=store, embedder=ConceptEmbedder(), vectors=store)).awaitable()).unwrap())
    assert embedded.notes == ()


@pytest.mark.parametrize("query", ["couch NOT puppy", '"form where"', "undergrad OR puppy"])
async def test_search_syntax_is_ranked_by_words_alone(store: MemoryStore | SqliteStore,
                                                      query: str) -> None:
    request = SearchRequest(query=query, limit=10)
    embedder = ConceptEmbedder()
    words = await LexicalMatch()(request)(Deps(store=store)).awaitable()
    both = await HybridMatch()(request)(Deps(store=store, embedder=embedder,
                                             vectors=store)).awaitable()
    assert unsafe_perform_io(both.unwrap()).hits == unsafe_perform_io(words.unwrap()).hits
    assert embedder.calls == []


async def test_dissimilar_messages_do_not_join(store: MemoryStore | SqliteStore) -> None:
    deps = Deps(store=store, embedder=ConceptEmbedder(), vectors=store)
    everything = await _ranked(HybridMatch(min_similarity=-1.0), deps)
    similar = await _ranked(HybridMatch(), deps)
    assert "pets" in everything and "pets" not in similar  # cosine 0 with the question


@attrs.frozen
class _Raising:
    name: str = "concepts"

    def embed(self, texts: object, kind: object) -> object:
        raise RuntimeError("a bug in an adapter")

    async def aclose(self) -> None:
        return None


async def test_an_adapter_that_raises_still_leaves_the_lexical_ranking(
        store: MemoryStore | SqliteStore) -> None:
    deps = Deps(store=store, embedder=_Raising(), vectors=store)  # type: ignore[arg-type]
    assert await _ranked(HybridMatch(), deps) == await _ranked(LexicalMatch(),
                                                               Deps(store=store))


# Barely related to "university" (cosine 0.3): the least near candidate, the floor of the
# similarity scale the recency lift multiplies.
FAINT = "degree " + " ".join(f"noise{i}" for i in range(10))


async def test_dense_neighbours_are_lifted_by_recency_as_words_are(tmp_path: Path) -> None:
    """Of two sessions found by meaning alone, a recent near one beats an old nearer one
    (a third, faintly related session is the least near candidate, the scale's floor)."""
    day = 86400.0
    now = 1_000 * day
    store = SqliteStore.open(tmp_path / "r.db").unwrap()
    conversations = (
        conversation("old", ("user", "college bachelor degree"), started_at=now - 700 * day),
        conversation("new", ("user", "undergrad lake"), started_at=now - 1 * day),
        conversation("faint", ("user", FAINT), started_at=now - 900 * day))
    unsafe_perform_io((await store.ingest(conversations).awaitable()).unwrap())
    assert (await embed_missing(store, ConceptEmbedder(), progress=False)).embedded == 3
    request = SearchRequest(query="university", limit=10)  # no word of any session

    async def order(match: HybridMatch) -> list[str]:
        deps = Deps(store=store, embedder=ConceptEmbedder(), vectors=store, clock=lambda: now)
        outcome = await match(request)(deps).awaitable()
        return list(session_order(unsafe_perform_io(outcome.unwrap()).hits))

    timeless = HybridMatch(lexical=LexicalMatch(scoring=SessionScoring(recency_weight=0.0)))
    assert await order(timeless) == ["old", "new", "faint"]  # nearer in meaning
    # The mechanism, with a lift strong enough to reorder (the default only breaks ties).
    assert await order(STRONG_RECENCY) == ["new", "old", "faint"]
    assert await order(HybridMatch()) == ["old", "new", "faint"]  # 2 %: meaning stands
    store.close()


async def test_the_recency_lift_does_not_depend_on_the_model_s_cosine_range() -> None:
    """The same neighbours with cosines squeezed into 0.8-0.9 (as e5's are) get the same
    lifted order as with cosines spread over 0-1: the lift reads relative similarity."""
    day = 86400.0
    now = 1_000 * day
    ages = {"a": 600, "b": 1, "c": 30, "d": 2, "e": 300}
    cosines = {"a": 0.95, "b": 0.70, "c": 0.60, "d": 0.20, "e": 0.10}

    def hits(squeeze: bool) -> tuple[MessageHit, ...]:
        return tuple(MessageHit(session_id=s, position=0, role="user", content="",
                                score=0.8 + 0.1 * c if squeeze else c,
                                timestamp=now - ages[s] * day)
                     for s, c in cosines.items())

    match = STRONG_RECENCY
    spread = [h.session_id for h in match._recent_first(hits(False), now)]
    squeezed = [h.session_id for h in match._recent_first(hits(True), now)]
    assert squeezed == spread
    assert spread[:3] == ["b", "c", "a"]  # a 0.95 from two years ago drops to third


@attrs.frozen
class _NoSessions:
    """A store whose session lookup fails; every other call goes to the real store."""

    inner: SqliteStore

    def sessions(self, ids: object) -> FutureResult[tuple[object, ...], StoreUnavailable]:
        return FutureResult.from_failure(StoreUnavailable("sessions table locked"))

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


async def test_dense_hits_carry_their_session_time_for_the_recency_lift(tmp_path: Path) -> None:
    """The lift reads the times the hits carry; it needs no session lookup."""
    store = SqliteStore.open(tmp_path / "t.db").unwrap()
    conversations = (
        conversation("near", ("user", "college bachelor degree"), started_at=0.0),
        conversation("far", ("user", "undergrad lake"), started_at=86400.0 * 999),
        conversation("faint", ("user", FAINT), started_at=0.0))
    unsafe_perform_io((await store.ingest(conversations).awaitable()).unwrap())
    await embed_missing(store, ConceptEmbedder(), progress=False)
    deps = Deps(store=_NoSessions(store), embedder=ConceptEmbedder(),  # type: ignore[arg-type]
                vectors=store, clock=lambda: 86400.0 * 1000)
    outcome = await STRONG_RECENCY(SearchRequest(query="university", limit=10))(deps).awaitable()
    assert list(session_order(unsafe_perform_io(outcome.unwrap()).hits)) == ["far", "near",
                                                                             "faint"]
    store.close()


@attrs.frozen
class _Uncounted:
    """A store's vectors whose count fails: PostgreSQL counts by reading every vector."""

    inner: MemoryStore | SqliteStore

    def vector_count(self, model: str) -> FutureResult[int, StoreUnavailable]:
        return FutureResult.from_failure(StoreUnavailable("counted"))

    def holds_vectors(self, model: str) -> FutureResult[bool, StoreUnavailable]:
        return self.inner.holds_vectors(model)

    def nearest(self, query: NearestQuery
                ) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
        return self.inner.nearest(query)


async def test_a_search_asks_whether_vectors_are_held_without_counting_them(
        store: MemoryStore | SqliteStore) -> None:
    """review34h: each hybrid search counted the model's vectors to learn whether any were
    stored; PostgreSQL counts by reading every one (0.35 to 0.85 s a search at 1,000,000
    vectors). It now asks whether one is held (0.1 ms there)."""
    request = SearchRequest(query=QUESTION, limit=10)
    deps = Deps(store=store, embedder=ConceptEmbedder(), vectors=_Uncounted(store))  # type: ignore[arg-type]
    matched = unsafe_perform_io((await HybridMatch()(request)(deps).awaitable()).unwrap())
    assert matched.notes == ()
    assert list(session_order(matched.hits)) == await _ranked(HybridMatch(), Deps(
        store=store, embedder=ConceptEmbedder(), vectors=store))
