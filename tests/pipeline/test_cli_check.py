"""``harkback check`` on real damaged files: it finds each kind of damage without writing
the file, ``--repair`` mends what lives in the indexes (searches find the messages
again) and writes nothing into a file whose tables are damaged (issue 20)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from harkback.adapters.stores.sql.schema import SCHEMA_VERSION
from tests.adapters.stores.old_files import version_2_file
from tests.conftest import conversation
from tests.faults.test_hot_journal import SESSIONS as LONG
from tests.faults.test_hot_journal import _killed_mid_write
from tests.pipeline.test_cli import ingested, run

SESSIONS = [conversation(f"s{i}", ("user", f"docker compose note {i}"),
                         ("assistant", "restart the service " * 20), title=f"deploy {i}")
            for i in range(40)]
SESSIONS.append(conversation("needle", ("user", "kubernetes ingress annotations"),
                             ("assistant", "use the nginx class"), title="quokka"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _finds(db: Path, query: str) -> bool:
    done = run("search", query, "--json", db=db)
    assert done.returncode == 0, done.stderr
    return "needle" in [r["session_id"] for r in json.loads(done.stdout)["results"]]


def _unindexed(db: Path) -> None:
    """A killed writer's leftover, simulated: the needle's messages taken out of the
    message index, and its title out of the titles' index, the rows themselves kept."""
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        rows = connection.execute(
            "SELECT id, content FROM messages WHERE session_id = 'needle'").fetchall()
        connection.executemany("INSERT INTO messages_fts (messages_fts, rowid, body) "
                               "VALUES ('delete', ?, ?)", rows)
        connection.execute("INSERT INTO session_titles_fts (session_titles_fts, rowid, body) "
                           "SELECT 'delete', id, body FROM session_titles "
                           "WHERE session_id = 'needle'")


def _wrong_shadow_row(db: Path) -> None:
    """A wrong row written into the index's shadow table: one leaf's bytes made garbage."""
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("UPDATE messages_fts_data SET block = x'00112233445566' "
                           "WHERE id = (SELECT MAX(id) FROM messages_fts_data)")


def _flipped_index_page(db: Path) -> None:
    """Bytes flipped in the cells of a B-tree index's leaf page (found with dbstat)."""
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        page = connection.execute("SELECT pageno FROM dbstat WHERE name = 'sessions_started' "
                                  "AND pagetype = 'leaf'").fetchone()[0]
        size = connection.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    end = page * size
    for at in range(end - 60, end - 52):
        data[at] ^= 0x5A
    db.write_bytes(bytes(data))


def _orphan_vector(db: Path) -> None:
    """A vector left of a message no longer stored (the triggers bypassed by hand)."""
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("INSERT INTO vector_models (name, dimensions) VALUES ('m', 2)")
        connection.execute("INSERT INTO message_vectors (model_id, message_id, vector) "
                           "VALUES (1, 99999, x'0000803f0000803f')")


