"""Several harkback processes writing one store at once, as a team sharing a database meets
it (SQLite file and PostgreSQL): each interleaving that lost or miscounted something is
placed exactly, the other process being a real ``harkback`` run in a subprocess."""

from __future__ import annotations

import json
import shutil
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from returns.future import FutureResult

from harkback.adapters.sources.claude_code import CLAUDE_CODE
from harkback.adapters.sources.transcripts import TranscriptImporter
from harkback.pipeline.importing import run_import
from harkback.pipeline.sync import sync_one
from harkback.pipeline.wiring import open_store
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import ImportLedger, Mark, SourceKey, SourceState
from harkback.stages.ports import IngestReport, SessionStore
from harkback.stages.records import Conversation
from tests.pipeline.sync_home import FIXTURES
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations

db = store_locations("sqlite", "postgres")
"""A new store: a SQLite file, or an empty database on the test server."""
T = TypeVar("T")


def _projects(folder: Path) -> Path:
    """A copy of the Claude Code fixtures' projects folder at ``folder``."""
    shutil.copytree(FIXTURES / "claude-code" / "projects", folder)
    return folder


class _Between:
    """A real ledger that runs ``meanwhile`` once, just before the first marks are kept:
    where another process's work lands between an import's comparison and its marks."""

    def __init__(self, ledger: ImportLedger, meanwhile: Callable[[], None]) -> None:
        self._ledger = ledger
        self._meanwhile: Callable[[], None] | None = meanwhile

    def state(self, key: SourceKey) -> FutureResult[SourceState, StoreUnavailable]:
        return self._ledger.state(key)

    def keep(self, key: SourceKey, marks: Sequence[Mark], *, now: float
             ) -> FutureResult[None, StoreUnavailable]:
        meanwhile, self._meanwhile = self._meanwhile, None
        if meanwhile is not None:
            meanwhile()
        return self._ledger.keep(key, marks, now=now)

    def advance(self, key: SourceKey, cursor: str, *, now: float
                ) -> FutureResult[None, StoreUnavailable]:
        return self._ledger.advance(key, cursor, now=now)

    def forget(self, key: SourceKey, items: Sequence[str]
               ) -> FutureResult[None, StoreUnavailable]:
        return self._ledger.forget(key, items)

    def sources(self) -> FutureResult[tuple[SourceState, ...], StoreUnavailable]:
        return self._ledger.sources()

    def let_go(self, session_ids: Sequence[str]) -> FutureResult[None, StoreUnavailable]:
        return self._ledger.let_go(session_ids)


def _stored(db: str) -> set[str]:
    done = harkback("recent", "--db", db, "--json", "--limit", "10")
    assert done.returncode == 0, done.stderr
    return {r["session_id"] for r in json.loads(done.stdout)["results"]}


def _a_deleted(db: str, tmp_path: Path) -> tuple[Path, Path, set[str]]:
    """Folders A and B holding the same sessions, A's imported into ``db`` and then its
    files deleted; A, B and the sessions held (the roots ``recent`` lists)."""
    a, b = _projects(tmp_path / "a"), _projects(tmp_path / "b")
    assert harkback("import", "claude-code", str(a), "--db", db).returncode == 3  # bad lines
    held = _stored(db)
    shutil.rmtree(a)
    a.mkdir()
    return a, b, held


async def _beside_pruning(db: str, a: Path,
                          run: Callable[[SessionStore, ImportLedger], Awaitable[T]]) -> T:
    """``run`` on the store at ``db`` with a ledger before whose first marks a sync of the
    emptied folder ``a`` prunes its sessions (:func:`_pruning_sync`)."""
    store = open_store(db).unwrap()
    try:
        ledger = store.import_ledger()
        assert ledger is not None
        return await run(store, cast(ImportLedger, _Between(ledger,
                                                            lambda: _pruning_sync(a, db))))
    finally:
        store.close()


