"""SQLite specifics of ``term_stats``: read-only files, and agreement with the memory store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_search import estimate_count
from harkback.stages.query import Term
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation

CHATS = (
    conversation("s1", ("user", "the bikes need repair"), ("assistant", "repair the bike chain")),
    conversation("s2", ("user", "上次怎么解决端口冲突"), ("tool", "bike shop hours")),
)


async def test_read_only_store_reports_term_stats(tmp_path: Path) -> None:
    """A store opened read-only (as the CLI's search does) still reads the vocabulary."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as writer:
        await ok(writer.ingest(CHATS))
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        stats = await ok(reader.term_stats(["bike", "repair"]))
    assert (stats.documents, dict(stats.counts)) == (4, {"bike": 2, "repair": 2})


async def test_sqlite_and_memory_stats_agree(tmp_path: Path) -> None:
    """Both stores count documents, mean length, term frequencies and the messages a prefix
    matches alike (CJK included)."""
    terms = ["bike", "bikes", "repair", "端口", "冲突", "突"]
    prefixes = ["bik", "re", "端", "冲", "突", "次", "z"]
    memory = MemoryStore()
    await ok(memory.ingest(CHATS))
    with SqliteStore.open(tmp_path / "h.db").unwrap() as sqlite:
        await ok(sqlite.ingest(CHATS))
        from_sqlite = await ok(sqlite.term_stats(terms, prefixes))
    from_memory = await ok(memory.term_stats(terms, prefixes))
    assert from_sqlite.documents == from_memory.documents
    assert from_sqlite.average_length == from_memory.average_length
    assert dict(from_sqlite.counts) == dict(from_memory.counts)
    assert dict(from_sqlite.prefix_counts) == dict(from_memory.prefix_counts)
    assert len(from_sqlite.prefix_counts) == 6


async def _count_with_small_limits(path: Path, term: str) -> tuple[int, int]:
    # The limits are lowered so that a few hundred messages exercise the estimate.
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        def counts(connection: sqlite3.Connection) -> tuple[int, int]:
            estimated = estimate_count(connection, term, 1200, exact_up_to=100, sample=32)
            exact = estimate_count(connection, term, 1200, exact_up_to=2000)
            return estimated, exact
        return await ok(store.run(counts))


async def test_common_terms_are_estimated_from_both_ends_of_their_postings(
        tmp_path: Path) -> None:
    """Past the exact limit a count is estimated; an even spread comes out close."""
    path = tmp_path / "h.db"
    chats = [conversation(f"s{i}", ("user", f"note {i} " + ("alpha" if i % 2 else "beta")))
             for i in range(1200)]
    with SqliteStore.open(path).unwrap() as writer:
        await ok(writer.ingest(chats))
    estimated, exact = await _count_with_small_limits(path, "alpha")
    assert exact == 600
    assert 540 <= estimated <= 660


async def test_a_term_frequent_only_lately_is_not_estimated_as_everywhere(
        tmp_path: Path) -> None:
    """The ends are read separately, so a recent burst does not set the density throughout."""
    path = tmp_path / "h.db"
    chats = [conversation(f"s{i}", ("user", f"note {i}" + (" burst" if i >= 1000 or i % 100 == 0
                                                            else "")))
             for i in range(1200)]
    with SqliteStore.open(path).unwrap() as writer:
        await ok(writer.ingest(chats))
    estimated, exact = await _count_with_small_limits(path, "burst")
    assert exact == 210
    assert 101 <= estimated <= 420  # one end's density alone would say 1,200


async def test_a_common_cjk_prefix_is_counted_whole_in_one_statement(tmp_path: Path) -> None:
    """A lone CJK character, searched as a prefix (its words not listed), is counted exactly
    even past the limit, by one statement: FTS5 merges the prefix's postings for each one,
    so reading the ends too would cost twice more than counting every match."""
    path = tmp_path / "h.db"
    chats = [conversation(f"s{i}", ("user", f"note {i} " + ("好的" if i % 2 else
                                                          "改成" if i % 3 else "改了")))
             for i in range(1200)]
    with SqliteStore.open(path).unwrap() as writer:
        await ok(writer.ingest(chats))
    traced: list[str] = []
    with sqlite3.connect(path) as connection:
        connection.set_trace_callback(traced.append)
        counted = estimate_count(connection, Term("改", prefix=True), 1200, exact_up_to=100)
    connection.close()
    assert counted == 600
    assert sum("MATCH" in sql for sql in traced) == 1
