"""``harkback sync`` and ``sync --watch`` with an embedder configured: each embeds what it
stored, not the whole history, and says what it leaves to ``harkback embed`` (real
sources, a real embeddings server, the CLI run as a process)."""

from __future__ import annotations

import contextlib
import json
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tests.pipeline.sync_home import CLAUDE_FILE, CLAUDE_SESSION, claude_line, make_home, repair
from tests.pipeline.test_sync_process import command, environment, watching_started
from tests.support.chat_server import ChatServer, Reply, replies


def _vectors_by_session(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as connection:
        return dict(connection.execute(
            "SELECT m.session_id, COUNT(*) FROM message_vectors AS v "
            "JOIN messages AS m ON m.id = v.message_id GROUP BY m.session_id").fetchall())


def _users(db: Path, session: str) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute(
            "SELECT COUNT(*) FROM messages WHERE session_id = ? AND role = 'user' "
            "AND trim(content) <> ''", (session,)).fetchone()[0])


def _synced_without_vectors(tmp_path: Path) -> tuple[Path, Path]:
    """A home with every agent's history (no damaged line), synced with no embedder."""
    home = make_home(tmp_path / "home")
    repair(home)
    db = tmp_path / "h.db"
    done = subprocess.run(command(home, db), env=environment(home), capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return home, db


def _append(home: Path, text: str, uuid: str) -> None:
    with (home / ".claude" / "projects" / CLAUDE_FILE).open("a", encoding="utf-8") as handle:
        handle.write(claude_line(CLAUDE_SESSION, text, uuid))


@contextlib.contextmanager
def _watching(home: Path, db: Path, url: str) -> Iterator[subprocess.Popen[str]]:
    """``sync --watch`` with the ``words`` embedder at ``url``, started (past its
    ``watching`` line); killed on the way out if a test failed before stopping it."""
    env = {**environment(home), "HARKBACK_EMBEDDER": f"openai:words@{url}"}
    watcher = subprocess.Popen(command(home, db, "--watch"), env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        watching_started(watcher)
        yield watcher
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()


def _stopped(watcher: subprocess.Popen[str], ready: Callable[[], bool]) -> tuple[str, str]:
    """Ctrl-C once ``ready`` (or 30 s passed); the watcher's stdout and stderr."""
    waited = time.monotonic()
    while not ready() and time.monotonic() - waited < 30:
        time.sleep(0.1)
    watcher.send_signal(signal.SIGINT)
    return watcher.communicate(timeout=60)


def test_the_first_sync_with_an_embedder_embeds_what_it_stored_not_the_history(
        tmp_path: Path) -> None:
    """sync35: the first sync after an embedder was configured embedded every message of
    the store before it printed anything (hours with a local model on a large store),
    unsaid. It embeds the sessions it stored, and names ``harkback embed`` for the others."""
    home, db = _synced_without_vectors(tmp_path)
    _append(home, "the axolotl gateway times out", "u-new")
    with ChatServer() as server:
        done = subprocess.run(command(home, db, "--json"), capture_output=True, text=True,
                              env={**environment(home),
                                   "HARKBACK_EMBEDDER": f"openai:words@{server.url}"},
                              timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    embedding = json.loads(done.stdout)["embedding"]
    users = _users(db, CLAUDE_SESSION)
    assert (embedding["embedded"], embedding["complete"]) == (users, True)
    assert _vectors_by_session(db) == {CLAUDE_SESSION: users}
    assert "synced before have no vectors of words: harkback embed makes them" in (
        embedding["note"])


def test_a_watch_embeds_what_each_round_stores(tmp_path: Path) -> None:
    """sync35: ``sync --watch`` embedded nothing: with an embedder configured, every session
    stored while it ran was ranked by words alone for good. Each round now embeds the
    sessions it stored (not the rest of the history), and Ctrl-C ends the watch as sync
    would (0)."""
    home, db = _synced_without_vectors(tmp_path)
    with ChatServer() as server, _watching(home, db, server.url) as watcher:
        _append(home, "the axolotl gateway times out", "u-new")
        out, err = _stopped(watcher, lambda: bool(_vectors_by_session(db)))
    users = _users(db, CLAUDE_SESSION)
    assert watcher.returncode == 0, err
    assert _vectors_by_session(db) == {CLAUDE_SESSION: users}
    assert f"embedded {users} message(s) with words" in out, out


def test_a_watch_whose_embedder_fails_says_so_once_goes_on_and_ends_with_3(
        tmp_path: Path) -> None:
    """sync35: an embedder that fails in a round is one line on stderr (not one a round),
    the sessions stay stored and found by words, the watch goes on, and Ctrl-C ends it
    with 3, as a sync whose embedding stopped ends."""
    home, db = _synced_without_vectors(tmp_path)
    with (ChatServer(replies(then=Reply(status=400))) as down,
          _watching(home, db, down.url) as watcher):
        assert watcher.stdout is not None
        for turn, word in enumerate(("axolotl", "quetzal")):
            _append(home, f"the {word} gateway times out", f"u-watched-{turn}")
            line = watcher.stdout.readline()  # past the first sync's table: the round's
            while line and " claude-code: " not in line:
                line = watcher.stdout.readline()
            assert " claude-code: 0 new, 1 updated" in line, line
        # once the second round's embedding asked too
        _, err = _stopped(watcher, lambda: len(down.received) >= 2)
    assert watcher.returncode == 3, err
    said = [line for line in err.splitlines() if "their vectors are not" in line]
    assert len(said) == 1 and "the watch goes on" in said[0], err
    # review35s: what the watch leaves without vectors is said when it stops (the round's
    # session, tried again by the next: "have no vectors", or "stopped while embedding")
    assert "stored" in err.splitlines()[-1] and "harkback embed make" in err.splitlines()[-1]
    assert _vectors_by_session(db) == {}
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT COUNT(*) FROM messages WHERE content LIKE "
                                  "'%quetzal%'").fetchone()[0] == 1


def test_a_watch_embeds_a_failed_rounds_sessions_once_the_embedder_works_again(
        tmp_path: Path) -> None:
    """review35s: a round whose embedding failed dropped its sessions: the next round
    embedded only its own, said "works again", and ended with 0, while the first round's
    session kept no vector for good, unsaid. The next round embeds them too."""
    home, db = _synced_without_vectors(tmp_path)
    up = threading.Event()
    other = "0d9e8f7a-6b5c-4d3e-2f1a-0b9c8d7e6f5a"
    with (ChatServer(lambda _: Reply() if up.is_set() else Reply(status=400)) as server,
          _watching(home, db, server.url) as watcher):
        assert watcher.stderr is not None
        _append(home, "the axolotl gateway times out", "u-failed")
        line = watcher.stderr.readline()
        while line and "their vectors are not" not in line:
            line = watcher.stderr.readline()
        assert "tries them again at its next round" in line, line
        up.set()
        # The next round stores another session, in a file of its own.
        (home / ".claude" / "projects" / CLAUDE_FILE).with_name(f"{other}.jsonl").write_text(
            claude_line(other, "the quetzal cache is stale", "u-other"), encoding="utf-8")
        _, err = _stopped(watcher, lambda: len(_vectors_by_session(db)) >= 2)
    assert watcher.returncode == 0, err
    assert "works again" in err, err
    assert _vectors_by_session(db) == {CLAUDE_SESSION: _users(db, CLAUDE_SESSION), other: 1}
