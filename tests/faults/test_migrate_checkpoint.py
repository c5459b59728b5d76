"""``harkback migrate`` under ``ulimit -f`` just above the store's size: the migration
commits in the ``-wal``, then the checkpoint that copies it into the file cannot grow the
file. SQLite's close says nothing of it, and migrate said only "1 -> 5", exit 0, leaving the
log behind; now a note says so, why, and that the store is whole."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from functools import partial
from pathlib import Path

from harkback.adapters.stores.sql.schema import SCHEMA_VERSION as LATEST
from tests.adapters.stores.old_files import old_file
from tests.conftest import conversation
from tests.faults.test_cannot_open_causes import _version


def _migrate(db: Path, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harkback.pipeline.cli", "migrate", "--db", str(db), "--json"],
        capture_output=True, text=True, timeout=120, check=False, stdin=subprocess.DEVNULL,
        preexec_fn=None if limit is None else partial(
            resource.setrlimit, resource.RLIMIT_FSIZE, (limit, limit)))


def test_a_checkpoint_stopped_by_the_file_size_limit_is_noted(tmp_path: Path) -> None:
    """Exit 0 (migrated, whole), one note on stderr and in ``notes``; the next writer,
    under no limit, copies the log into the file."""
    db = tmp_path / "h.db"
    old_file(db, [conversation(f"s{i}", ("user", f"the docker bridge lost its dns {i} " * 20),
                               ("assistant", "recreate the network " * 30))
                  for i in range(200)])
    limit = db.stat().st_size + (8 << 10)  # room for the log, not for the file to grow
    done = _migrate(db, limit)
    assert done.returncode == 0, done.stderr
    note = (f"the store is whole at schema version {LATEST}, but its checkpoint did not finish "
            f"(disk I/O error (this process may write files of at most {limit:,} bytes; "
            f"raise the limit, ulimit -f, if a file of the store reached it): {db} (disk I/O "
            f"error)): its last commits stay in {db}-wal, which the next command that writes "
            f"the store copies into the file")
    assert done.stderr.splitlines() == [f"harkback: note: {note}"]
    payload = json.loads(done.stdout)
    assert (payload["from"], payload["to"], payload["notes"]) == (1, LATEST, [note])
    assert Path(f"{db}-wal").stat().st_size > 0
    assert _version(db) == LATEST
    again = _migrate(db)
    assert (again.returncode, again.stderr) == (0, "")
    assert not Path(f"{db}-wal").exists()
    assert db.stat().st_size > limit
