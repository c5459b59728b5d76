"""Tests of the PostgreSQL store beyond the shared contract: what only a real server shows
(a server that goes away, a transaction cut short, several writers, read-only sessions)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from harkback.adapters.stores import postgres_search
from harkback.adapters.stores.postgres import PostgresStore
from harkback.stages.ports import MessageKey
from harkback.stages.query import Term
from harkback.stages.records import Conversation
from tests.adapters.stores.store_contract import failed, match, ok
from tests.adapters.stores.vector_contract import peak_while_keeping
from tests.support.new_stores import store_locations
from tests.support.postgres_server import PostgresServer, running_server

Make = Callable[..., Conversation]


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of this test's own, which it may stop."""
    yield from running_server()


def _scalar(url: str, statement: str) -> Any:
    with psycopg.connect(url) as connection:
        row = connection.execute(statement).fetchone()
        return None if row is None else row[0]


async def test_a_server_gone_fails_each_call_as_one_value(own_server: PostgresServer,
                                                          make_conversation: Make) -> None:
    """Once the server stops, searching and ingesting fail with one line naming it; no
    exception escapes."""
    url = own_server.create_database("gone")
    with PostgresStore.open(url, timeout=1.0).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "kiwi pie"))]))
        own_server.stop()
        for call in (store.search(match("kiwi")),
                     store.ingest([make_conversation("s2", ("user", "mango"))])):
            error = await failed(call)
            assert error.reason.startswith("cannot reach the PostgreSQL server of postgresql://")


