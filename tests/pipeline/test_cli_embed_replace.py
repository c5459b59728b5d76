"""``harkback embed --replace``: a model's vectors made with other dimensions (its settings
changed under the same name) named as such, and made again (a real embeddings server)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from harkback.stages.ingest_format import conversation_to_json
from tests.pipeline.test_cli_embed import _embedded, _vectors, sessions
from tests.pipeline.test_cli_llm import harkback
from tests.support.chat_server import ChatServer, EmbeddingData, Reply, replies
from tests.support.corpus import docker_session

__all__ = ["sessions"]  # the fixture, used by name

NARROWER = 32
"""The dimensions of the changed model (the ``words`` embedder makes 64)."""


def _narrower(data: EmbeddingData) -> EmbeddingData:
    return [{**item, "embedding": item["embedding"][:NARROWER]} for item in data]


def _dimensions(db: Path) -> set[int]:
    with sqlite3.connect(db) as connection:
        return {length // 4 for (length,) in connection.execute(
            "SELECT DISTINCT length(vector) FROM message_vectors")}


def test_vectors_of_other_dimensions_are_named_and_embed_replace_makes_them_again(
        sessions: Path, tmp_path: Path) -> None:
    """sync35: the model's vectors stored with 64 dimensions and the embedder now giving
    32 (the same name, its settings changed): every embed failed as "session store
    unavailable ... another model needs another name", with no command to drop them. The
    line now names the cause and ``harkback embed --replace``, which drops them and makes
    them all again, of the new dimensions."""
    db = _embedded(sessions, tmp_path)
    more = tmp_path / "more.jsonl"  # a session stored since, without vectors yet
    more.write_text(json.dumps(conversation_to_json(docker_session(3))) + "\n")
    assert harkback("ingest", str(more), "--db", str(db)).returncode == 0
    with sqlite3.connect(db) as connection:
        stored = connection.execute("SELECT COUNT(*) FROM message_vectors").fetchone()[0]
        users = connection.execute("SELECT COUNT(*) FROM messages WHERE role = 'user' "
                                   "AND trim(content) <> ''").fetchone()[0]
    with ChatServer(replies(then=Reply(edit_data=_narrower))) as changed:
        spec = ("--embedder", f"openai:words@{changed.url}")
        refused = harkback("embed", "--db", str(db), *spec)
        replaced = harkback("embed", "--db", str(db), "--replace", "--json", *spec)
    assert refused.returncode == 1
    assert "have 64 dimensions, these have 32 (the model or its settings changed" in (
        refused.stderr)
    assert "harkback embed --replace drops them and makes them again" in refused.stderr
    assert replaced.returncode == 0, replaced.stderr
    payload = json.loads(replaced.stdout)
    assert (payload["dropped"], payload["embedded"], payload["complete"]) == (
        stored, users, True)
    assert 0 < stored < users and _dimensions(db) == {NARROWER}


def test_embed_replace_drops_nothing_when_the_embedder_fails(sessions: Path,
                                                             tmp_path: Path) -> None:
    """review35s: ``--replace`` dropped the vectors, then met an embedder out of reach:
    the store was left with none at all (search by words alone) for a command that could
    not have made one. The embedder is tried first, and nothing is dropped."""
    db = _embedded(sessions, tmp_path)
    before = _vectors(db)
    with ChatServer(replies(then=Reply(status=400))) as down:
        done = harkback("embed", "--db", str(db), "--replace", "--embedder",
                        f"openai:words@{down.url}")
    assert done.returncode == 1
    assert "nothing dropped: the embedder failed" in done.stderr, done.stderr
    assert _vectors(db) == before > 0


def test_embed_replace_that_stops_names_embed_without_replace(sessions: Path,
                                                               tmp_path: Path) -> None:
    """review35s: an ``embed --replace`` that stopped said "run it again to go on": run
    again, ``--replace`` dropped what it had made. The line names ``harkback embed``
    without ``--replace``, which then makes the rest."""
    db = _embedded(sessions, tmp_path)
    with ChatServer(replies(Reply(), then=Reply(status=400))) as failing:
        stopped = harkback("embed", "--db", str(db), "--replace", "--embedder",
                           f"openai:words@{failing.url}")
    assert stopped.returncode == 1
    assert "harkback embed without --replace goes on" in stopped.stderr, stopped.stderr
    assert "run it again" not in stopped.stderr
    assert _vectors(db) == 0
    with ChatServer() as server:
        again = harkback("embed", "--db", str(db), "--json", "--embedder",
                         f"openai:words@{server.url}")
    assert again.returncode == 0, again.stderr
    assert _vectors(db) == json.loads(again.stdout)["embedded"] > 0
