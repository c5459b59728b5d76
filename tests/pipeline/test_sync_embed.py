"""``harkback sync`` with an embedder configured: what it brought gets its vectors, and an
unchanged sync costs nothing more (real sources, a real embeddings server)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.pipeline.sync_home import ENV_HOMES, make_home, repair
from tests.pipeline.test_cli_llm import harkback
from tests.support.chat_server import ChatServer, Reply, replies


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
    assert json.loads(again.stdout)["embedding"] == {
        "model": "words", "embedded": 0, "complete": True, "error": None}
    assert (asked, _vectors(db)) == (0, 0)
