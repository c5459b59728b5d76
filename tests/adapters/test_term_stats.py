"""SQLite specifics of ``term_stats``: read-only files, and agreement with the memory store."""

from __future__ import annotations

from pathlib import Path

from harkback.adapters.memory_store import MemoryStore
from harkback.adapters.sqlite_store import SqliteStore
from tests.adapters.store_contract import ok
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
    """Both stores count documents, mean length and term frequencies alike (CJK included)."""
    terms = ["bike", "bikes", "repair", "端口", "冲突", "突"]
    memory = MemoryStore()
    await ok(memory.ingest(CHATS))
    with SqliteStore.open(tmp_path / "h.db").unwrap() as sqlite:
        await ok(sqlite.ingest(CHATS))
        from_sqlite = await ok(sqlite.term_stats(terms))
    from_memory = await ok(memory.term_stats(terms))
    assert from_sqlite.documents == from_memory.documents
    assert from_sqlite.average_length == from_memory.average_length
    assert dict(from_sqlite.counts) == dict(from_memory.counts)
