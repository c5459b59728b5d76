"""The import ledger's contract, against the SQLite, PostgreSQL and in-memory ledgers."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from harkback.adapters.stores.import_ledger import SqliteImportLedger
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.imports import ImportLedger, Mark, SourceKey
from tests.adapters.stores.store_contract import failed, ok
from tests.adapters.stores.vector_contract import Store
from tests.support.new_stores import new_stores

KEY = SourceKey(kind="hermes", location="/home/me/.hermes/state.db")
OTHER = SourceKey(kind="codex", location="/home/me/.codex/sessions")


empty_store = new_stores("sqlite", "postgres", "memory")
"""A fresh, empty store of each kind."""


@pytest.fixture
def ledger(empty_store: Store) -> ImportLedger:
    """A fresh ledger of each kind: a fresh store's (``SqliteImportLedger``,
    ``PostgresImportLedger``, ``MemoryImportLedger``)."""
    made = empty_store.import_ledger()
    assert made is not None
    return made


async def test_an_unknown_source_has_an_empty_state(ledger: ImportLedger) -> None:
    """A source never imported has no marks, no cursor and no times."""
    state = await ok(ledger.state(KEY))
    assert (state.marks, state.cursor, state.last_imported_at) == ((), "", None)


async def test_marks_are_kept_and_replaced_per_item(ledger: ImportLedger) -> None:
    """Keeping a mark for an item again replaces it; other items stay."""
    await ok(ledger.keep(KEY, [Mark(item="a", fingerprint="1", sessions=1, messages=3),
                               Mark(item="b", fingerprint="1", sessions=1, messages=2)],
                         now=10.0))
    await ok(ledger.keep(KEY, [Mark(item="a", fingerprint="2", sessions=1, messages=5)],
                         now=20.0))
    state = await ok(ledger.state(KEY))
    assert {m.item: m.fingerprint for m in state.marks} == {"a": "2", "b": "1"}
    assert (state.sessions, state.messages) == (2, 7)
    assert (state.first_imported_at, state.last_imported_at) == (10.0, 20.0)


async def test_advance_keeps_the_cursor_and_stamps_the_time(ledger: ImportLedger) -> None:
    """A finished import remembers its cursor, even when it kept no marks."""
    await ok(ledger.advance(KEY, "1234", now=30.0))
    state = await ok(ledger.state(KEY))
    assert (state.cursor, state.last_imported_at, state.first_imported_at) == ("1234", 30.0, 30.0)


async def test_a_state_names_the_kind_its_location_was_imported_as(
        ledger: ImportLedger) -> None:
    """Asked as another kind, the state keeps the kind the location was recorded as (the
    SQLite and PostgreSQL ledgers answered with the kind asked), so an import of it as
    another kind can refuse rather than relabel it."""
    await ok(ledger.keep(KEY, [Mark(item="s1", fingerprint="x", sessions=1)], now=10.0))
    state = await ok(ledger.state(SourceKey(kind="codex", location=KEY.location)))
    assert state.key == KEY


async def test_sources_are_listed_newest_first_with_totals(ledger: ImportLedger) -> None:
    """Every source appears once, most recently imported first, with its totals."""
    await ok(ledger.keep(KEY, [Mark(item="s1", fingerprint="x", sessions=1, messages=4)],
                         now=10.0))
    await ok(ledger.keep(OTHER, [Mark(item="f", fingerprint="y", sessions=2, messages=9)],
                         now=20.0))
    listed = await ok(ledger.sources())
    assert [(s.key, s.sessions, s.messages) for s in listed] == [(OTHER, 2, 9), (KEY, 1, 4)]


async def test_sources_of_other_locations_do_not_mix(ledger: ImportLedger) -> None:
    """Marks belong to their own location."""
    await ok(ledger.keep(KEY, [Mark(item="s1", fingerprint="x")], now=1.0))
    assert (await ok(ledger.state(OTHER))).marks == ()


async def test_a_read_only_store_lists_but_never_writes(tmp_path: Path) -> None:
    """Through a read-only store the ledger reads; a write is a StoreUnavailable value."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(SqliteImportLedger(store).keep(KEY, [Mark(item="a", fingerprint="1")],
                                                now=5.0))
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        ledger = SqliteImportLedger(reader)
        assert [s.key for s in await ok(ledger.sources())] == [KEY]
        error = await failed(ledger.advance(KEY, "9", now=6.0))
    assert "read-only" in error.reason


