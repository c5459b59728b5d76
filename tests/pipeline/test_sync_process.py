"""``harkback sync`` run as a command: unreadable folders, and ``--watch`` end to end.

File permissions bind only a process without the capability to override them: as
root, the command runs under ``setpriv`` with ``CAP_DAC_OVERRIDE`` and
``CAP_DAC_READ_SEARCH`` dropped, so a folder made unreadable really is.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.sync_home import (
    CLAUDE_FILE,
    CLAUDE_SESSION,
    DONE_WITH_SKIPS,
    claude_line,
    found_ids,
    make_home,
    repair,
)

BOUND = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"] if os.geteuid() == 0 \
    else []


def command(home: Path, db: Path, *flags: str) -> list[str]:
    """The ``harkback sync`` command line for ``home`` and ``db``."""
    return [*BOUND, sys.executable, "-m", "harkback.pipeline.cli", "sync", "--db", str(db),
            *flags]


def environment(home: Path) -> dict[str, str]:
    """A clean environment whose HOME is ``home``."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "PYTHONUNBUFFERED": "1"}


def run(home: Path, db: Path, *flags: str) -> tuple[int, dict[str, Any], str]:
    """Run ``harkback sync --json``; its status, payload and stderr."""
    done = subprocess.run(command(home, db, "--json", *flags), env=environment(home),
                          capture_output=True, text=True, timeout=120, check=False)
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    """A home with every agent's history; any folder a test locks is unlocked after."""
    made = make_home(tmp_path / "home")
    yield made
    for folder in made.rglob("*"):
        if folder.is_dir():
            folder.chmod(0o755)
    made.joinpath(".claude", "projects").chmod(0o755)


def _report(payload: dict[str, Any], kind: str) -> dict[str, Any]:
    (report,) = [s for s in payload["sources"] if s["kind"] == kind]
    found: dict[str, Any] = report
    return found


def test_an_unreadable_folder_fails_its_source_only(home: Path, tmp_path: Path) -> None:
    """The folder is named as unreadable; the other sources are synced; exit status 1."""
    projects = home / ".claude" / "projects"
    projects.chmod(0)
    status, payload, _ = run(home, tmp_path / "h.db")
    claude = _report(payload, "claude-code")
    assert (status, payload["success"], claude["status"]) == (1, False, "failed")
    assert claude["error"] == f"cannot list {projects}: Permission denied"
    assert _report(payload, "codex")["status"] == "synced"
    assert _report(payload, "hermes")["sessions"]["new"] == 1


@pytest.mark.parametrize("kind", ["a named pipe (FIFO)", "a folder"])
def test_a_hermes_state_db_that_is_no_file_is_named_for_what_it_is(
        home: Path, tmp_path: Path, kind: str) -> None:
    """A FIFO or a folder named ``state.db`` was passed over: sync said "no agent history
    found" (or, as here with the others there, "not found"), and ``import hermes`` said
    "no Hermes state.db". Its source fails naming what it is; the others are synced."""
    state = home / ".hermes" / "state.db"
    state.unlink()
    os.mkfifo(state) if kind.startswith("a named") else state.mkdir()
    status, payload, _ = run(home, tmp_path / "h.db")
    hermes = _report(payload, "hermes")
    assert (status, hermes["status"], hermes["error"]) == (
        1, "failed", f"{state} is {kind}, not a Hermes state.db file")
    assert _report(payload, "codex")["status"] == "synced"
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "import", "hermes",
                           str(home / ".hermes"), "--db", str(tmp_path / "h.db")],
                          env=environment(home), capture_output=True, text=True, timeout=60,
                          check=False)
    assert (done.returncode, done.stderr) == (1, f"harkback: import of {state} stopped: "
                                              f"source unreadable: {state} is {kind}, not a "
                                              "Hermes state.db file\n")


def test_a_source_that_failed_is_one_line_on_stderr(home: Path, tmp_path: Path) -> None:
    """Exit 1 with nothing on stderr: the failure was only in the table or the payload."""
    projects = home / ".claude" / "projects"
    projects.chmod(0)
    status, _, stderr = run(home, tmp_path / "h.db")
    assert status == 1
    failed = [line for line in stderr.splitlines() if not line.endswith("(skipped)")]
    assert failed == [f"harkback: sync of claude-code at {projects} failed: cannot list "
                      f"{projects}: Permission denied"]


def test_a_folder_that_became_unreadable_keeps_its_sessions(home: Path, tmp_path: Path
                                                            ) -> None:
    """Files that cannot be seen any more are not taken for deleted: nothing is removed."""
    db = tmp_path / "h.db"
    assert run(home, db)[0] == DONE_WITH_SKIPS
    project = (home / ".claude" / "projects" / CLAUDE_FILE).parent
    project.chmod(0)
    status, payload, _ = run(home, db)
    claude = _report(payload, "claude-code")
    assert (status, claude["sessions"]["removed"]) == (DONE_WITH_SKIPS, 0)
    assert any("cannot be seen" in note for note in claude["notes"])
    project.chmod(0o755)
    assert found_ids(db, "refresh path untested") == [CLAUDE_SESSION]