def _truncated(db: Path) -> None:
    data = db.read_bytes()
    db.write_bytes(data[:len(data) // 2])


def _table_page_damaged(db: Path) -> None:
    """The messages table's first page overwritten: stored messages are lost."""
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        page = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'messages'").fetchone()[0]
        size = connection.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    data[(page - 1) * size + 8:page * size] = bytes(size - 8)
    db.write_bytes(bytes(data))


def _changed(db: Path, statement: str) -> int:
    """``statement`` run by another program that writes the file (CHECK constraints off,
    as some do); how many rows it changed."""
    with contextlib.closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("PRAGMA ignore_check_constraints = ON")
        changed: int = connection.execute(statement).rowcount
    return changed


def _text_as_bytes(db: Path) -> None:
    _changed(db, "UPDATE messages SET content = CAST(content AS BLOB) "
                 "WHERE session_id = 'needle'")


def _role_outside(db: Path) -> None:
    _changed(db, "UPDATE messages SET role = 'robot' WHERE session_id = 'needle'")


def _tool_calls_torn(db: Path) -> None:
    # A flipped bit ends the tool calls' JSON text early: the reads' json.loads refuses it.
    _changed(db, "UPDATE messages SET tool_calls = '[{\"id\": \"c1\", \"function\"' "
                 "WHERE session_id = 'needle'")


def _tool_calls_of_no_call(db: Path) -> None:
    # JSON, but a list of no call (another program's write): the reads refuse it.
    _changed(db, "UPDATE messages SET tool_calls = '[{}]' WHERE session_id = 'needle'")


def _title_as_bytes(db: Path) -> None:
    _changed(db, "UPDATE sessions SET title = CAST(title AS BLOB) WHERE id = 'needle'")


def test_a_whole_store_is_fine_and_not_written(tmp_path: Path) -> None:
    db = ingested(tmp_path, SESSIONS)
    before, files = _digest(db), sorted(tmp_path.iterdir())
    done = run("check", "--json", db=db)
    assert done.returncode == 0, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert (found["healthy"], found["damaged"], found["next_step"]) == (True, [], "none")
    assert "all 82 messages are in the full-text index" in found["fine"]
    assert (_digest(db), sorted(tmp_path.iterdir())) == (before, files)  # no -wal, no -shm


@pytest.mark.parametrize(("damage", "said", "query"), [
    (_unindexed, "2 of 82 messages are missing", "kubernetes"),
    (_unindexed, "the titles' index is out of step", "quokka"),
    (_wrong_shadow_row, "messages_fts fails FTS5's integrity-check", "kubernetes"),
    (_flipped_index_page, "missing from index sessions_started", "kubernetes"),
    (_orphan_vector, "1 vectors belong to no stored message", "kubernetes"),
])
def test_damage_in_an_index_is_found_and_repaired(
        tmp_path: Path, damage: Callable[[Path], None], said: str, query: str) -> None:
    db = ingested(tmp_path, SESSIONS)
    damage(db)
    before = _digest(db)
    db.chmod(0o444)  # a check opens the file read-only: it never needs to write it
    checked = run("check", db=db)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert said in checked.stdout and "next step: harkback check --repair" in checked.stdout
    assert _digest(db) == before
    db.chmod(0o644)
    repaired = run("check", "--repair", "--json", db=db)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    outcome = json.loads(repaired.stdout)
    assert (outcome["healthy"], outcome["after"]["healthy"]) == (False, True)
    assert _finds(db, query)
    assert run("check", db=db).returncode == 0


def test_a_search_misses_an_unindexed_message_until_the_repair(tmp_path: Path) -> None:
    """What the repair gives back: before it, the search cannot find the needle."""
    db = ingested(tmp_path, SESSIONS)
    _unindexed(db)
    assert not _finds(db, "kubernetes")
    assert run("check", "--repair", db=db).returncode == 0
    assert _finds(db, "kubernetes")


@pytest.mark.parametrize("damage", [_truncated, _table_page_damaged])
def test_damaged_tables_get_the_way_out_and_no_write(
        tmp_path: Path, damage: Callable[[Path], None]) -> None:
    db = ingested(tmp_path, SESSIONS)
    damage(db)
    before = _digest(db)
    checked = run("check", "--json", db=db)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    found = json.loads(checked.stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False)
    assert ".recover" in found["next_step"] and "harkback sync" in found["next_step"]
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1, repaired.stdout + repaired.stderr
    assert "repair: nothing was written" in repaired.stdout
    assert _digest(db) == before


def test_the_corrupt_line_names_the_check(tmp_path: Path) -> None:
    db = ingested(tmp_path, SESSIONS)
    _table_page_damaged(db)
    done = run("search", "docker", db=db)
    assert done.returncode == 1
    assert "the database file is corrupt" in done.stderr
    assert f"run harkback check --db {db}" in done.stderr, done.stderr


def test_a_file_that_is_no_sqlite_database_is_said_to_be_none(tmp_path: Path) -> None:
    """Not "the stored messages are damaged" alone: it may never have been a store."""
    db = tmp_path / "notes.db"
    db.write_text("my notes, not a database\n", encoding="utf-8")
    done = run("check", "--repair", "--json", db=db)
    assert done.returncode == 1, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert found["damaged"] == [
        "the file is not a SQLite database: it does not start with SQLite's header"]
    assert found["next_step"].startswith("pass --db the path of a harkback store; if this")
    assert db.read_text(encoding="utf-8") == "my notes, not a database\n"


def test_a_killed_writers_journal_is_no_damage(tmp_path: Path) -> None:
    """A hot -journal (a write killed in rollback-journal mode): the check says to roll it
    back with a writable command, not that the messages are damaged; it writes nothing."""
    db = ingested(tmp_path, LONG)
    _killed_mid_write(db)
    journal = Path(f"{db}-journal")
    before = _digest(db), _digest(journal)
    done = run("check", "--repair", "--json", db=db)
    assert done.returncode == 1, done.stdout + done.stderr
    found = json.loads(done.stdout)
    assert found["damaged"] == ["a write to the file was interrupted and is not yet rolled "
                                "back (its -journal is beside it)"]
    assert found["next_step"].startswith("roll it back with any writable command")
    assert (_digest(db), _digest(journal)) == before
    assert run("migrate", db=db).returncode == 0
    assert run("check", db=db).returncode == 0


def test_an_older_stores_damaged_tables_get_the_way_out_not_migrate(tmp_path: Path) -> None:
    """A store of an older harkback whose tables are damaged: ``migrate`` refuses it (the
    file is corrupt, run check), so the next step is the way out, not ``migrate``."""
    db = tmp_path / "old.db"
    version_2_file(db, SESSIONS)
    _table_page_damaged(db)
    assert "run harkback check" in run("migrate", db=db).stderr
    checked = run("check", "--json", db=db)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    found = json.loads(checked.stdout)
    assert f"schema version 2, older than this harkback's ({SCHEMA_VERSION})" in found["fine"]
    assert found["next_step"].startswith("the stored messages themselves are damaged")


def test_a_repair_says_on_stderr_what_it_rebuilds_and_when_it_is_done(
        tmp_path: Path) -> None:
    """The rebuild holds off every sync (30 s a million messages): a line as it starts,
    naming how many rows, and one when done, on stderr; stdout's JSON stays whole. A store
    with nothing to rebuild says neither."""
    db = ingested(tmp_path, SESSIONS)
    healthy = run("check", "--repair", db=db)
    assert healthy.returncode == 0 and healthy.stderr == "", healthy.stderr
    _unindexed(db)
    with contextlib.closing(sqlite3.connect(db)) as connection:
        messages, sessions = connection.execute(
            "SELECT (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM sessions)").fetchone()
    done = run("check", "--repair", "--json", db=db)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["after"]["healthy"] is True
    started, ended = done.stderr.splitlines()
    assert started.startswith(f"{db}: rebuilding the indexes of {messages} messages and "
                              f"{sessions} sessions in one transaction"), started
    assert ended.startswith(f"{db}: rebuilt the indexes in ") and ended.endswith(
        " s; checking again"), ended


@pytest.mark.parametrize("index", ["sqlite_autoindex_messages_1", "sessions_started"])
def test_a_zeroed_index_page_is_named_and_the_messages_said_whole(
        tmp_path: Path, index: str) -> None:
    """A torn write zeroed a page of an index only: SQLite 3.40's integrity_check stops
    there, and the check said "the file cannot be read", "the stored messages themselves
    are damaged". It now names the index, says the tables read whole, and, since REINDEX
    stops at the page too, still names the ways out, not --repair; nothing is written."""
    db = ingested(tmp_path, SESSIONS)
    with contextlib.closing(sqlite3.connect(db)) as connection:
        page = connection.execute("SELECT MAX(pageno) FROM dbstat WHERE name = ?",
                                  (index,)).fetchone()[0]
        size = connection.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    data[(page - 1) * size:page * size] = bytes(size)
    db.write_bytes(bytes(data))
    before = _digest(db)
    found = json.loads(run("check", "--json", db=db).stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False)
    assert found["damaged"][0].endswith(f"(in {index})"), found["damaged"]
    assert found["next_step"].startswith("the stored messages read whole, but SQLite cannot "
                                         "mend the damaged index"), found["next_step"]
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1 and "repair: nothing was written" in repaired.stdout
    assert _digest(db) == before



@pytest.mark.parametrize("damage", [_text_as_bytes, _role_outside, _title_as_bytes,
                                    _tool_calls_torn, _tool_calls_of_no_call])
def test_a_row_that_reads_as_none_is_named_as_the_tables_damage(
        tmp_path: Path, damage: Callable[[Path], None]) -> None:
    """A text stored as bytes, a role outside its list, a title stored as bytes, tool calls
    whose JSON text is torn or holds no call: SQLite's
    read-only integrity_check looks at none of them (CHECK constraints skipped, types
    never), and the check said "fine" while show failed naming the row. The check now
    names the row as show does, as the table's damage, with the ways out; --repair writes
    nothing."""
    db = ingested(tmp_path, SESSIONS)
    damage(db)
    shown = run("show", "needle", db=db)
    assert shown.returncode == 1, shown.stdout + shown.stderr
    named = re.search(r"a stored (message|session) is damaged \(.*\)$", shown.stderr.strip())
    assert named, shown.stderr
    before = _digest(db)
    checked = run("check", "--json", db=db)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    found = json.loads(checked.stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False), found["damaged"]
    assert any(f"read as none (found in the table itself; a command that reads one stops "
               f"there): {named[0]}" in line for line in found["damaged"]), found["damaged"]
    assert found["next_step"].startswith("the stored messages themselves are damaged")
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1 and "repair: nothing was written" in repaired.stdout
    assert _digest(db) == before


def test_damaged_rows_are_counted_and_the_first_named(tmp_path: Path) -> None:
    """Every stored text made bytes: one line counts them and names the first three."""
    db = ingested(tmp_path, SESSIONS)
    changed = _changed(db, "UPDATE messages SET content = CAST(content AS BLOB)")
    found = json.loads(run("check", "--json", db=db).stdout)
    (line,) = [line for line in found["damaged"] if "read as none" in line]
    assert line.startswith(f"{changed} stored messages read as none"), line
    assert line.count("a stored message is damaged (") == 3, line
    assert line.endswith(f"; and {changed - 3} more"), line
