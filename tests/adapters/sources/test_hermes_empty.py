"""A Hermes ``state.db`` of 0 bytes, and its ``-wal`` file: empty, or commits that cannot be
read, each told apart; a ``-wal`` removed while it is looked at is none."""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.result import Failure, Result, Success

from harkback.adapters.sources.hermes import HermesImporter
from harkback.adapters.sources.importing import ImportPlan
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import SourceKey, SourceState
from tests.support.hermes_db import HermesFile

SID = "20260303_100000_aa11bb"


def _plan(path: Path, state: SourceState | None = None
          ) -> Result[ImportPlan, StoreUnavailable]:
    key = SourceKey(kind="hermes", location=str(path))
    return HermesImporter(path).plan(state or SourceState(key=key), full=False)


def _contents(planned: Result[ImportPlan, StoreUnavailable]) -> list[str]:
    units = [step.unwrap() for step in planned.unwrap().units]
    return [m.content for unit in units for c in unit.conversations for m in c.messages]


def _running(path: Path) -> HermesFile:
    """A Hermes file holding one session, and a writer on it that keeps its commits in the
    -wal (as a running Hermes does until it checkpoints)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = HermesFile(path, "v30")
    db.session(SID, title="Docker")
    db.message(SID, "user", "the docker bridge has no DNS")
    db.close()
    writer = HermesFile.reopen(path, "v30")
    writer.connection.execute("PRAGMA wal_autocheckpoint = 0")
    writer.message(SID, "user", "what about the macvlan driver")
    return writer


@pytest.fixture
def wal_bytes(tmp_path: Path) -> bytes:
    """The -wal of a running Hermes: a header, then frames holding commits."""
    path = tmp_path / "running" / "state.db"
    writer = _running(path)
    try:
        return Path(f"{path}-wal").read_bytes()
    finally:
        writer.close()


def test_a_wal_holding_only_its_header_beside_an_empty_file_is_empty(
        tmp_path: Path, wal_bytes: bytes) -> None:
    """A -wal of 32 bytes holds no commit: the 0-byte database is empty (a note), not
    "not a SQLite database"; nothing is opened or made beside it."""
    path = tmp_path / "empty" / "state.db"
    path.parent.mkdir()
    path.touch()
    Path(f"{path}-wal").write_bytes(wal_bytes[:32])
    planned = _plan(path)
    assert isinstance(planned, Success), planned
    assert "is empty" in planned.unwrap().notes[0]
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.db", "state.db-wal"]


def test_commits_in_the_wal_of_an_empty_file_are_named_not_misread(
        tmp_path: Path, wal_bytes: bytes) -> None:
    """A 0-byte database whose -wal holds commits (SQLite reads a -wal only beside its
    database's pages) fails naming the -wal, not "is not a SQLite database"; both files
    are left as they were."""
    path = tmp_path / "state.db"
    path.touch()
    Path(f"{path}-wal").write_bytes(wal_bytes)
    planned = _plan(path)
    assert isinstance(planned, Failure), planned
    reason = planned.failure().reason
    assert "state.db-wal holds commits" in reason and "not a SQLite" not in reason
    assert (path.stat().st_size, Path(f"{path}-wal").read_bytes()) == (0, wal_bytes)


def test_a_wal_removed_as_it_is_looked_at_leaves_an_empty_file_empty(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hermes' last connection checkpoints and removes its -wal at any moment: one removed
    just after it was seen is no -wal (the database is empty), not "cannot read state.db:
    No such file or directory"."""
    path = tmp_path / "state.db"
    path.touch()
    wal = Path(f"{path}-wal")
    wal.write_bytes(b"")
    seen = Path.exists

    def seen_then_removed(self: Path, **options: bool) -> bool:
        found = seen(self, **options)
        if self == wal and found:
            wal.unlink()  # the checkpoint that ends Hermes, right after the look
        return found
    monkeypatch.setattr(Path, "exists", seen_then_removed)
    planned = _plan(path)
    assert isinstance(planned, Success), planned
    assert "is empty" in planned.unwrap().notes[0]


def test_a_database_named_through_a_symlink_notices_its_wal_growing(tmp_path: Path) -> None:
    """A state.db given as a symlink has its -wal beside the file it names: commits added
    there are seen by the next import, not taken for "unchanged" until a checkpoint."""
    real = tmp_path / "real" / "state.db"
    writer = _running(real)
    try:
        link = tmp_path / "state.db"
        link.symlink_to(real)
        first = _plan(link)
        key = SourceKey(kind="hermes", location=str(link))
        state = SourceState(key=key, marks=next(iter(first.unwrap().units)).unwrap().marks)
        writer.message(SID, "assistant", "macvlan gives each container its own MAC")
        again = _contents(_plan(link, state))
    finally:
        writer.close()
    assert "macvlan gives each container its own MAC" in again
