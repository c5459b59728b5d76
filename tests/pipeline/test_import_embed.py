"""``harkback ingest`` and ``harkback import`` with an embedder: they embed the sessions they
stored, as a sync does, and name ``harkback embed`` for the rest (a real SQLite file, the
CLI in a subprocess, a real embeddings server)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from harkback.stages.ingest_format import conversation_to_json
from tests.pipeline.test_cli_llm import harkback
from tests.pipeline.test_sync_embed import stopped_at_first_batch
from tests.support.chat_server import ChatServer, Reply
from tests.support.corpus import docker_session


def _file(path: Path, indexes: Iterable[int]) -> Path:
    """An ingest file of the Docker sessions ``s<index>`` (two user turns each)."""
    path.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                            for i in indexes))
    return path


def _embedded_sessions(db: Path) -> list[str]:
    with sqlite3.connect(db) as connection:
        return [row[0] for row in connection.execute(
            "SELECT DISTINCT m.session_id FROM message_vectors AS v "
            "JOIN messages AS m ON m.id = v.message_id ORDER BY 1")]


def _big_store(tmp_path: Path) -> Path:
    """A store of ten sessions ingested without an embedder: no vector of any model."""
    db = tmp_path / "h.db"
    done = harkback("ingest", str(_file(tmp_path / "old.jsonl", range(10))), "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


def test_an_ingest_embeds_the_sessions_it_stored_and_names_harkback_embed(
        tmp_path: Path) -> None:
    """embed36: an ingest of one session into a store whose vectors were never made
    embedded every session of the store (20 user turns sent here, the whole store's
    vectors made) before it ended: it embeds that session's 2 user turns, and says the
    10 sessions stored before are ``harkback embed``'s to make."""
    db = _big_store(tmp_path)
    one = _file(tmp_path / "one.jsonl", [10])
    with ChatServer() as server:
        done = harkback("ingest", str(one), "--db", str(db),
                        "--embedder", f"openai:words@{server.url}")
        sent = [text for r in server.received for text in r.inputs]
    assert done.returncode == 0, done.stderr
    assert len(sent) == 2 and all(t.startswith(("marker-10", "That worked")) for t in sent)
    assert _embedded_sessions(db) == ["s10"]
    assert "embedded 2 message(s) with words" in done.stdout
    assert ("note: 10 session(s) stored before have no vectors of words: harkback embed "
            "makes them (an ingest embeds only what it reads)") in done.stdout


def test_an_import_embeds_the_sessions_it_read_and_its_json_names_harkback_embed(
        tmp_path: Path) -> None:
    """embed36: ``import jsonl`` with ``$HARKBACK_EMBEDDER`` embedded the whole store too.
    It embeds the three sessions of its file (s9 stored before, unchanged, without
    vectors; s10 and s11 new), and ``embedding.note`` counts the 9 it left."""
    db = _big_store(tmp_path)
    more = _file(tmp_path / "more.jsonl", [9, 10, 11])
    with ChatServer() as server:
        done = harkback("import", "jsonl", str(more), "--db", str(db), "--json",
                        env={"HARKBACK_EMBEDDER": f"openai:words@{server.url}"})
        sent = sum(len(r.inputs) for r in server.received)
    assert done.returncode == 0, done.stderr
    embedding = json.loads(done.stdout)["embedding"]
    assert (sent, embedding["embedded"], embedding["complete"]) == (6, 6, True)
    assert _embedded_sessions(db) == ["s10", "s11", "s9"]
    assert embedding["note"] == (
        "9 session(s) stored before have no vectors of words: harkback embed makes them "
        "(an import embeds only what it reads)")


def test_an_ingest_embeds_the_sessions_it_found_unchanged_without_vectors(
        tmp_path: Path) -> None:
    """review36e: once the model had vectors (s0's), an ingest with an embedder of a file
    stored before without one (s1, s2) found them unchanged, stored nothing, embedded
    nothing ("embedded 0 message(s)") and said nothing: they were never embedded (so
    too a session whose embedding an earlier ingest stopped). They get their vectors now,
    and only theirs are sent."""
    db = tmp_path / "h.db"
    with ChatServer() as server:
        spec = f"openai:words@{server.url}"
        assert harkback("ingest", str(_file(tmp_path / "a.jsonl", [0])), "--db", str(db),
                        "--create", "--embedder", spec).returncode == 0
        plain = _file(tmp_path / "b.jsonl", [1, 2])
        assert harkback("ingest", str(plain), "--db", str(db)).returncode == 0
        server.received.clear()
        done = harkback("ingest", str(plain), "--db", str(db), "--embedder", spec)
        sent = [text for r in server.received for text in r.inputs]
    assert done.returncode == 0, done.stderr
    assert "(0 added, 0 updated, 2 unchanged)" in done.stdout
    assert "embedded 4 message(s) with words" in done.stdout
    assert len(sent) == 4 and not any(t.startswith("marker-0:") for t in sent)
    assert _embedded_sessions(db) == ["s0", "s1", "s2"]


def test_once_the_model_has_vectors_an_ingest_adds_no_note(tmp_path: Path) -> None:
    """What was stored after ``harkback embed`` made the model's vectors is embedded as it
    comes: no note then, and ``embedding`` in ``--json`` holds none."""
    db = _big_store(tmp_path)
    with ChatServer() as server:
        spec = f"openai:words@{server.url}"
        assert harkback("embed", "--db", str(db), "--embedder", spec).returncode == 0
        done = harkback("ingest", str(_file(tmp_path / "one.jsonl", [10])), "--db", str(db),
                        "--json", "--embedder", spec)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["embedding"] == {
        "model": "words", "embedded": 2, "complete": True, "error": None}
    assert len(_embedded_sessions(db)) == 11


def test_ctrl_c_while_an_ingest_embeds_names_harkback_embed(tmp_path: Path) -> None:
    """embed36: stopped while it embedded, an ingest said "the same command run again goes
    on from there"; run again it stores nothing and so embeds nothing now. The line says
    the sessions are stored and ``harkback embed`` makes the vectors left, as a sync's does."""
    db = tmp_path / "h.db"
    status, out, err = stopped_at_first_batch(
        "ingest", str(_file(tmp_path / "s.jsonl", range(3))), "--db", str(db), "--json",
        env={})
    assert status == 130
    kept = ("the sessions are stored, each whole; the vectors made before it are kept (0 "
            "message(s) embedded with words): harkback embed makes the rest")
    assert kept in err and json.loads(out)["kept"] == kept
    assert _embedded_sessions(db) == []


def test_an_import_whose_embedder_failed_names_harkback_embed_not_itself(
        tmp_path: Path) -> None:
    """review36e: an import whose embedder failed printed "run it again to go on": run
    again, it read nothing (the file unchanged since it was imported) and embedded nothing.
    Its report names ``harkback embed``, as its line on stderr does."""
    db = tmp_path / "h.db"
    with ChatServer(lambda _received: Reply(status=500)) as server:
        done = harkback("import", "jsonl", str(_file(tmp_path / "x.jsonl", [0])), "--db",
                        str(db), "--create", "--embedder", f"openai:words@{server.url}")
    assert done.returncode == 3, done.stderr
    assert "run it again" not in done.stdout
    assert "(the vectors made are kept: once that is fixed, harkback embed makes the rest)" \
        in done.stdout
