"""Titles through the CLI, on a real SQLite file: a new one, and one made before titles
were indexed."""

from __future__ import annotations

import json
from pathlib import Path

from harkback.stages.ingest_format import conversation_to_json
from harkback.stages.records import Conversation
from tests.adapters.stores.old_files import file_state, old_file
from tests.conftest import conversation
from tests.pipeline.test_cli import run
from tests.support.new_stores import store_locations

location = store_locations("sqlite", "postgres")

SESSIONS = (
    conversation("titled", ("user", "the browser blocks the upload from the frontend"),
                 ("assistant", "nginx needs add_header with always in that location"),
                 title="CORS fix for the API", started_at=1_770_000_000.0),
    conversation("gateway", ("user", "the api gateway rejects the api key"),
                 ("assistant", "rotate the api key in the gateway console"),
                 started_at=1_771_000_000.0),
)


def _write(path: Path, *chats: Conversation) -> Path:
    path.write_text("".join(json.dumps(conversation_to_json(c)) + "\n" for c in chats),
                    encoding="utf-8")
    return path


def _found(db: Path, query: str) -> list[str]:
    done = run("search", query, "--json", "--summarizer", "none", db=db)
    assert done.returncode == 0, done.stderr
    return [r["session_id"] for r in json.loads(done.stdout)["results"]]


def test_a_title_finds_its_session(tmp_path: Path) -> None:
    """An ingested session is found first by words only its title holds."""
    db = tmp_path / "h.db"
    assert run("ingest", str(_write(tmp_path / "s.jsonl", *SESSIONS)), db=db).returncode == 0
    assert _found(db, "CORS API")[0] == "titled"


def test_an_old_file_is_searched_without_titles_until_a_writer_indexes_them(
        tmp_path: Path) -> None:
    """Searching a file made before titles were indexed works and writes nothing; the next
    ingest indexes the titles already stored, and the title then finds its session."""
    db = tmp_path / "h.db"
    old_file(db, SESSIONS)
    before = file_state(db)
    assert _found(db, "CORS API")[0] == "gateway"
    assert file_state(db) == before
    later = conversation("lunch", ("user", "where should we go for lunch"))
    assert run("ingest", str(_write(tmp_path / "more.jsonl", later)), db=db).returncode == 0
    assert _found(db, "CORS API")[0] == "titled"


def test_a_title_answers_search_syntax_without_a_not(location: str, tmp_path: Path) -> None:
    """A quoted phrase, an OR or a prefix* that only the title holds finds its session (a
    phrase in the title found nothing: titles were left out of every query in FTS syntax);
    a NOT still searches messages alone, as a title cannot honour it. In both stores."""
    source = str(_write(tmp_path / "s.jsonl", *SESSIONS))
    assert run("ingest", source, "--db", location, "--create").returncode == 0

    def found(query: str) -> list[str]:
        done = run("search", query, "--json", "--summarizer", "none", "--db", location)
        assert done.returncode == 0, done.stderr
        return [r["session_id"] for r in json.loads(done.stdout)["results"]]

    assert found('"CORS fix"') == ["titled"]
    assert found("cors OR kubernetes") == ["titled"]
    assert found("cor*") == ["titled"]
    assert found("cors NOT gateway") == []


def test_a_title_and_the_first_message_are_one_matched_message(tmp_path: Path) -> None:
    """A session whose title and first request both hold the word counts one matched
    message, the one it names (the title's hit points at that message; it counted twice,
    "hits 2" beside one id)."""
    db = tmp_path / "h.db"
    titled = conversation("titled", ("user", "deploy the frontend"), ("assistant", "done"),
                          title="Frontend deploy", started_at=1_770_000_000.0)
    assert run("ingest", str(_write(tmp_path / "s.jsonl", titled)), db=db).returncode == 0
    done = run("search", "deploy", "--json", "--summarizer", "none", db=db)
    result = json.loads(done.stdout)["results"][0]
    assert (result["matched_messages"], result["matched_message_ids"]) == (1, ["titled:0"])
