"""A Hermes ``state.db`` of the rollback-journal era (v9) left with a hot ``-journal``: Hermes
was killed in the middle of a write. Only a writer may roll it back, and harkback never
writes Hermes' file, so ``import hermes`` says what happened and what to do, and leaves
both files as they were."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.pipeline.test_cli import run
from tests.support.hermes_db import HermesFile

KILLED_WRITE = """
import os, signal, sqlite3, sys
connection = sqlite3.connect(sys.argv[1], isolation_level=None)
connection.execute("PRAGMA cache_size = 2")  # pages spill into the file before COMMIT
connection.execute("BEGIN")
connection.execute("UPDATE messages SET content = 'edited ' || content")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_an_interrupted_hermes_write_is_named_and_left_to_hermes(tmp_path: Path) -> None:
    """exit 1; the line names the interrupted write and Hermes, not a "readonly database"
    harkback never meant to write; state.db and its journal unchanged."""
    state = tmp_path / "state.db"
    hermes = HermesFile(state, "v9")
    for number in range(100):
        hermes.session(f"h{number}", title=f"Docker {number}")
        hermes.message(f"h{number}", "user", f"the docker bridge lost its dns {number} " * 40)
    hermes.close()
    killed = subprocess.run([sys.executable, "-c", KILLED_WRITE, str(state)], check=False)
    assert killed.returncode < 0 and Path(f"{state}-journal").stat().st_size > 0
    before = state.read_bytes(), Path(f"{state}-journal").read_bytes()
    done = run("import", "hermes", str(state), db=tmp_path / "h.db")
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "interrupted" in line and "Hermes" in line and "readonly" not in line, line
    assert (state.read_bytes(), Path(f"{state}-journal").read_bytes()) == before
