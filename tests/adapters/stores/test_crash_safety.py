"""A writer killed mid-ingest (``kill -9``) leaves a consistent store: every committed
session whole, the full-text index sound, and the next writer carries on."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from harkback.adapters.stores.sqlite import SqliteStore
from tests.adapters.stores.store_contract import match, ok

WRITER = """
import asyncio, sys
from benchmarks.generate import generate
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.ingest import chunked

async def main():
    with SqliteStore.open(sys.argv[1]).unwrap() as store:
        for number, group in enumerate(chunked(generate(10**7, 3), 50)):
            (await store.ingest(group)).unwrap()
            if number == 2:
                print("written", flush=True)

asyncio.run(main())
"""


async def test_a_writer_killed_mid_ingest_leaves_whole_sessions_and_a_sound_index(
        tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE,
                              text=True, cwd=Path(__file__).resolve().parents[3])
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "written\n"
        time.sleep(0.5)  # well inside a later transaction, most likely
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        raw.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 0)")
        sessions = raw.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        # Sessions come with all their messages or not at all: positions run 0..n-1.
        gaps = raw.execute("SELECT COUNT(*) FROM (SELECT session_id FROM messages "
                           "GROUP BY session_id HAVING MAX(position) + 1 != COUNT(*))"
                           ).fetchone()[0]
        indexed, stored = raw.execute("SELECT (SELECT COUNT(*) FROM messages_fts_docsize), "
                                      "(SELECT COUNT(*) FROM messages)").fetchone()
    raw.close()
    assert sessions >= 150 and gaps == 0 and indexed == stored
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([]))
        assert await ok(store.search(match("error")))
