"""A read-only store opened while no writer was around still reads right once one starts."""

from __future__ import annotations

from pathlib import Path

from harkback.adapters.stores.sqlite import SqliteStore
from tests.adapters.stores.store_contract import match, ok
from tests.conftest import conversation


async def _ids(reader: SqliteStore, word: str) -> set[str]:
    return {hit.session_id for hit in await ok(reader.search(match(word)))}


async def test_a_reader_opened_immutable_sees_a_later_writer(tmp_path: Path) -> None:
    """The reader opens with no -wal beside the file; a writer then adds sessions, while
    connected (its WAL there) and after it closed: every search finds them, none fails."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as first:
        await ok(first.ingest([conversation("s0", ("user", "heron zero"))]))
    assert not Path(f"{path}-wal").exists()
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert await _ids(reader, "heron") == {"s0"}
        with SqliteStore.open(path).unwrap() as writer:
            for n in range(1, 30):  # enough pages moved to break an immutable reader
                await ok(writer.ingest([conversation(f"s{n}", ("user", f"heron {n} " * 50))]))
            assert len(await _ids(reader, "heron")) == 30
        with SqliteStore.open(path).unwrap() as late:
            await ok(late.ingest([conversation("late", ("user", "heron late"))]))
        assert "late" in await _ids(reader, "heron")
