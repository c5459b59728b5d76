"""A stored message that reads as no message (its text stored as bytes, a role outside its
list: a flipped bit, another tool's write) is the store's damage, said in one line that
names it, exit 1; ``search`` and ``show`` ended in an internal error (exit 70)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from harkback.pipeline.cli import main
from tests.adapters.stores.store_contract import failed
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested

DAMAGE = {
    "bytes": ("UPDATE messages SET content = CAST(content AS BLOB) WHERE position = 1",
              "its text is stored as bytes, not as text"),
    "role": ("UPDATE messages SET role = 'bogus' WHERE position = 1", "'role' must be in"),
    # JSON, but no call: its keys were looked up unchecked, a KeyError (exit 70).
    "tool calls": ("UPDATE messages SET tool_calls = '[{}]' WHERE position = 1",
                   "its tool calls are stored as no list of calls)"),
    # Torn JSON (a flipped bit): a search's hit text read it with json_each, which stopped
    # the whole search with "malformed JSON", naming no row.
    "torn tool calls": ("UPDATE messages SET tool_calls = '[{\"id\": \"c1\", \"func' "
                        "WHERE position = 1", "its tool calls are stored as no list of calls)"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("command", [["search", "pelican"], ["show", "s-pelican"],
                                     ["search", "pelican", "--json"], ["redact"]])
def test_a_damaged_message_is_said_in_one_line(
        damage: str, command: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    db = ingested(tmp_path, [conversation(
        "s-pelican", ("user", "the pelican crontab broke"), ("assistant", "restore the pelican"))])
    update, said = DAMAGE[damage]
    with sqlite3.connect(db) as raw:  # the damage, written past the schema's CHECK
        raw.execute("PRAGMA ignore_check_constraints = 1")
        raw.execute(update)
    raw.close()
    assert main([*command, "--db", str(db)]) == 1
    out, err = capsys.readouterr()
    line = err.splitlines()[-1]
    assert line.startswith("harkback: session store unavailable: "), err
    assert "a stored message is damaged (session 's-pelican', position 1: " in line
    assert said in line and "internal error" not in err
    if "--json" in command:
        assert json.loads(out)["success"] is False


def test_removing_a_session_with_a_damaged_message_fails_as_the_store(tmp_path: Path) -> None:
    """``sync --prune`` removes a session whose transcript is gone: a damaged message of it
    ended that sync in an internal error; now the store's failure, the session kept whole."""
    from harkback.adapters.stores.sqlite import SqliteStore
    db = ingested(tmp_path, [conversation("s-gone", ("user", "the gone pelican"))])
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE messages SET content = CAST(content AS BLOB)")
    raw.close()
    with SqliteStore.open(db).unwrap() as store:
        error = asyncio.run(failed(store.remove_sessions(["s-gone"])))
    assert "a stored message is damaged (session 's-gone', position 0: " in error.reason
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT count(*) FROM messages").fetchone()[0] == 1
    raw.close()


@pytest.mark.parametrize("command", [["search", "pelican"], ["recent"], ["show", "s-pelican"]])
def test_a_damaged_session_is_said_in_one_line(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session's title stored as bytes reached the printing, an internal error (exit 70)."""
    db = ingested(tmp_path, [conversation("s-pelican", ("user", "the pelican crontab"),
                                          title="Pelican crontab")])
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE sessions SET title = CAST(title AS BLOB)")
    raw.close()
    assert main([*command, "--db", str(db)]) == 1
    line = capsys.readouterr().err.splitlines()[-1]
    assert line.endswith("a stored session is damaged (session 's-pelican': its title is "
                         "stored as bytes, not as text)"), line



def test_ingesting_again_a_session_with_a_damaged_message_fails_as_the_store(
        tmp_path: Path) -> None:
    """The store's upsert reads the stored messages to take their text out of the index: a
    damaged one escaped ``ingest`` as a TypeError (the CLI's own read came first; a library
    caller and ``sync``'s appended tails met it)."""
    from harkback.adapters.stores.sqlite import SqliteStore
    db = ingested(tmp_path, [conversation("s-pelican", ("user", "the pelican crontab"),
                                          ("assistant", "restore the pelican"))])
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE messages SET content = CAST(content AS BLOB) WHERE position = 1")
    raw.close()
    with SqliteStore.open(db).unwrap() as store:
        error = asyncio.run(failed(store.ingest([conversation(
            "s-pelican", ("user", "the pelican crontab, again"))])))
    assert "a stored message is damaged (session 's-pelican', position 1: " in error.reason
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT count(*) FROM messages").fetchone()[0] == 2
    raw.close()


def test_embedding_a_damaged_message_fails_as_the_store(tmp_path: Path) -> None:
    """``embed`` reads the messages still without a vector: a damaged one escaped the
    store as a TypeError (``harkback embed``: an internal error, exit 70)."""
    from harkback.adapters.stores.sqlite import SqliteStore
    db = ingested(tmp_path, [conversation("s-pelican", ("user", "the pelican crontab"))])
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE messages SET content = CAST(content AS BLOB)")
    raw.close()
    with SqliteStore.open(db).unwrap() as store:
        error = asyncio.run(failed(store.unembedded("m", ("user",), 10)))
    assert "a stored message is damaged (session 's-pelican', position 0: " in error.reason


@pytest.mark.parametrize("command", [["redact"], ["migrate"], ["optimize"]])
def test_a_title_stored_as_bytes_stops_a_writable_open_in_one_line(
        command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Another program's UPDATE of a title takes the session out of the title index; a
    writable open indexes it again, and a title stored as bytes ended there in an internal
    error (exit 70). Now one line naming the session, exit 1, and the file as it was."""
    db = ingested(tmp_path, [conversation("s-pelican", ("user", "the pelican crontab"),
                                          title="Pelican crontab")])
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE sessions SET title = CAST(title AS BLOB)")
    raw.close()
    before = db.read_bytes(), sorted(p.name for p in tmp_path.iterdir())
    assert main([*command, "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"harkback: session store unavailable: {db}: a stored session is damaged (session "
        "'s-pelican': its title is stored as bytes, not as text)"], err
    assert (db.read_bytes(), sorted(p.name for p in tmp_path.iterdir())) == before


@pytest.mark.parametrize("damage", ["role", "tool calls"])
def test_a_damaged_message_stops_the_kana_migration_in_one_line(
        damage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Schema 3 indexes the messages holding kana again, reading each as a record: a damaged
    one ended ``migrate`` of an older file in an internal error (exit 70). Now one line, exit
    1, the file still at its version (PostgreSQL's: test_damaged_rows_postgres.py)."""
    from tests.adapters.stores.old_files import old_file
    from tests.pipeline.test_cli_migrate import _version
    db = tmp_path / "h.db"
    old_file(db, [conversation("s-kana", ("user", "バケット を 作る"), ("assistant", "バケット"))])
    update, said = DAMAGE[damage]
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA ignore_check_constraints = 1")
        raw.execute(update)
    raw.close()
    assert main(["migrate", "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"harkback: session store unavailable: {db}: a stored message is "
                          "damaged (session 's-kana', position 1: ") and said in err, err
    assert (len(err.splitlines()), _version(db)) == (1, 1)
