"""A repair killed midway leaves the file as it was: the rebuild is one transaction."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harkback.adapters.stores.sqlite_check import check
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested
from tests.pipeline.test_cli_check import _unindexed

KILLED = """
import os, signal, sys
from pathlib import Path
from harkback.adapters.stores import sqlite_repair

calls = 0
def index_body(text):
    global calls
    calls += 1
    if calls == 30:  # the index emptied and partly filled again: die there
        os.kill(os.getpid(), signal.SIGKILL)
    return text
sqlite_repair.index_body = index_body
sqlite_repair.repair(Path(sys.argv[1]))
"""


def test_a_repair_killed_midway_leaves_the_old_state(tmp_path: Path) -> None:
    db = ingested(tmp_path, [conversation(f"s{i}", ("user", f"docker {i}"), title=f"t {i}")
                             for i in range(40)]
                  + [conversation("needle", ("user", "kubernetes"), title="quokka")])
    _unindexed(db)
    before = check(db)
    killed = subprocess.run([sys.executable, "-c", KILLED, str(db)], check=False, timeout=120)
    assert killed.returncode == -9
    after = check(db)  # a read-only open reads past the killed writer's uncommitted pages
    assert (after.damaged, after.fine) == (before.damaged, before.fine)
    assert "1 of 41 messages are missing" in " ".join(after.damaged)
