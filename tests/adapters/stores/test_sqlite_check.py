"""``harkback check`` while a sync writes the store (a file opened ``immutable``, no writer
there, then written reads as pages from two moments: no damage), and the copy FTS5's own
check runs on (not held in memory; no room for it is no damage)."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.sqlite_files import read_only_mode
from harkback.adapters.stores import sqlite_check, sqlite_integrity
from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run


def test_a_sync_writing_during_the_check_is_not_taken_for_damage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ingested(tmp_path, [conversation(f"s{i}", ("user", f"docker note {i}"),
                                          ("assistant", "restart " * 30), title=f"t{i}")
                             for i in range(100)])
    assert read_only_mode(db) == "immutable"  # no writer around: the check reads so
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join(json.dumps(conversation_to_json(conversation(
        f"m{i}", ("user", f"kube {i} " * 20), ("assistant", "ok " * 50), title=f"x{i}")))
        for i in range(1000)) + "\n", encoding="utf-8")
    pages = sqlite_integrity.pages
    writes = [more]

    def a_sync_meanwhile(connection: sqlite3.Connection, fine: list[str],
                         damaged: list[str]) -> bool:
        while writes:  # a real writer, once, between the check's open and its reads
            done = run("ingest", str(writes.pop()), db=db)
            assert done.returncode == 0, done.stderr
        return pages(connection, fine, damaged)

    monkeypatch.setattr(sqlite_check, "pages", a_sync_meanwhile)
    found = sqlite_check.check(db)
    assert (found.damaged, found.advice) == ((), None)
    assert "all 2200 messages are in the full-text index" in found.fine


PROBE = """
import json, re, resource, signal, sys
from pathlib import Path
from harkback.adapters.stores.sqlite_check import check
def peak():  # this process's own (ru_maxrss keeps the forking parent's peak); Linux
    status = Path("/proc/self/status")
    return int(re.search(r"VmHWM:\\s+(\\d+) kB", status.read_text())[1]) if status.exists() else 0
if sys.argv[2] != "-":  # a disk with no room: a write past this many bytes fails
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
before = peak()
found = check(Path(sys.argv[1]))
print(json.dumps({"grown": (peak() - before) * 1024, "fine": found.fine,
                  "damaged": found.damaged}))
"""


def _checked_apart(db: Path, room: str = "-") -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(db), room],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.fixture
def big(tmp_path: Path) -> Path:
    """A store of some 30 MB: 8,000 messages of random words, indexed as an ingest does."""
    db = ingested(tmp_path, [conversation("s0", ("user", "docker"), title="t")])
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        connection.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 8000) "
            "INSERT INTO messages (session_id, position, role, content) SELECT 's0', i, "
            "'user', hex(randomblob(300)) || ' ' || hex(randomblob(300)) FROM n")
        connection.execute("INSERT INTO messages_fts (rowid, body) "
                           "SELECT id, content FROM messages WHERE position > 0")
    return db


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's VmHWM")
def test_the_copy_for_fts5s_own_check_is_not_held_in_memory(big: Path) -> None:
    """FTS5's own check runs on a copy: one in memory cost the file's size in RAM (a
    store of 256 MiB, a quarter of a small machine's)."""
    found = _checked_apart(big)
    assert "the full-text index messages_fts passes FTS5's integrity-check" in found["fine"]
    assert found["grown"] < big.stat().st_size / 3, (found["grown"], big.stat().st_size)


def test_no_room_for_the_copy_is_no_damage(big: Path) -> None:
    """$TMPDIR without room for the copy: the indexes are read whole instead."""
    found = _checked_apart(big, room=str(2**20))
    assert found["damaged"] == []
    assert "the full-text index messages_fts reads whole" in found["fine"]
