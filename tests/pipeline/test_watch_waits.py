"""A ``sync --watch`` beside one-shot ingests: a round that waits its turn briefly says
nothing, one that waits long says so once (it said a line for every ingest it overlapped)."""

from __future__ import annotations

import time
from pathlib import Path

from harkback.pipeline.watch import WAIT_SAID_S
from tests.pipeline.sync_home import CLAUDE_FILE, CLAUDE_SESSION, claude_line, found_ids, make_home
from tests.pipeline.test_sync_lock import holding
from tests.pipeline.test_sync_process import stop_once_found, watching, watching_started


def _append(home: Path, text: str, uuid: str) -> None:
    with (home / ".claude" / "projects" / CLAUDE_FILE).open("a") as handle:
        handle.write(claude_line(CLAUDE_SESSION, text, uuid))


def _found_within(db: Path, word: str, seconds: float) -> bool:
    until = time.monotonic() + seconds
    while not found_ids(db, word) and time.monotonic() < until:
        time.sleep(0.05)
    return bool(found_ids(db, word))


def test_a_watch_says_only_a_wait_that_lasts(tmp_path: Path) -> None:
    """The lock held past a round's start for less than :data:`WAIT_SAID_S` (an ingest):
    no line; held longer (a big import): one line, while it waits, naming the holder."""
    home = make_home(tmp_path / "home")
    db = tmp_path / "h.db"
    with watching(home, db) as watcher:
        watching_started(watcher)
        with holding(str(db)):
            _append(home, "the quokka cache warms slowly", "u-short")
            time.sleep(WAIT_SAID_S / 2)  # the round (due in 0.4 s) waits its turn meanwhile
            assert not found_ids(db, "quokka")
        assert _found_within(db, "quokka", 30)
        with holding(str(db)) as holder:
            _append(home, "the axolotl gateway times out", "u-long")
            time.sleep(WAIT_SAID_S * 1.5)
            assert not found_ids(db, "axolotl")
        _, err = stop_once_found(watcher, db, "axolotl")
    waits = [line for line in err.splitlines() if "waits its turn" in line]
    assert waits == [f"harkback: another sync or import is writing to {db} (pid {holder.pid}); "
                     "the sync waits its turn"]