def _pruning_sync(folder: Path, db: str) -> None:
    """``harkback sync --prune`` of the Claude Code ``folder`` whose files were deleted: it
    removes the sessions they held."""
    done = harkback("sync", "--claude-code", str(folder), "--db", db, "--json", "--prune")
    (claude,) = [s for s in json.loads(done.stdout)["sources"] if s["kind"] == "claude-code"]
    assert claude["sessions"]["removed"] > 0, done.stderr


async def test_a_sync_removing_meanwhile_cannot_lose_what_another_folder_holds(
        db: str, tmp_path: Path) -> None:
    """Folder B holds the sessions folder A held; A's files are deleted. B's import found
    them stored (unchanged), then a sync of A removed them (it read the ledger before B's
    marks were kept), then B kept its marks: the sessions were gone for good, every later
    import of B skipping them as unchanged."""
    a, b, held = _a_deleted(db, tmp_path)
    outcome = await _beside_pruning(db, a, lambda store, ledger: run_import(
        TranscriptImporter(CLAUDE_CODE, b), store, ledger))
    assert outcome.error is None
    assert _stored(db) == held
    again = harkback("import", "claude-code", str(b), "--db", db)
    assert again.returncode == 0, again.stderr
    assert _stored(db) == held


class _WrittenMeanwhile:
    """A real store that runs ``meanwhile`` once, just before its first ingest: where
    another process's import lands between an import's comparison and its write."""

    def __init__(self, store: SessionStore, meanwhile: Callable[[], None]) -> None:
        self._store = store
        self._meanwhile: Callable[[], None] | None = meanwhile

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def ingest(self, conversations: Sequence[Conversation]
               ) -> FutureResult[IngestReport, StoreUnavailable]:
        meanwhile, self._meanwhile = self._meanwhile, None
        if meanwhile is not None:
            meanwhile()
        return self._store.ingest(conversations)


async def test_two_imports_at_once_count_each_session_added_once(db: str, tmp_path: Path
                                                                 ) -> None:
    """Two imports of one history at the same time both compared before either wrote:
    both said every session was added, though one copy of each is stored. The one that
    wrote second now counts them updated (its copy replaced the other's) and says why."""
    projects = _projects(tmp_path / "projects")
    other: list[dict[str, Any]] = []

    def import_meanwhile() -> None:
        done = harkback("import", "claude-code", str(projects), "--db", db, "--json")
        other.append(json.loads(done.stdout)["sources"][0])

    store = open_store(db).unwrap()
    try:
        ledger = store.import_ledger()
        assert ledger is not None
        outcome = await run_import(TranscriptImporter(CLAUDE_CODE, projects),
                                   cast(SessionStore, _WrittenMeanwhile(store, import_meanwhile)),
                                   ledger, full=True)
    finally:
        store.close()
    assert outcome.error is None
    counted = harkback("stats", "--db", db, "--json")
    stored = json.loads(counted.stdout)["sessions"]
    assert other[0]["sessions"]["added"] == stored  # the first writer added them all
    assert outcome.delta.sessions_added == 0
    assert outcome.delta.sessions_updated == stored
    assert outcome.delta.messages_added == 0
    assert outcome.notes[-1] == (
        f"{stored} session(s) were stored by another import running at the same time; "
        "this run's copy replaced them (counted updated, not added)")


async def test_sessions_stored_again_after_a_removal_meanwhile_are_embedded_by_the_sync(
        db: str, tmp_path: Path) -> None:
    """embed36: the sessions a sync stores again because a sync of another folder pruned
    them meanwhile (:mod:`~harkback.pipeline.import_restore`) come back without vectors,
    but were not among what the sync stored (its report's ``stored``, what it embeds):
    left without vectors, unsaid. They are now."""
    a, b, held = _a_deleted(db, tmp_path)
    report = await _beside_pruning(db, a, lambda store, ledger: sync_one(
        TranscriptImporter(CLAUDE_CODE, b), store, ledger))
    assert report.status == "synced", report.error
    assert (report.new, report.updated) == (0, 0)  # compared: all stored, unchanged
    counted = json.loads(harkback("stats", "--db", db, "--json").stdout)["sessions"]
    # Every session was pruned and stored again: each is among what the sync embeds.
    assert held < report.stored and len(report.stored) == counted
