"""A read-only store opened while no writer was around still reads right once one starts."""

from __future__ import annotations

import shutil
import subprocess
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


async def test_a_reader_of_a_wal_without_its_shm_in_a_closed_folder_sees_a_later_writer(
        tmp_path: Path) -> None:
    """A copy of a store with commits in its -wal and no -shm, in a folder no one may
    write (immutable, so even root cannot): the reader opens without locks and reads the
    -wal. Once the folder opens and a writer adds sessions, checkpoints and removes the
    -wal, the reader opens the file again and finds them (it kept its first view)."""
    path = tmp_path / "h.db"
    copy = tmp_path / "copy"
    copy.mkdir()
    with SqliteStore.open(path).unwrap() as writer:
        await ok(writer.ingest([conversation("s0", ("user", "heron zero"))]))
        await ok(writer.ingest([conversation("in-wal", ("user", "heron in the wal"))]))
        for name in ("h.db", "h.db-wal"):
            shutil.copy(tmp_path / name, copy / name)
    assert Path(f"{copy}/h.db-wal").stat().st_size > 0  # the fault is there to meet
    subprocess.run(["chattr", "+i", str(copy)], check=True)
    try:
        with SqliteStore.open(copy / "h.db", readonly=True).unwrap() as reader:
            assert await _ids(reader, "heron") == {"s0", "in-wal"}
            subprocess.run(["chattr", "-i", str(copy)], check=True)
            with SqliteStore.open(copy / "h.db").unwrap() as late:
                for n in range(1, 30):  # enough pages moved to break a stale reader
                    await ok(late.ingest([conversation(f"s{n}", ("user", f"heron {n} " * 50))]))
            assert not Path(f"{copy}/h.db-wal").exists()  # checkpointed: the file moved
            assert len(await _ids(reader, "heron")) == 31
    finally:
        subprocess.run(["chattr", "-i", str(copy)], check=True)
