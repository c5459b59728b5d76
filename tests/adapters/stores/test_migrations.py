"""Schema versions of the SQLite store: a file written by the first harkback (version 1) is
migrated by a writable open with its data intact, read as it is by a read-only open, and a
file newer than this harkback is refused without being written. (The re-indexing of voiced
kana, version 3: test_voicing_migration.py.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.sql import schema
from harkback.adapters.stores.sql.migrations import MIGRATIONS
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import RecentQuery, SummaryKey
from harkback.stages.records import Conversation, Message, Session, Summary, ToolCall
from tests.adapters.stores.old_files import file_state, old_file
from tests.adapters.stores.store_contract import failed, match, ok

CORPUS = (
    Conversation(Session(id="root", source="cli", model="m1", title="Docker bridge",
                         started_at=10.0, ended_at=20.0, end_reason="done"), (
        Message(session_id="root", position=0, role="user", content="the docker bridge is down",
                timestamp=11.0),
        Message(session_id="root", position=1, role="assistant", content="restart it",
                tool_calls=(ToolCall(id="c1", name="bash", arguments='{"cmd": "systemctl"}'),)),
        Message(session_id="root", position=2, role="tool", content="ok", tool_name="bash",
                tool_call_id="c1"))),
    Conversation(Session(id="child", source="cli", started_at=30.0, parent_session_id="root"), (
        Message(session_id="child", position=0, role="user", content="bridge again, 端口冲突"),)),
)


def _version(path: Path) -> int:
    with sqlite3.connect(path) as raw:
        version: int = raw.execute("PRAGMA user_version").fetchone()[0]
    raw.close()
    return version


def _session_columns(path: Path) -> list[str]:
    with sqlite3.connect(path) as raw:
        names = [row[1] for row in raw.execute("PRAGMA table_info(sessions)")]
    raw.close()
    return names


async def _everything(store: SqliteStore) -> tuple[Any, ...]:
    """What a reader sees of :data:`CORPUS`: sessions, messages, children, recent, hits."""
    return (await ok(store.sessions(["root", "child"])),
            await ok(store.messages(["root", "child"])),
            await ok(store.children(["root"])),
            await ok(store.recent(RecentQuery(limit=5))),
            [(h.session_id, h.position) for h in await ok(store.search(match("bridge")))],
            [(h.session_id, h.position) for h in await ok(store.search(match("端口")))])


async def test_a_writable_open_migrates_a_version_1_file_keeping_every_row(
        tmp_path: Path) -> None:
    """A file made by the version-1 DDL and inserts gains ``sessions.project`` and the latest
    version; every session, message, hit and overview reads back as the same corpus stored
    fresh."""
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    old_file(old, CORPUS)
    assert (_version(old), "project" in _session_columns(old)) == (1, False)
    with SqliteStore.open(old).unwrap() as store:
        assert store.schema == Migrated(1, schema.SCHEMA_VERSION,
                                        tuple(step.about for step in MIGRATIONS),
                                        latest=schema.SCHEMA_VERSION)
        assert store.schema.applied[0] == "sessions.project: the folder a session worked in"
        migrated = await _everything(store)
    with SqliteStore.open(fresh).unwrap() as store:
        await ok(store.ingest(CORPUS))
        expected = await _everything(store)
    assert migrated == expected
    assert migrated[0] == tuple(c.session for c in CORPUS)
    assert sorted(migrated[4]) == [("child", 0), ("root", 0)]
    assert (_version(old), "project" in _session_columns(old)) == (schema.SCHEMA_VERSION, True)
    with sqlite3.connect(old) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        raw.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 0)")
    raw.close()


async def test_a_migrated_file_takes_projects_and_opens_again_unchanged(tmp_path: Path) -> None:
    """After the migration an ingest keeps a project; the next open finds the latest
    version and migrates nothing."""
    path = tmp_path / "h.db"
    old_file(path, CORPUS)
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest([Conversation(Session(id="new", project="/w/api"))]))
    with SqliteStore.open(path).unwrap() as store:
        assert store.schema == Migrated(schema.SCHEMA_VERSION, schema.SCHEMA_VERSION,
                                        latest=schema.SCHEMA_VERSION)
        found = await ok(store.sessions(["new", "root"]))
    assert [s.project for s in found] == ["/w/api", ""]


async def test_a_read_only_open_reads_a_version_1_file_without_writing(tmp_path: Path) -> None:
    """Read-only, an old file is read through views in memory: the same answers as after
    a migration, projects empty, and not a byte, time stamp or side file changes."""
    path = tmp_path / "h.db"
    old_file(path, CORPUS)
    before = file_state(path)
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        assert reader.schema == Migrated(1, 1, latest=schema.SCHEMA_VERSION)
        seen = await _everything(reader)
    assert file_state(path) == before
    assert _version(path) == 1
    with SqliteStore.open(path).unwrap() as writer:
        assert seen == await _everything(writer)


@pytest.mark.parametrize("readonly", [False, True])
def test_a_newer_schema_is_refused_in_one_line_and_not_written(tmp_path: Path,
                                                              readonly: bool) -> None:
    """A file from a later harkback: one line that says so, and the file is untouched."""
    path = tmp_path / "h.db"
    SqliteStore.open(path).unwrap().close()
    _migrated_by_another(path)
    before = file_state(path)
    error = SqliteStore.open(path, readonly=readonly).failure()
    assert error.reason == (f"{path} has harkback schema version {schema.SCHEMA_VERSION + 1}, "
                            f"newer than this harkback knows ({schema.SCHEMA_VERSION}): "
                            "upgrade harkback")
    assert file_state(path) == before


def test_a_foreign_database_is_neither_migrated_nor_written(tmp_path: Path) -> None:
    """Another program's SQLite file (no harkback id) is refused as it is."""
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE sessions (id TEXT)")
        raw.execute("PRAGMA user_version = 1")
    raw.close()
    before = file_state(path)
    for readonly in (False, True):
        error = SqliteStore.open(path, readonly=readonly).failure()
        assert error.reason == f"{path} is not a harkback database"
    assert file_state(path) == before


