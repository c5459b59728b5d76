"""A round of ``sync --watch`` whose SQLite store another writer holds locked for longer
than the store waits: the watch says once that the store is unavailable, keeps what
changed, says when it is back, and stores it once then."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.sync import locate
from harkback.pipeline.sync_lock import SyncLock
from harkback.pipeline.watch import Resyncs
from tests.pipeline.sync_home import CLAUDE_FILE, CLAUDE_SESSION, claude_line, make_home


def _messages_with(db: Path, word: str) -> int:
    with sqlite3.connect(db) as connection:
        row = connection.execute("SELECT count(*) FROM messages WHERE content LIKE ?",
                                 (f"%{word}%",)).fetchone()
    return int(row[0])


def test_a_store_locked_by_another_writer_in_a_round_is_waited_for(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each round printed ``failed: the database is locked ...`` for every source, every
    2 s, and did not back off. Now one line says the store is unavailable, the rounds
    while it waits try nothing, and one line says it is back."""
    home = make_home(tmp_path / "home")
    located = locate({"claude-code": home / ".claude" / "projects",
                      "codex": home / ".codex" / "sessions",
                      "hermes": home / ".hermes" / "state.db"})
    importers = [i for place in located for i in place.importers]
    db = tmp_path / "h.db"

    async def rounds() -> None:
        store = SqliteStore.open(db, busy_timeout=0.1, write_patience=0.3).unwrap()
        ledger = store.import_ledger()
        assert ledger is not None
        resyncs = Resyncs(store=store, ledger=ledger, stop=asyncio.Event(),
                          lock=SyncLock.of(str(db), store))
        await resyncs.run(importers)
        with (home / ".claude" / "projects" / CLAUDE_FILE).open("a", encoding="utf-8") as f:
            f.write(claude_line(CLAUDE_SESSION, "the okapi relay drops frames", "u-okapi"))
        capsys.readouterr()
        writer = sqlite3.connect(db, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")  # another writer's long transaction
        await resyncs.run(importers)
        await resyncs.run(importers)  # before the wait is over: tries nothing, says nothing
        writer.execute("ROLLBACK")
        writer.close()
        await asyncio.sleep(1.1)
        await resyncs.run([])
        resyncs.lock.close()
        store.close()

    asyncio.run(rounds())
    out, err = capsys.readouterr()
    assert "failed:" not in out, out
    assert err.count("unavailable") == 1 and "is locked" in err, err
    assert err.count("is back") == 1, err
    assert _messages_with(db, "okapi") == 1
