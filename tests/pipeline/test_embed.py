"""``embed_missing``: the resumable work behind ``harkback embed`` and ingest with an embedder."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs
import pytest
from returns.future import FutureResult
from returns.result import Result
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.embed import SCOPE_SESSIONS, embed_missing
from harkback.stages.errors import ModelFailed, StoreUnavailable
from harkback.stages.ports import EmbedKind, Vector
from harkback.stages.records import Message, Role
from harkback.stages.stage import as_result
from tests.conftest import conversation
from tests.support.embedding import ConceptEmbedder


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    """A SQLite file with 10 sessions of 3 user and 3 assistant turns each."""
    opened = SqliteStore.open(tmp_path / "h.db").unwrap()
    yield opened
    opened.close()


async def _fill(store: SqliteStore, sessions: int = 10) -> None:
    batch = [conversation(f"s{i}", *[(role, f"{role} turn {j} of session {i}")
                                     for j in range(3) for role in ("user", "assistant")])
             for i in range(sessions)]
    unsafe_perform_io((await store.ingest(batch).awaitable()).unwrap())


async def _count(store: SqliteStore, model: str = "concepts") -> int:
    return unsafe_perform_io((await store.vector_count(model).awaitable()).unwrap())


@attrs.define
class _DiesAfter:
    """Embeds ``calls`` batches, then fails: an endpoint that went away mid-run."""

    calls: int
    name: str = "concepts"
    inner: ConceptEmbedder = attrs.field(factory=ConceptEmbedder)

    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        if self.calls == 0:
            return FutureResult.from_failure(ModelFailed("connection refused"))
        self.calls -= 1
        return self.inner.embed(texts, kind)

    async def aclose(self) -> None:
        return None


async def test_every_user_turn_gets_a_vector_once(store: SqliteStore) -> None:
    await _fill(store)
    first = await embed_missing(store, ConceptEmbedder(), progress=False)
    assert (first.ok, first.embedded) == (True, 30)
    assert await _count(store) == 30
    again = await embed_missing(store, ConceptEmbedder(), progress=False)
    assert (again.ok, again.embedded) == (True, 0)


async def test_a_run_that_fails_keeps_its_work_and_the_next_goes_on(store: SqliteStore) -> None:
    await _fill(store)
    broken = await embed_missing(store, _DiesAfter(calls=2), batch=8, progress=False)
    assert not broken.ok and broken.embedded == 16
    assert "connection refused" in broken.describe()
    assert await _count(store) == 16
    resumed = await embed_missing(store, ConceptEmbedder(), batch=8, progress=False)
    assert (resumed.ok, resumed.embedded) == (True, 14)
    assert await _count(store) == 30


async def test_the_bar_counts_what_was_embedded_not_a_share_it_cannot_know(
        store: SqliteStore, capsys: pytest.CaptureFixture[str]) -> None:
    """tourh34: the bar's total grew batch by batch (what was done and one batch more), so
    it showed 50 %, 67 %, 75 %... whatever was left: 67 % with 128 of 1,571 messages
    embedded. What is left is not counted (a scan of every text), so the bar counts what
    is done, here 16 of 30 when the embedder went away."""
    await _fill(store)
    stopped = await embed_missing(store, _DiesAfter(calls=2), batch=8, progress=True)
    assert (stopped.ok, stopped.embedded) == (False, 16)
    rows = [row for row in capsys.readouterr().err.replace("\n", "\r").split("\r") if row]
    assert rows[-1] == "embed with concepts: 16 message(s) embedded"
    assert not any("%" in row for row in rows), rows


async def test_other_roles_on_request(store: SqliteStore) -> None:
    await _fill(store, sessions=2)
    done = await embed_missing(store, ConceptEmbedder(), roles=("user", "assistant"),
                               progress=False)
    assert done.embedded == 12


async def test_a_changed_message_is_embedded_again_alone(store: SqliteStore) -> None:
    await _fill(store, sessions=2)
    await embed_missing(store, ConceptEmbedder(), progress=False)
    changed = conversation("s0", *[(role, f"{role} turn {j} of session 0")
                                   for j in range(3) for role in ("user", "assistant")][:-2],
                           ("user", "a brand new question"), ("assistant", "an answer"))
    unsafe_perform_io((await store.ingest([changed]).awaitable()).unwrap())
    counting = ConceptEmbedder()
    again = await embed_missing(store, counting, progress=False)
    assert again.embedded == 1
    assert counting.calls == [("passage", 1)]


@attrs.define
class _Short(ConceptEmbedder):
    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        return super().embed(texts[1:], kind)


async def test_an_embedder_answering_too_few_vectors_stops_the_run(store: SqliteStore) -> None:
    await _fill(store, sessions=1)
    done = await embed_missing(store, _Short(), progress=False)
    assert not done.ok and "2 vectors for 3 texts" in done.describe()
    assert await _count(store) == 0


@attrs.define
class _InStep(ConceptEmbedder):
    """Answers a call once the other run's embedder is asked too (two runs embed each batch
    together), ``late`` seconds after it: the late run keeps what the other kept already."""

    together: asyncio.Barrier = attrs.field(factory=lambda: asyncio.Barrier(2))
    late: float = 0.0

    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        made = super().embed(texts, kind)

        async def answer() -> Result[tuple[Vector, ...], ModelFailed]:
            # Bounded: a run that stopped early leaves the other to go on alone.
            with contextlib.suppress(TimeoutError, asyncio.BrokenBarrierError):
                async with asyncio.timeout(5):
                    await self.together.wait()
            await asyncio.sleep(self.late)
            return as_result(await made.awaitable())
        return FutureResult(answer())


async def test_two_runs_at_once_count_each_vector_once(store: SqliteStore) -> None:
    """Two ``embed`` runs of one store, embedding the same batches together: between them
    they report each message once (each reported all the vectors before), and the one that
    always keeps second is not taken for a run whose text keeps changing."""
    await _fill(store)
    together = _InStep(late=0.0)
    late = _InStep(together=together.together, late=0.2)
    other = SqliteStore.open(store.path).unwrap()
    try:
        runs = await asyncio.gather(embed_missing(store, together, batch=8, progress=False),
                                    embed_missing(other, late, batch=8, progress=False))
    finally:
        other.close()
    assert [run.error for run in runs] == [None, None]
    assert sum(run.embedded for run in runs) == await _count(store) == 30


async def test_a_message_whose_stored_bytes_are_not_utf8_is_embedded(store: SqliteStore
                                                                      ) -> None:
    """A stored text that is not UTF-8 (a flipped bit, another program's write) is read as
    U+FFFD, embedded so and kept: compared in SQL with that text it never matched the
    stored bytes, so it was never kept and every ``embed`` stopped, saying the text "kept
    changing"."""
    await _fill(store, sessions=1)
    with sqlite3.connect(store.path) as other:  # the bytes of "w", 0xff, "A"
        other.execute("UPDATE messages SET content = CAST(X'77ff41' AS TEXT) "
                      "WHERE session_id = 's0' AND position = 0")
    done = await embed_missing(store, ConceptEmbedder(), batch=1, progress=False)
    assert (done.error, done.embedded) == (None, 3)
    assert await _count(store) == 3


async def test_many_sessions_are_named_to_the_store_a_slice_at_a_time(
        store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store reads the sessions named at every batch: 30,000 sessions of an ingest were
    all named for each of its ~940 batches (21.7 s where 6.7 s had done). Named a slice at
    a time, each batch reads at most SCOPE_SESSIONS, and still every message of the named
    sessions, and none of the others, gains its vector."""
    await _fill(store, sessions=SCOPE_SESSIONS + 60)
    wanted = [f"s{i}" for i in range(SCOPE_SESSIONS + 50)]
    named: list[int] = []
    unembedded = store.unembedded

    def asked(model: str, roles: tuple[Role, ...], limit: int, *,
              sessions: Sequence[str] | None = None
              ) -> FutureResult[tuple[Message, ...], StoreUnavailable]:
        named.append(-1 if sessions is None else len(sessions))
        return unembedded(model, roles, limit, sessions=sessions)

    monkeypatch.setattr(store, "unembedded", asked)
    summary = await embed_missing(store, ConceptEmbedder(), progress=False, sessions=wanted)
    assert (summary.ok, summary.embedded) == (True, 3 * len(wanted))
    assert await _count(store) == 3 * len(wanted)
    assert 0 < max(named) <= SCOPE_SESSIONS
    left = unsafe_perform_io((await unembedded(
        "concepts", ("user",), 100).awaitable()).unwrap())
    assert {m.session_id for m in left} == {f"s{i}" for i in range(len(wanted),
                                                                   SCOPE_SESSIONS + 60)}


async def test_a_run_stopped_in_a_later_slice_counts_what_every_slice_embedded(
        store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """review36q: named a slice at a time, a run whose embedder fails in the second slice
    says (and tells ``counted``, what Ctrl-C reports) how many messages gained a vector in
    both slices, not in the last one alone, and keeps them."""
    await _fill(store)
    monkeypatch.setattr("harkback.pipeline.embed.SCOPE_SESSIONS", 4)
    heard: list[int] = []
    # Slices of 4, 4 and 2 sessions (12, 12 and 6 user turns), 5 a batch: the 4th batch
    # is the second slice's first, the 5th fails.
    summary = await embed_missing(store, _DiesAfter(calls=4), batch=5, progress=False,
                                  counted=heard.append,
                                  sessions=[f"s{i}" for i in range(10)])
    assert isinstance(summary.error, ModelFailed)
    assert (summary.embedded, heard) == (17, [5, 10, 12, 17])
    assert await _count(store) == 17
