"""The status ``sync --watch`` ends with when Ctrl-C stops it: the one ``sync`` would give,
failed while a source's last sync had failed."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from tests.pipeline.sync_home import make_home
from tests.pipeline.test_sync_process import watching


@pytest.mark.parametrize("unreadable", [".claude/projects", ".claude"])
def test_a_watch_stopped_while_a_source_still_fails_ends_failed(tmp_path: Path,
                                                                unreadable: str) -> None:
    """Claude Code's folder (found by default) cannot be read, and never can while the watch
    runs: the watch tries it again every round, and Ctrl-C ended it with status 3 (done with
    skips, from the other sources' damaged lines), as if all had been synced. Now 1.
    With ``~/.claude`` itself unreadable the source was taken for one a flag named: the
    watch did not start at all (status 1 at once) and the summary said "not found"."""
    home = make_home(tmp_path / "home")
    projects = home / unreadable
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
            out, err = watcher.communicate(timeout=60)
    finally:
        projects.chmod(0o755)
    assert watcher.returncode == 1, err
    assert "found: hermes, claude-code, codex\n" in out, out
    assert "Traceback" not in err and err.rstrip().endswith("stopped watching")


def test_a_source_behind_an_unreadable_folder_is_synced_once_it_can_be_read(
        tmp_path: Path) -> None:
    """``~/.claude`` unreadable at the start, readable a moment later: the watch (started,
    now) syncs Claude Code's sessions then, and no longer counts it failing, so Ctrl-C
    ends it as sync would (3: the fixtures hold damaged lines), not 1."""
    home = make_home(tmp_path / "home")
    claude = home / ".claude"
    claude.chmod(0)
    try:
        with watching(home, tmp_path / "h.db") as watcher:
            assert watcher.stderr is not None and watcher.stdout is not None
            line = watcher.stderr.readline()
            while line and not line.startswith("watching "):
                line = watcher.stderr.readline()
            claude.chmod(0o755)
            # A bound on the wait: Ctrl-C after 60 s ends the output if the line never came.
            bound = threading.Timer(60, watcher.send_signal, (signal.SIGINT,))
            bound.start()
            synced = next((line for line in watcher.stdout if " claude-code: " in line), "")
            bound.cancel()
            watcher.send_signal(signal.SIGINT)
            _, err = watcher.communicate(timeout=60)
    finally:
        claude.chmod(0o755)
    assert " claude-code: " in synced and " new" in synced, synced
    assert watcher.returncode == 3, err
