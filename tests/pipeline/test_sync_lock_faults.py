"""The PostgreSQL sync lock when the server stops answering: the lock's own connection is
bounded as the store's are, so a ``sync`` whose server freezes while it writes, or while
it waits its turn, ends in one line within a bound."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import psycopg

from tests.pipeline.sync_home import CLAUDE_SESSION, claude_line
from tests.pipeline.test_cli_postgres_faults import BOUND_S, _ended, _waiting_for_a_lock
from tests.pipeline.test_import_cli import harkback
from tests.pipeline.test_sync_lock import holding
from tests.pipeline.test_sync_process import environment
from tests.support.postgres_server import start_server


def _small_home(home: Path) -> Path:
    """A home holding one Claude Code transcript of a few lines, and no other agent."""
    folder = home / ".claude" / "projects" / "-home-mei-code-youer-server"
    folder.mkdir(parents=True)
    (folder / f"{CLAUDE_SESSION}.jsonl").write_text("".join(
        claude_line(CLAUDE_SESSION, f"the pelican gateway times out {i}", f"u{i}")
        for i in range(5)), encoding="utf-8")
    return home


def test_a_sync_whose_server_freezes_ends_in_one_line(tmp_path: Path) -> None:
    """The server's processes stopped while the sync's write waits on it: the write failed
    in one line, then the sync waited for good to give the lock back (its connection had
    no bound). Now it ends within the bound, one line, status 1."""
    home = _small_home(tmp_path / "home")
    server = start_server()
    try:
        url = server.create_database("frozen_sync") + "&connect_timeout=2"
        assert harkback("migrate", "--db", url).returncode == 0
        with psycopg.connect(url) as blocker:
            # Its reads go on; its first write to the sessions waits, on the server.
            blocker.execute("LOCK TABLE sessions IN SHARE MODE")
            syncing = subprocess.Popen(
                [sys.executable, "-m", "harkback.pipeline.cli", "sync", "--db", url, "--json"],
                env=environment(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True)
            _waiting_for_a_lock(url)
            with server.frozen():
                took, err = _ended(syncing)
        assert syncing.returncode == 1, err
        (line,) = err.splitlines()
        assert line.startswith("harkback: sync of claude-code at ") and \
            "cannot reach the PostgreSQL server" in line, line
        assert took < BOUND_S
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)



def test_a_sync_waiting_its_turn_when_the_server_freezes_ends_in_one_line(
        tmp_path: Path) -> None:
    """Another process holds the lock and the server's processes stop while a sync waits
    its turn: the sync's next try of the lock waited for good. Now it gives up within the
    bound, in one line after the one saying it waits."""
    home = _small_home(tmp_path / "home")
    server = start_server()
    try:
        url = server.create_database("frozen_turn") + "&connect_timeout=2"
        with holding(url):
            syncing = subprocess.Popen(
                [sys.executable, "-m", "harkback.pipeline.cli", "sync", "--db", url, "--json"],
                env=environment(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True)
            assert syncing.stderr is not None
            waits = syncing.stderr.readline()
            assert waits.startswith("harkback: another sync or import is writing to "), waits
            with server.frozen():
                took, err = _ended(syncing)
        assert syncing.returncode == 1, err
        (line,) = err.splitlines()
        assert line == ("harkback: cannot lock the store at postgresql://harkback@/frozen_turn"
                        f"?host={server.socket_dir} for writing: no answer for 2 s, nor to a "
                        "new connection within 2 s (is the server stopped, or out of "
                        "reach?)"), line
        assert took < BOUND_S
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