def test_an_unreadable_folder_among_the_transcripts_is_named(home: Path, tmp_path: Path
                                                             ) -> None:
    """A project folder that cannot be listed is named as damaged input (status 3), its
    sessions found once it can be read; it was passed over without a word, status 0."""
    project = (home / ".claude" / "projects" / CLAUDE_FILE).parent
    project.chmod(0)
    db = tmp_path / "h.db"
    status, payload, stderr = run(home, db)
    claude = _report(payload, "claude-code")
    assert status == DONE_WITH_SKIPS
    assert {"file": str(project), "line": None, "reason": "unreadable folder: Permission denied",
            "outcome": "skipped"} in claude["skipped_lines"]
    assert f"harkback: {project}: unreadable folder: Permission denied (skipped)" in stderr
    assert found_ids(db, "refresh path untested") == []
    project.chmod(0o755)
    run(home, db)
    assert found_ids(db, "refresh path untested") == [CLAUDE_SESSION]


def test_a_session_whose_file_was_damaged_goes_when_the_file_goes(home: Path,
                                                                  tmp_path: Path) -> None:
    """A transcript overwritten by what is not JSON keeps its stored session (the damage
    named), and deleting the file later removes that session (sync --prune) as it removes
    any other: the file's mark stopped naming it, and it stayed in the store for good."""
    db = tmp_path / "h.db"
    assert run(home, db)[0] == DONE_WITH_SKIPS
    path = home / ".claude" / "projects" / CLAUDE_FILE
    path.write_bytes(b"\x00\x9c not a transcript any more\n")
    assert run(home, db)[0] == DONE_WITH_SKIPS
    assert found_ids(db, "refresh path untested") == [CLAUDE_SESSION]
    path.unlink()
    status, payload, _ = run(home, db, "--prune")
    assert (status, _report(payload, "claude-code")["sessions"]["removed"]) == (0, 1)
    assert CLAUDE_SESSION not in found_ids(db, "refresh path untested")