def test_a_new_file_is_made_by_the_same_steps_as_a_migrated_one(tmp_path: Path) -> None:
    """A fresh file and a migrated version-1 file have the same tables, columns and
    version (one path from version 1, so they cannot drift)."""
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    old_file(old, ())
    SqliteStore.open(old).unwrap().close()
    SqliteStore.open(fresh).unwrap().close()

    def layout(path: Path) -> tuple[object, ...]:
        with sqlite3.connect(path) as raw:
            objects = sorted(raw.execute("SELECT type, name, tbl_name FROM sqlite_master"))
            columns = {table: [tuple(row) for row in raw.execute(f"PRAGMA table_info({table})")]
                       for table in ("sessions", "messages")}
        raw.close()
        return objects, columns, _version(path)
    assert layout(old) == layout(fresh)


def test_a_blank_file_gets_every_table_in_one_transaction(tmp_path: Path) -> None:
    """The schema step alone (no later step of an open) makes the vector and title tables
    too: a kill after its one commit leaves a whole store, never one missing its vectors."""
    from harkback.adapters.stores.sqlite_migrations import bring_forward
    path = tmp_path / "new.db"
    with sqlite3.connect(path, isolation_level=None) as raw:
        assert bring_forward(raw, str(path)).before == 0
        made = {name for (name,) in raw.execute("SELECT name FROM sqlite_master")}
    raw.close()
    assert made >= {*schema.VECTOR_OBJECTS, *schema.TITLE_OBJECTS, "sessions", "messages"}


def _migrated_by_another(path: Path) -> None:
    """Move the file's schema version one past this harkback's, as a newer one's migration
    would while this one has it open."""
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {schema.SCHEMA_VERSION + 1}")
    raw.close()


async def test_a_store_migrated_while_open_takes_no_more_writes(tmp_path: Path) -> None:
    """Another harkback migrates the file while this one has it open (its version moves
    under it): this one's next ingest and removal are refused in one line and write
    nothing, since its rows and index tokens would be those of the old layout."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(CORPUS[:1]))
        _migrated_by_another(path)
        before = file_state(path)
        for refused in (await failed(store.ingest(CORPUS[1:])),
                        await failed(store.remove_sessions(["root"]))):
            reason = refused.reason
            assert f"now at harkback schema version {schema.SCHEMA_VERSION + 1}" in reason
            assert "nothing was written" in reason
        assert file_state(path) == before


@pytest.mark.parametrize("readonly", [True, False])
async def test_a_store_migrated_past_this_harkback_while_open_is_not_searched(
        tmp_path: Path, readonly: bool) -> None:
    """Another, newer harkback migrates the file while this one has it open: this one's
    searches and browsing are refused in one line instead of asking the new layout with
    the old rules (its words may no longer be what the index holds)."""
    path = tmp_path / "h.db"
    # The writer stays open (as a sync beside an MCP server): the reader reads its WAL.
    with SqliteStore.open(path).unwrap() as writer, \
            SqliteStore.open(path, readonly=readonly).unwrap() as store:
        await ok(writer.ingest(CORPUS))
        assert await ok(store.search(match("bridge")))
        _migrated_by_another(path)
        for refused in (await failed(store.search(match("bridge"))),
                        await failed(store.search(match("端口"))),
                        await failed(store.term_stats(["bridge"])),
                        await failed(store.search_titles(match("docker"))),
                        await failed(store.recent(RecentQuery(limit=5)))):
            assert f"now at harkback schema version {schema.SCHEMA_VERSION + 1}" in refused.reason
            assert "nothing was searched" in refused.reason


async def test_a_reader_alone_reopening_a_migrated_file_names_it_once(tmp_path: Path) -> None:
    """A reader opened with no writer around (immutable) reopens the file once it moves,
    and the reopen is refused by the newer version: one line naming the file once."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as writer:
        await ok(writer.ingest(CORPUS))
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        assert await ok(store.search(match("bridge")))
        _migrated_by_another(path)
        refused = await failed(store.search(match("bridge")))
    assert f"version {schema.SCHEMA_VERSION + 1}, newer than this harkback" in refused.reason
    assert refused.reason.count(str(path)) == 1, refused.reason


async def test_a_store_migrated_while_open_caches_no_summary(tmp_path: Path) -> None:
    """The summary cache's write is refused like the store's own writes, and adds nothing."""
    path = tmp_path / "h.db"
    key = SummaryKey(root_session_id="root", content="c", query="q", model="m",
                     prompt_version="v")
    with SqliteStore.open(path).unwrap() as store:
        await ok(store.ingest(CORPUS[:1]))
        _migrated_by_another(path)
        before = file_state(path)
        refused = await failed(store.summary_cache().keep_summary(
            key, Summary(text="Restarted.", kind="llm")))
        assert "nothing was written" in refused.reason
        assert file_state(path) == before
