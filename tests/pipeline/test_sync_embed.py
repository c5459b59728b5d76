"""``harkback sync`` with an embedder configured: what it brought gets its vectors, and an
unchanged sync costs nothing more (real sources, a real embeddings server)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.pipeline.sync_home import ENV_HOMES, make_home, repair
from tests.pipeline.test_cli_llm import MODEL_ENV, harkback
from tests.support.chat_server import ChatServer, Received, Reply, replies


def _vectors(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM message_vectors").fetchone()[0])


def test_sync_with_an_embedder_configured_embeds_what_it_brought(tmp_path: Path) -> None:
    """tourh34: ``$HARKBACK_EMBEDDER`` (or the config file's embedder) made ingest and
    import embed what they stored, but sync never did: the sessions it brought were found
    by words alone until ``harkback embed`` was run, without a word. Now it embeds them, and
    an embedder that fails leaves the sessions stored and says so, status 3, as ingest."""
    home = make_home(tmp_path / "home")
    repair(home)  # no damaged line: the status is the embedding's alone
    homes = {"HOME": str(home), **dict.fromkeys(ENV_HOMES, "")}
    db, down_db = tmp_path / "h.db", tmp_path / "down.db"
    with ChatServer() as server:
        done = harkback("sync", "--db", str(db), "--json",
                        env={**homes, "HARKBACK_EMBEDDER": f"openai:words@{server.url}"})
    with ChatServer(replies(then=Reply(status=500))) as down:
        failed = harkback("sync", "--db", str(down_db), "--json",
                          env={**homes, "HARKBACK_EMBEDDER": f"openai:words@{down.url}"})
    with sqlite3.connect(db) as connection:
        users = connection.execute("SELECT COUNT(*) FROM messages WHERE role = 'user' "
                                   "AND trim(content) <> ''").fetchone()[0]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["embedding"] == {
        "model": "words", "embedded": users, "complete": True, "error": None}
    assert users > 0 and _vectors(db) == users
    assert failed.returncode == 3
    payload = json.loads(failed.stdout)
    assert (payload["success"], payload["embedding"]["complete"]) == (True, False)
    assert "the sessions are stored; their vectors are not" in failed.stderr
    assert _vectors(down_db) == 0



def test_an_unchanged_sync_does_not_look_for_messages_to_embed(tmp_path: Path) -> None:
    """review34h: every sync with an embedder configured listed the messages lacking
    vectors, a scan of every message (a no-change sync of 1,026,000 messages: 0.37 s
    without an embedder, 1.04 s with one), and embedded any it found, though it had stored
    nothing. A sync that stores nothing now leaves them to ``harkback embed``: no request."""
    home = make_home(tmp_path / "home")
    repair(home)
    homes = {"HOME": str(home), **dict.fromkeys(ENV_HOMES, "")}
    db = tmp_path / "h.db"
    assert harkback("sync", "--db", str(db), env=homes).returncode == 0
    with ChatServer() as server:
        again = harkback("sync", "--db", str(db), "--json",
                         env={**homes, "HARKBACK_EMBEDDER": f"openai:words@{server.url}"})
        asked = len(server.received)
    assert again.returncode == 0, again.stderr
    embedding = json.loads(again.stdout)["embedding"]
    assert embedding == {"model": "words", "embedded": 0, "complete": True, "error": None,
                         "note": embedding.get("note")}
    # sync35: the store holds sessions and the model no vector yet: harkback embed is named
    assert "synced before have no vectors of words: harkback embed" in embedding["note"]
    assert (asked, _vectors(db)) == (0, 0)


def test_ctrl_c_while_a_sync_embeds_says_harkback_embed_makes_the_rest(tmp_path: Path) -> None:
    """review34h: Ctrl-C while a sync embedded what it brought said "the same command run
    again goes on from there", which a sync that stores nothing new does not do for the
    vectors (it does not look): the line now says the sessions are stored and ``harkback
    embed`` makes the vectors left."""
    home = make_home(tmp_path / "home")
    repair(home)
    db = tmp_path / "h.db"
    status, out, err = stopped_at_first_batch(
        "sync", "--db", str(db), "--json",
        env={"HOME": str(home), **dict.fromkeys(ENV_HOMES, "")})
    assert status == 130
    kept = ("the sessions are stored, each whole; the vectors made before it are kept (0 "
            "message(s) embedded with words): harkback embed makes the rest")
    assert kept in err and json.loads(out)["kept"] == kept
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] > 0
    assert _vectors(db) == 0


def stopped_at_first_batch(*args: str, env: dict[str, str]) -> tuple[int, str, str]:
    """Run ``harkback ARGS`` (``env`` added, ``$HARKBACK_EMBEDDER`` a real embeddings
    server) and send it SIGINT when its first batch reaches the embedder: its exit
    status, stdout and stderr."""
    running: list[subprocess.Popen[str]] = []

    def interrupt(received: Received) -> Reply:
        if received.index == 0:  # the first batch at the embedder
            running[0].send_signal(signal.SIGINT)
            running[0].wait(timeout=60)
        return Reply()

    with ChatServer(interrupt) as server:
        running.append(subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", *args],
            env={**{k: v for k, v in os.environ.items() if k not in MODEL_ENV}, **env,
                 "HARKBACK_EMBEDDER": f"openai:words@{server.url}"},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        out, err = running[0].communicate(timeout=90)
    return running[0].returncode, out, err
