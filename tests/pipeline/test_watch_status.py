"""The status ``sync --watch`` ends with when Ctrl-C stops it: the one ``sync`` would give,
failed while a source's last sync had failed."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.pipeline.sync_home import make_home
from tests.pipeline.test_sync_process import watching


def test_a_watch_stopped_while_a_source_still_fails_ends_failed(tmp_path: Path) -> None:
    """Claude Code's folder (found by default) cannot be read, and never can while the watch
    runs: the watch tries it again every round, and Ctrl-C ended it with status 3 (done with
    skips, from the other sources' damaged lines), as if all had been synced. Now 1."""
    home = make_home(tmp_path / "home")
    projects = home / ".claude" / "projects"
    projects.chmod(0)
    try:
        with watching(home, tmp_path / "h.db") as watcher:
            assert watcher.stderr is not None
            lines = [watcher.stderr.readline()]
            while not lines[-1].startswith("watching ") and lines[-1]:
                lines.append(watcher.stderr.readline())
            assert any("sync of claude-code" in line and "trying it again" in line
                       for line in lines), lines
            watcher.send_signal(signal.SIGINT)
            _, err = watcher.communicate(timeout=60)
    finally:
        projects.chmod(0o755)
    assert watcher.returncode == 1, err
    assert "Traceback" not in err and err.rstrip().endswith("stopped watching")
