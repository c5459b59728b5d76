"""``kill -9`` during ingest, import, embed and optimize: the store stays whole, and a re-run
completes it exactly (the same sessions, messages and vectors as a run never interrupted).

Each command runs as its own process and is killed twice at random points (seeded, so a
failure can be replayed) within the time an uninterrupted run took; after each kill the
file passes SQLite's ``integrity_check`` and FTS5's own; then the command runs to its end.
"""

from __future__ import annotations

import json
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.support.chat_server import ChatServer, Reply

SEED = 20
SESSIONS = 600
"""More than one batch of the ingest (500 sessions), so a kill can fall between commits."""


def harkback(*args: str) -> subprocess.Popen[str]:
    """Start the CLI as its own process."""
    return subprocess.Popen([sys.executable, "-m", "harkback.pipeline.cli", *args,
                             "--no-progress"] if args[0] in ("ingest", "import", "embed")
                            else [sys.executable, "-m", "harkback.pipeline.cli", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(*args: str) -> float:
    """Run the CLI to its end (status 0); return how long it took."""
    started = time.monotonic()
    process = harkback(*args)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (args, out, err)
    return time.monotonic() - started


def write_sessions(path: Path, first: int, count: int) -> None:
    """``count`` sessions of 8 messages, ids from ``first`` on."""
    rng = random.Random(first)
    words = [f"word{n}" for n in range(500)] + ["docker", "bridge", "heron"]
    with path.open("w", encoding="utf-8") as handle:
        for index in range(first, first + count):
            handle.write(json.dumps({
                "id": f"k{index}", "source": "cli", "started_at": 1_770_000_000 + index,
                "messages": [{"role": "user" if i % 2 == 0 else "assistant",
                              "content": " ".join(rng.choices(words, k=40))}
                             for i in range(8)]}) + "\n")


def counts(db: Path) -> tuple[int, int, int]:
    """Sessions, messages and vectors stored, after checking the file is whole."""
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        raw.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")
        found = (raw.execute("SELECT COUNT(*) FROM sessions").fetchone()[0],
                 raw.execute("SELECT COUNT(*) FROM messages").fetchone()[0],
                 raw.execute("SELECT COUNT(*) FROM message_vectors").fetchone()[0])
    raw.close()
    return found


STORE_TABLES = {"sessions", "messages", "messages_fts", "message_vectors"}


def check_after_kill(db: Path) -> None:
    """The file a kill left is whole: no tables yet (killed before the schema's one
    transaction committed) or the whole schema, its rows and index consistent."""
    with sqlite3.connect(db) as raw:
        tables = {name for (name,) in raw.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
    raw.close()
    assert not tables or tables >= STORE_TABLES, sorted(tables)
    if tables:
        counts(db)


def kill_at_random(args: Sequence[str], db: Path, duration: float, rng: random.Random
                   ) -> bool:
    """Start the command, SIGKILL it at a random point of ``duration``, check the file;
    return whether it was still running when killed."""
    process = harkback(*args)
    time.sleep(rng.uniform(0.25, 0.95) * duration)
    running = process.poll() is None
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    if db.exists():
        check_after_kill(db)
    return running and process.returncode == -signal.SIGKILL


def kill_twice_then_finish(args: Sequence[str], db: Path, duration: float,
                           rng: random.Random) -> None:
    """Kills at random points, each followed by checks, then a run to the end.

    The points are drawn within the time a clean run took; when the machine got faster
    meanwhile and the command ended before both kills, the window halves and two more
    are tried (a few rounds), so a change of load cannot leave the fault uninjected.
    """
    for _ in range(4):
        if any([kill_at_random(args, db, duration, rng) for _ in range(2)]):
            break
        duration /= 2
    else:
        pytest.fail("the command ended before every kill: no fault was injected")
    finish(*args)


@pytest.fixture
def embedder() -> Iterator[str]:
    """An embedder spec served by a real HTTP server, slow enough to be killed mid-run."""
    with ChatServer(lambda _r: Reply(delay=0.03)) as server:
        yield f"openai:m@{server.url}#batch=16"


@pytest.mark.parametrize("command", ["ingest", "import"])
def test_kill_during_a_write_then_rerun_completes_exactly(tmp_path: Path, command: str) -> None:
    """Ingest or ``import jsonl`` killed twice, then run again: the counts of a clean run."""
    source = tmp_path / "sessions.jsonl"
    write_sessions(source, 0, SESSIONS)
    args = (["ingest", str(source)] if command == "ingest"
            else ["import", "jsonl", str(source)])
    clean, broken = tmp_path / "clean.db", tmp_path / "broken.db"
    duration = finish(*args, "--db", str(clean))
    kill_twice_then_finish([*args, "--db", str(broken)], broken, duration,
                           random.Random(f"{SEED}-{command}"))
    assert counts(broken) == counts(clean) == (SESSIONS, SESSIONS * 8, 0)


def test_kill_during_embed_then_rerun_completes_exactly(tmp_path: Path, embedder: str) -> None:
    """An embedding run killed twice and resumed gives every user message its vector."""
    source = tmp_path / "sessions.jsonl"
    write_sessions(source, 0, 100)
    clean, broken = tmp_path / "clean.db", tmp_path / "broken.db"
    finish("ingest", str(source), "--db", str(clean))
    shutil.copyfile(clean, broken)  # closed cleanly: the whole store is in the one file
    args = ["embed", "--embedder", embedder]
    duration = finish(*args, "--db", str(clean))
    kill_twice_then_finish([*args, "--db", str(broken)], broken, duration,
                           random.Random(f"{SEED}-embed"))
    assert counts(broken) == counts(clean) == (100, 800, 400)


def test_kill_during_optimize_then_rerun_completes_exactly(tmp_path: Path) -> None:
    """A merge of many index segments killed twice, then run again: the same rows, and a
    search finds the same sessions as in a store never interrupted."""
    clean, broken = tmp_path / "clean.db", tmp_path / "broken.db"
    for part in range(4):  # each ingest adds index segments for the merge to combine
        source = tmp_path / f"part-{part}.jsonl"
        write_sessions(source, part * 300, 300)
        finish("ingest", str(source), "--db", str(clean))
    shutil.copyfile(clean, broken)
    duration = finish("optimize", "--db", str(clean))
    kill_twice_then_finish(["optimize", "--db", str(broken)], broken, duration,
                           random.Random(f"{SEED}-optimize"))
    assert counts(broken) == counts(clean) == (1200, 9600, 0)
    found = []
    for db in (clean, broken):
        search = harkback("search", "heron docker", "--json", "--summarizer", "none",
                          "--db", str(db))
        out, _ = search.communicate(timeout=60)
        found.append([r["session_id"] for r in json.loads(out)["results"]])
    assert found[0] == found[1] and found[0]
