"""An ingest into a store whose folder this user may not write: the one line it is refused
with. As root, the command runs without the capabilities that let root write any folder
(``BOUND``), so the folder's permissions hold for it as for any user."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.pipeline.test_sync_process import BOUND


def refused_in_closed_folder(folder: Path, source: Path, db: Path) -> str:
    """The one line ``harkback ingest SOURCE --db DB`` ends with (status 1) while ``folder``
    may not be written (mode 0555); the folder is writable again after."""
    folder.chmod(0o555)
    try:
        done = subprocess.run([*BOUND, sys.executable, "-m", "harkback.pipeline.cli", "ingest",
                               str(source), "--db", str(db)],
                              capture_output=True, text=True, timeout=120, check=False)
    finally:
        folder.chmod(0o755)
    assert done.returncode == 1, done.stderr
    (line,) = done.stderr.splitlines()
    return line