async def test_an_ingest_cut_short_writes_nothing(url: str, make_conversation: Make) -> None:
    """An ingest whose connection dies mid-transaction (its sessions and messages already
    sent) leaves the store as it was: no half session, totals unchanged."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "kiwi pie"))]))
        with psycopg.connect(url) as blocker:
            # Holding the totals row makes the ingest wait at its very last statement.
            blocker.execute("SELECT * FROM index_totals FOR UPDATE")
            ingest = asyncio.ensure_future(store.ingest([
                # A message added, none changed: no row is deleted, so nothing (the
                # trigger that counts deletions) touches the totals before the last step.
                make_conversation("s1", ("user", "kiwi pie"), ("user", "kiwi tart")),
                make_conversation("s2", *[("user", f"mango {i}") for i in range(50)])
            ]).awaitable())
            pid = await _waiting_backend(url)
            blocker.execute("SELECT pg_terminate_backend(%s)", (pid,))
            blocker.rollback()
            outcome = await ingest
        assert "terminat" in str(outcome).lower() or "server" in str(outcome).lower()
        assert [h.content for h in await ok(store.search(match("kiwi")))] == ["kiwi pie"]
        assert await ok(store.search(match("mango"))) == ()
        stats = await ok(store.term_stats(["kiwi"]))
        assert (stats.documents, stats.average_length) == (1, 2.0)


async def _waiting_backend(url: str, statement: str = "UPDATE index_totals") -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        pid = _scalar(url, "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                           f"AND query LIKE '{statement}%'")
        if pid is not None:
            return int(pid)
        await asyncio.sleep(0.05)
    raise AssertionError("the ingest never reached its last statement")


async def test_two_writers_of_the_same_history_end_with_one_copy(
        url: str, make_conversation: Make) -> None:
    """Two stores (two machines) ingesting the same sessions at once keep one copy."""
    batch = [make_conversation(f"s{i}", *[("user", f"heron {i} {j}") for j in range(20)],
                               started_at=float(i)) for i in range(30)]
    with PostgresStore.open(url).unwrap() as first, PostgresStore.open(url).unwrap() as second:
        reports = await asyncio.gather(*(store.ingest(batch[k:k + 10]).awaitable()
                                         for k in (0, 10, 20) for store in (first, second)))
        assert all("Success" in repr(r) for r in reports)
        assert _scalar(url, "SELECT count(*) FROM messages") == 600
        stats = await ok(first.term_stats(["heron"]))
        assert (stats.documents, dict(stats.counts)) == (600, {"heron": 600})


async def test_a_read_only_store_cannot_write_even_by_hand(url: str,
                                                           make_conversation: Make) -> None:
    """A read-only open refuses ingests, and the server itself refuses any write it runs."""
    with PostgresStore.open(url).unwrap() as writer:
        await ok(writer.ingest([make_conversation("s1", ("user", "kiwi"))]))
    with PostgresStore.open(url, readonly=True).unwrap() as reader:
        assert "read-only" in (await failed(reader.ingest([]))).reason
        error = await failed(reader.run(
            lambda connection: connection.execute("DELETE FROM messages")))
        assert "read-only transaction" in error.reason
        assert len(await ok(reader.search(match("kiwi")))) == 1


async def test_huge_words_and_long_messages_are_stored_and_found(
        url: str, make_conversation: Make) -> None:
    """Words longer than a lexeme may be, and messages longer than a tsvector's positions,
    are kept whole and found by their words (the full tokens decide every match)."""
    blob = "q" * 5000
    long_text = " ".join(f"w{i}" for i in range(20_000)) + " closing phrase here"
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("tool", f"hash {blob}"),
                                                 ("tool", long_text))]))
        assert [h.position for h in await ok(store.search(match(blob)))] == [0]
        assert [h.position for h in await ok(store.search(match('"closing phrase"')))] == [1]
        assert (await ok(store.messages(["s1"])))[1].content == long_text


async def test_long_values_are_compressed_with_lz4_where_the_server_has_it(
        url: str, make_conversation: Make) -> None:
    """An ingest compresses a long message's text and ``tsvector`` with LZ4 when the server
    was built with it (pglz otherwise), and they read back as they were written."""
    text = " ".join(f"step{i} line {i % 50} of a long build log" for i in range(2000))
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("tool", text))]))
        assert (await ok(store.messages(["s1"])))[0].content == text
        assert [h.position for h in await ok(store.search(match('"line 49"')))] == [0]
    expected = "lz4" if _scalar(url, "SELECT 'lz4' = ANY(enumvals) FROM pg_settings "
                                     "WHERE name = 'default_toast_compression'") else "pglz"
    methods = _scalar(url, "SELECT ARRAY[pg_column_compression(content), "
                           "pg_column_compression(tokens)] FROM messages")
    assert {method for method in methods if method} == {expected}  # None: kept as it was
    # Only the ingest's transaction chose it: the database's default is as it was.
    assert _scalar(url, "SHOW default_toast_compression") == "pglz"


async def test_counts_follow_another_machines_writes(url: str, make_conversation: Make) -> None:
    """Counts a store remembers are forgotten when any writer changes the index."""
    with PostgresStore.open(url).unwrap() as reader, PostgresStore.open(url).unwrap() as other:
        await ok(reader.ingest([make_conversation("s1", ("user", "kiwi pie"))]))
        assert dict((await ok(reader.term_stats(["kiwi"]))).counts) == {"kiwi": 1}
        assert len(await ok(reader.search(match("kiwi", max_scored=1)))) == 1
        await ok(other.ingest([make_conversation("s2", ("user", "kiwi tart"),
                                                 ("user", "kiwi jam"))]))
        assert dict((await ok(reader.term_stats(["kiwi"]))).counts) == {"kiwi": 3}
        # Now common (3 > 1): nothing is scored, the newest matches fill with score 0.
        hits = await ok(reader.search(match("kiwi", max_scored=1)))
        assert [(h.content, h.score) for h in hits] == [
            ("kiwi jam", 0.0), ("kiwi tart", 0.0), ("kiwi pie", 0.0)]


SCORED = (
    ("s1", "docker bridge docker network, the docker daemon restarted"),
    ("s2", "bridge network bridge dns; it's the bridge again"),
    ("s3", "上次 决定 用 docker 部署 上次 的 网络 问题"),
    ("s4", "dockerfile docking dock docker-compose up"),
    ("s5", " ".join(["kiwi"] * 300) + " docker network"),  # a lexeme past 256 positions
    ("s6", " ".join(f"w{i}" for i in range(17_000)) + " docker network bridge"),
)


@pytest.mark.parametrize("text", ["docker", "docker network", '"bridge dns"', "dock*",
                                  '"the docker"', "上次", "网络 OR bridge", "docker NOT dns",
                                  "kiwi docker", "it's"])
async def test_scores_equal_the_in_memory_stores(url: str, make_conversation: Make,
                                                 text: str) -> None:
    """Scored from the query words' places in each vector (or, for a message the vector
    cut, from its own text), every hit's score equals the in-memory store's."""
    from harkback.adapters.stores.memory import MemoryStore
    chats = [make_conversation(sid, ("user", body)) for sid, body in SCORED]
    memory = MemoryStore()
    await ok(memory.ingest(chats))
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(chats))
        found = [(h.session_id, round(h.score, 9)) for h in await ok(store.search(match(text)))]
    expected = [(h.session_id, round(h.score, 9)) for h in await ok(memory.search(match(text)))]
    assert found == expected and found


async def test_estimates_follow_another_machines_writes(
        url: str, make_conversation: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    """A word past the exact limit is estimated; the estimate a store remembers is made
    again once any writer changes the index."""
    monkeypatch.setattr(postgres_search, "EXACT_COUNT_LIMIT", 2)
    with PostgresStore.open(url).unwrap() as reader, PostgresStore.open(url).unwrap() as other:
        await ok(reader.ingest([make_conversation("s1", *[("user", f"kiwi {i}")
                                                          for i in range(4)])]))
        first = dict((await ok(reader.term_stats(["kiwi"]))).counts)["kiwi"]
        assert first == dict((await ok(reader.term_stats(["kiwi"]))).counts)["kiwi"] > 2
        await ok(other.ingest([make_conversation("s2", *[("user", f"kiwi {i}")
                                                         for i in range(40)])]))
        assert dict((await ok(reader.term_stats(["kiwi"]))).counts)["kiwi"] > first


async def test_estimates_outlive_another_machines_small_ingests(
        url: str, make_conversation: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    """While ingests grow the store by at most 1 %, an estimate is not made again (it was
    one already); exact counts are. Past 1 %, the estimate is made again."""
    monkeypatch.setattr(postgres_search, "EXACT_COUNT_LIMIT", 2)
    made: list[list[str]] = []
    estimates = postgres_search._estimates

    def spied(connection: Any, terms: list[Term], documents: int) -> Any:
        made.append([t.text for t in terms])
        return estimates(connection, terms, documents)

    monkeypatch.setattr(postgres_search, "_estimates", spied)
    with PostgresStore.open(url).unwrap() as reader, PostgresStore.open(url).unwrap() as other:
        await ok(reader.ingest([make_conversation("s1", *[("user", f"kiwi {i}")
                                                          for i in range(200)])]))
        asked = ["kiwi", "plum"]
        assert dict((await ok(reader.term_stats(asked))).counts) == {"kiwi": 200}
        await ok(other.ingest([make_conversation("s2", ("user", "kiwi plum"))]))
        assert dict((await ok(reader.term_stats(asked))).counts) == {"kiwi": 200, "plum": 1}
        assert made == [["kiwi"]]
        await ok(other.ingest([make_conversation("s3", *[("user", f"kiwi plum {i}")
                                                         for i in range(2)])]))
        assert dict((await ok(reader.term_stats(asked))).counts) == {"kiwi": 203, "plum": 3}
        assert made == [["kiwi"], ["kiwi", "plum"]]  # plum now past the limit too


async def test_a_vector_of_a_message_an_ingest_is_replacing_is_skipped_at_once(
        url: str, make_conversation: Make) -> None:
    """``embed`` beside an ingest that replaces a message (its text changed, so its row
    goes): the vector of the old text is skipped without waiting for the ingest, not
    written against a row being deleted (a foreign-key failure once the ingest commits,
    which ended ``embed`` with exit 1); the next listing has the new text."""
    with PostgresStore.open(url).unwrap() as store, PostgresStore.open(url).unwrap() as other:
        await ok(store.ingest([make_conversation("s1", ("user", "old text"))]))
        listed = await ok(store.unembedded("m", ("user",), 10))
        made = [(MessageKey(session_id=m.session_id, position=m.position, content=m.content),
                 (1.0, 0.0)) for m in listed]
        with psycopg.connect(url) as blocker:
            # Holding the totals row stops the ingest once it has locked the old row
            # (deleting it fires the trigger that counts deletions in the totals).
            blocker.execute("SELECT * FROM index_totals FOR UPDATE")
            ingest = asyncio.ensure_future(other.ingest(
                [make_conversation("s1", ("user", "new text"))]).awaitable())
            await _waiting_backend(url, "DELETE FROM messages")
            keep = asyncio.ensure_future(ok(store.keep_vectors("m", made)))
            await asyncio.wait([keep], timeout=5)
            kept_at_once = keep.done()
            blocker.rollback()
            kept = await keep
            await ingest
        assert (kept_at_once, kept) == (True, 0)
        assert [m.content for m in await ok(store.unembedded("m", ("user",), 10))] == [
            "new text"]


async def test_keeping_vectors_does_not_read_the_texts_back(url: str,
                                                           make_conversation: Make) -> None:
    """A batch's texts are compared by a digest the server computes, not sent back: 16
    messages of 1 MB took 16 MB more in this process while their vectors were kept."""
    with PostgresStore.open(url).unwrap() as store:
        kept, peak = await peak_while_keeping(store, make_conversation)
    assert (kept, peak < 4 << 20) == (16, True), peak


async def test_a_text_written_without_the_stores_escapes_gets_its_vector(
        url: str, make_conversation: Make) -> None:
    """A text holding a bare U+FFFE, the store's escape mark (written by hand, by psql or
    another program), is read as it is and kept with its vector: its digest, made of the
    text as the store would write it, never matched, and every ``embed`` stopped at it."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([make_conversation("s1", ("user", "a"), ("user", "b"))]))
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("UPDATE messages SET content = 'w' || chr(65534) || 'A' "
                          "WHERE session_id = 's1' AND position = 0")
        listed = await ok(store.unembedded("m", ("user",), 10))
        kept = await ok(store.keep_vectors("m", [
            (MessageKey(session_id=m.session_id, position=m.position, content=m.content),
             (1.0, 0.0)) for m in listed]))
    assert ([m.content for m in listed], kept) == (["w\ufffeA", "b"], 2)