@contextlib.contextmanager
def running(argv: list[str], home: Path) -> Iterator[subprocess.Popen[str]]:
    """``argv`` running in ``home``'s environment, its output piped; killed on the way out
    if still running."""
    process = subprocess.Popen(argv, env=environment(home), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


@contextlib.contextmanager
def watching(home: Path, db: Path, *flags: str) -> Iterator[subprocess.Popen[str]]:
    """``harkback sync --watch`` running on ``home``; killed on the way out if still running."""
    with running(command(home, db, "--watch", *flags), home) as watcher:
        yield watcher


def stop_once_found(watcher: subprocess.Popen[str], db: Path, word: str,
                    session: str = CLAUDE_SESSION) -> tuple[str, str]:
    """Wait (up to 30 s) until ``word`` is found in ``session`` (the appended Claude Code
    session), then Ctrl-C the watcher (killed if it does not end); its stdout and stderr."""
    appended = time.monotonic()
    while (watcher.poll() is None and not found_ids(db, word)
           and time.monotonic() - appended < 30):
        time.sleep(0.05)
    found = found_ids(db, word)
    if watcher.poll() is None:
        watcher.send_signal(signal.SIGINT)
    try:
        out, err = watcher.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        watcher.kill()
        out, err = watcher.communicate()
    assert found == [session], err
    return out, err


def test_watch_picks_up_an_appended_message_and_stops_on_ctrl_c(home: Path, tmp_path: Path
                                                                 ) -> None:
    """An appended Claude Code message becomes searchable without another command (how
    fast, against the 2 s target, is `benchmarks.sync`'s); SIGINT ends the watch with no
    traceback, and status 3 (done with skips) as sync's: the fixtures hold damaged lines."""
    db = tmp_path / "h.db"
    with watching(home, db) as watcher:
        assert watcher.stderr is not None
        line = watcher.stderr.readline()  # printed once the first sync is done
        while line.endswith("(skipped)\n"):  # the fixtures' damaged lines, named first
            line = watcher.stderr.readline()
        assert line.startswith("watching "), line
        path = home / ".claude" / "projects" / CLAUDE_FILE
        with path.open("a", encoding="utf-8") as handle:
            handle.write(claude_line(CLAUDE_SESSION, "the axolotl gateway times out", "u-new"))
        out, err = stop_once_found(watcher, db, "axolotl")
    assert watcher.returncode == DONE_WITH_SKIPS, err
    assert "Traceback" not in err and err.rstrip().endswith("stopped watching")
    assert "claude-code: 0 new, 1 updated, 0 removed" in out


def test_watch_names_what_a_re_sync_skipped_and_ends_with_3(home: Path, tmp_path: Path
                                                             ) -> None:
    """From a clean first sync, a damaged line appended while watching is named file:line
    as the re-sync meets it, the lines after it are still read, and Ctrl-C ends the watch
    with 3 (done with skips), as sync would."""
    repair(home)
    db = tmp_path / "h.db"
    path = home / ".claude" / "projects" / CLAUDE_FILE
    with watching(home, db) as watcher:
        assert watcher.stderr is not None
        line = watcher.stderr.readline()
        assert line.startswith("watching "), line  # the repaired first sync skipped nothing
        damaged = len(path.read_text(encoding="utf-8").splitlines()) + 1
        with path.open("a", encoding="utf-8") as handle:
            handle.write('{"type": "user", "sessionId": \n')
            handle.write(claude_line(CLAUDE_SESSION, "the capybara cache is stale", "u-cap"))
        _, err = stop_once_found(watcher, db, "capybara")
    assert f"harkback: {path}:{damaged}: unreadable line: not JSON (skipped)\n" in err
    assert watcher.returncode == DONE_WITH_SKIPS, err


def test_watch_with_a_named_source_missing_fails_at_once(tmp_path: Path) -> None:
    """A flag naming no source is exit 1 for ``sync``; with ``--watch`` too, rather than
    watching nothing until Ctrl-C."""
    empty = tmp_path / "empty-home"
    empty.mkdir()
    done = subprocess.run(command(empty, tmp_path / "w.db", "--watch", "--hermes",
                                  str(tmp_path / "missing")),
                          env=environment(empty), capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "watching" not in done.stderr


def watching_started(watcher: subprocess.Popen[str]) -> None:
    """Read the watcher's stderr up to its ``watching`` line (past the damaged lines named)."""
    assert watcher.stderr is not None
    line = watcher.stderr.readline()
    while line.endswith("(skipped)\n"):
        line = watcher.stderr.readline()
    assert line.startswith("watching "), line


@pytest.mark.parametrize("how", ["deleted", "moved", "replaced"])
def test_a_store_deleted_or_replaced_under_the_watch_stops_it(home: Path, tmp_path: Path,
                                                                how: str) -> None:
    """SQLite writes on to the file it opened: the watch went on "updating" a deleted store
    (or the one a new file replaced) for good, each re-sync lost. Now it stops at once,
    one line and status 1."""
    db = tmp_path / "h.db"
    with watching(home, db) as watcher:
        watching_started(watcher)
        if how == "replaced":
            # Renamed over it, as a restored backup is: the name never leads nowhere. (Deleted
            # then made again, a watch checking in between rightly said "was deleted".)
            other = tmp_path / "other.db"
            other.write_bytes(b"")
            other.replace(db)
        elif how == "moved":  # mv to another name: "was deleted" sent the user looking
            db.rename(tmp_path / "moved.db")
        else:
            db.unlink()
        try:
            _, err = watcher.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail("the watch went on after its store was " + how)
    assert watcher.returncode == 1, err
    became = "was replaced by another file" if how == "replaced" else "was deleted or moved away"
    assert err.endswith(f"harkback: the store {db} {became} while harkback wrote to it; "
                        "stopped (run the command again to fill the file there now)\n"), err


def test_watch_starts_when_a_default_source_fails_and_tries_it_again(home: Path,
                                                                      tmp_path: Path) -> None:
    """Claude Code's folder (found where it is looked for by default) cannot be read: the
    watch refused to start (exit 1). It starts now, says in one line that it watches the
    others and tries that one again, and once the folder can be read its sessions come in
    without another command."""
    projects = home / ".claude" / "projects"
    projects.chmod(0)
    db = tmp_path / "h.db"
    with watching(home, db) as watcher:
        assert watcher.stderr is not None
        lines = [watcher.stderr.readline()]
        while not lines[-1].startswith("watching ") and lines[-1]:
            lines.append(watcher.stderr.readline())
        failed = [line for line in lines if "claude-code" in line]
        assert failed == [f"harkback: sync of claude-code at {projects} failed: cannot list "
                          f"{projects}: Permission denied; watching the others, trying it "
                          "again every 2 s\n"], lines
        assert lines[-1].startswith("watching "), lines
        assert found_ids(db, "refresh path untested") == []
        projects.chmod(0o755)
        out, err = stop_once_found(watcher, db, "refresh path untested")
    assert "Traceback" not in err and err.rstrip().endswith("stopped watching")
    assert re.search(r"^\S+ claude-code: [1-9]\d* new, ", out, re.MULTILINE), out