async def test_a_store_made_before_the_ledger_reads_as_empty(tmp_path: Path) -> None:
    """A harkback file without the ledger tables is an empty ledger, not an error."""
    path = tmp_path / "h.db"
    SqliteStore.open(path).unwrap().close()
    with SqliteStore.open(path, readonly=True).unwrap() as reader:
        ledger = SqliteImportLedger(reader)
        assert await ok(ledger.sources()) == ()
        assert (await ok(ledger.state(KEY))).marks == ()
    with sqlite3.connect(path) as raw:
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master")}
    raw.close()
    assert "import_marks" not in tables


async def test_advance_stamps_and_sets_the_cursor_in_one_transaction(tmp_path: Path) -> None:
    """When setting the cursor fails, the stamp made just before it is rolled back too."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(SqliteImportLedger(store).advance(KEY, "1", now=10.0))
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TRIGGER no_cursor BEFORE UPDATE OF cursor ON import_sources "
                    "BEGIN SELECT RAISE(ABORT, 'cursor refused'); END")
    raw.close()
    with SqliteStore.open(path).unwrap() as store:
        ledger = SqliteImportLedger(store)
        await failed(ledger.advance(KEY, "2", now=20.0))
        state = await ok(ledger.state(KEY))
    assert (state.cursor, state.last_imported_at) == ("1", 10.0)


async def test_marks_keep_their_session_ids(ledger: ImportLedger) -> None:
    """The sessions read from an item come back with its mark, replaced with it."""
    await ok(ledger.keep(KEY, [Mark(item="f", fingerprint="1", session_ids=("a", "b"))],
                         now=1.0))
    await ok(ledger.keep(KEY, [Mark(item="f", fingerprint="2", session_ids=("b", "c"))],
                         now=2.0))
    state = await ok(ledger.state(KEY))
    assert sorted(state.marks_by_item()["f"].session_ids) == ["b", "c"]


async def test_forget_drops_only_the_items_named(ledger: ImportLedger) -> None:
    """Forgotten items lose their marks; other items and other sources keep theirs."""
    await ok(ledger.keep(KEY, [Mark(item="a", fingerprint="1", session_ids=("a",)),
                               Mark(item="b", fingerprint="1", session_ids=("b",))], now=1.0))
    await ok(ledger.keep(OTHER, [Mark(item="a", fingerprint="1")], now=1.0))
    await ok(ledger.forget(KEY, ["a", "unknown"]))
    assert [m.item for m in (await ok(ledger.state(KEY))).marks] == ["b"]
    assert [m.item for m in (await ok(ledger.state(OTHER))).marks] == ["a"]


async def test_a_ledger_from_before_session_ids_reads_its_marks(tmp_path: Path) -> None:
    """Marks kept by a ledger without the session-id table are read, with no ids."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        await ok(SqliteImportLedger(store).keep(KEY, [Mark(item="s", fingerprint="1",
                                                           session_ids=("s",))], now=1.0))
    with sqlite3.connect(path) as raw:
        raw.execute("DROP TABLE import_mark_sessions")
    raw.close()
    with SqliteStore.open(path).unwrap() as store:
        ledger = SqliteImportLedger(store)
        assert [(m.item, m.session_ids) for m in (await ok(ledger.state(KEY))).marks] == [
            ("s", ())]
        assert [s.key for s in await ok(ledger.sources())] == [KEY]  # listed all the same
        await ok(ledger.keep(KEY, [Mark(item="s", fingerprint="2", session_ids=("s",))],
                             now=2.0))
        assert (await ok(ledger.state(KEY))).marks[0].session_ids == ("s",)
