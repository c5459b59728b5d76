"""A write that breaks a constraint the schema keeps (a copy torn mid-write) is reported as
a damaged file when SQLite's quick_check finds the damage, and as itself when it does not."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from returns.io import IOFailure
from returns.pipeline import is_successful

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_errors import damage_behind
from harkback.stages.stage import as_result
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation

_AGAIN = "INSERT INTO session_titles (session_id, body) VALUES ('s0', 'again')"
"""A title row for a session that has one: what a write meets when the row it deleted
first was not where the file's damaged pages said."""


async def _stored(path: Path) -> None:
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([conversation(f"s{i}", ("user", f"docker {i}"), title=f"t {i}")
                               for i in range(10)]))


def _torn(path: Path) -> None:
    """Swap the first and last cells of the title table's page: its row ids out of order,
    as a copy of a page caught mid-write leaves them (quick_check: "out of order")."""
    with sqlite3.connect(path) as connection:
        root = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'session_titles'").fetchone()[0]
        size = connection.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(path.read_bytes())
    start = (root - 1) * size
    cells = int.from_bytes(data[start + 3:start + 5], "big")
    first, last = start + 8, start + 8 + 2 * (cells - 1)
    data[first:first + 2], data[last:last + 2] = data[last:last + 2], data[first:first + 2]
    path.write_bytes(bytes(data))


def _listed_twice(path: Path) -> None:
    """A session listed twice by the sessions' key (two pages of it from two moments), with
    no title row: a writable open indexes its title, twice. Made by hiding the key's
    uniqueness from SQLite for two inserts (``writable_schema``), then showing it again."""
    connection = sqlite3.connect(path, isolation_level=None)
    table = connection.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'sessions'").fetchone()[0]
    connection.execute("PRAGMA writable_schema = ON")
    connection.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'sessions'",
                       (table.replace("id TEXT PRIMARY KEY", "id TEXT"),))
    connection.execute("UPDATE sqlite_master SET name = 'plain', sql = 'CREATE INDEX plain "
                       "ON sessions(id)' WHERE name = 'sqlite_autoindex_sessions_1'")
    connection.close()
    connection = sqlite3.connect(path, isolation_level=None)
    connection.executemany("INSERT INTO sessions (id) VALUES (?)", [("s10",), ("s10",)])
    connection.execute("PRAGMA writable_schema = ON")
    connection.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'sessions'", (table,))
    connection.execute("UPDATE sqlite_master SET name = 'sqlite_autoindex_sessions_1', "
                       "sql = NULL WHERE name = 'plain'")
    connection.close()


async def _write_again(path: Path) -> str:
    with SqliteStore.open(path).unwrap() as store:
        outcome = await store.run(lambda c: c.execute(_AGAIN), write=True)
    assert isinstance(outcome, IOFailure)
    reason: str = as_result(outcome).failure().reason
    return reason


async def test_a_broken_constraint_in_a_damaged_file_is_called_corrupt(tmp_path: Path) -> None:
    """chaos28: a torn copy's writers said "UNIQUE constraint failed" and nothing else."""
    path = tmp_path / "h.db"
    await _stored(path)
    _torn(path)
    before = path.read_bytes()
    reason = await _write_again(path)
    assert reason.startswith(f"the database file is corrupt: {path} (SQLite's quick_check: ")
    assert "out of order" in reason and "UNIQUE constraint failed" in reason
    assert path.read_bytes() == before


async def test_a_broken_constraint_in_a_whole_file_is_said_as_it_is(tmp_path: Path) -> None:
    """A file quick_check finds whole is not called corrupt: SQLite's own words."""
    path = tmp_path / "h.db"
    await _stored(path)
    reason = await _write_again(path)
    assert reason == f"{path}: UNIQUE constraint failed: session_titles.session_id"


async def test_a_damaged_file_whose_open_breaks_a_constraint_is_called_corrupt(
        tmp_path: Path) -> None:
    """chaos28: ``migrate`` of a torn copy said "UNIQUE constraint failed" (the writable
    open's indexing of missing titles); it says the file is corrupt, and writes nothing."""
    path = tmp_path / "h.db"
    await _stored(path)
    _listed_twice(path)
    _torn(path)
    before = path.read_bytes()
    opened = SqliteStore.open(path)
    reason = opened.failure().reason if not is_successful(opened) else "opened"
    assert reason.startswith(f"the database file is corrupt: {path} (SQLite's quick_check: ")
    assert "UNIQUE constraint failed: session_titles.session_id" in reason
    assert path.read_bytes() == before


def test_a_check_that_could_not_run_leaves_the_write_error_as_it_is(tmp_path: Path) -> None:
    """A quick_check that ends without a verdict (here interrupted, as Ctrl-C's progress
    handler ends a statement) found no damage: the broken constraint is reported, not
    "interrupted; the write failed with: ..." standing in for it."""
    path = tmp_path / "h.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (x UNIQUE)")
        connection.execute("INSERT INTO t VALUES (1)")
    connection = sqlite3.connect(path)
    try:
        connection.execute("INSERT INTO t VALUES (1)")
    except sqlite3.IntegrityError as failed:
        broken = failed
    connection.set_progress_handler(lambda: 1, 1)  # every statement is interrupted
    reported = damage_behind(connection, broken)
    connection.close()
    assert reported is broken, reported
