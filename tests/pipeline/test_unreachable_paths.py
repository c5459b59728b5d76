"""Paths under a folder that cannot be entered: Python's ``Path.is_file()`` raises
``PermissionError`` there (it does not answer False), which ended commands as internal
errors (exit 70). As in ``test_sync_process``, under root the command runs with
``CAP_DAC_OVERRIDE`` and ``CAP_DAC_READ_SEARCH`` dropped, so the folder really is closed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import conversation
from tests.pipeline.sync_home import FIXTURES, make_home
from tests.pipeline.test_cli import ingested
from tests.pipeline.test_sync_process import BOUND, command, run, running

FAILED = 1


def harkback(*args: str) -> subprocess.CompletedProcess[str]:
    """``harkback ARGS`` without the capabilities that ignore file permissions."""
    env = {k: v for k, v in os.environ.items() if k != "HARKBACK_DB"}
    return subprocess.run([*BOUND, sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.fixture
def closed(tmp_path: Path) -> Iterator[Path]:
    """A folder holding a store, a JSON-lines file and a Hermes file, then closed (mode 0)."""
    folder = tmp_path / "closed"
    folder.mkdir()
    source = ingested(folder, [conversation("s1", ("user", "the docker bridge drops"))])
    (folder / "state.db").write_bytes(source.read_bytes())
    folder.chmod(0)
    yield folder
    folder.chmod(0o755)


@pytest.mark.parametrize("command", [
    ("ingest", "{closed}/sessions.jsonl", "--db", "{tmp}/new.db"),
    ("import", "jsonl", "{closed}/sessions.jsonl", "--db", "{tmp}/new.db"),
    ("import", "hermes", "{closed}/state.db", "--db", "{tmp}/new.db"),
    ("search", "docker", "--db", "{closed}/h.db"),
    ("stats", "--db", "{closed}/h.db"),
])
def test_a_path_in_a_closed_folder_is_one_line_naming_it(
        closed: Path, tmp_path: Path, command: tuple[str, ...]) -> None:
    """Exit 1 and one line naming the path and why, as JSON too; no internal error."""
    args = [part.format(closed=closed, tmp=tmp_path) for part in command]
    named = next(a for a in args if a.startswith(str(closed)))
    done = harkback(*args)
    assert (done.returncode, done.stderr) == (FAILED, f"harkback: {named}: Permission denied\n")
    as_json = harkback(*args, "--json")
    assert as_json.returncode == FAILED, as_json.stderr
    assert json.loads(as_json.stdout) == {"success": False,
                                          "error": f"{named}: Permission denied"}
    assert not (tmp_path / "new.db").exists()


def test_sync_with_a_home_folder_that_cannot_be_entered_fails_that_source_only(
        tmp_path: Path) -> None:
    """``~/.hermes`` closed: Hermes failed and named, the other sources synced, exit 1."""
    home = make_home(tmp_path / "home")
    (home / ".hermes").chmod(0)
    try:
        status, payload, err = run(home, tmp_path / "h.db")
    finally:
        (home / ".hermes").chmod(0o755)
    reports = {r["kind"]: r for r in payload["sources"]}
    assert (status, payload["success"]) == (FAILED, False), err
    assert reports["hermes"]["status"] == "failed"
    assert reports["hermes"]["error"] == f"cannot read {home / '.hermes'}: Permission denied"
    assert [reports[k]["status"] for k in ("claude-code", "codex")] == ["synced", "synced"]
    assert "internal error" not in err


@pytest.mark.parametrize("closed_folder", ["profiles", "profiles/work"])
def test_a_hermes_profile_that_cannot_be_read_is_named_not_passed_over(
        tmp_path: Path, closed_folder: str) -> None:
    """A Hermes home's ``profiles`` folder, or one profile's, closed: the sync said nothing
    of it (the profile was left out as if it were not there) and ended as done; now it
    fails naming the folder (the profile's database), and the other sources sync."""
    home = make_home(tmp_path / "home")
    (home / ".hermes" / "profiles" / "work").mkdir(parents=True)
    (home / ".hermes" / "profiles" / "work" / "state.db").write_bytes(
        (home / ".hermes" / "state.db").read_bytes())
    (home / ".hermes" / closed_folder).chmod(0)
    try:
        status, payload, err = run(home, tmp_path / "h.db")
    finally:
        (home / ".hermes" / closed_folder).chmod(0o755)
    assert (status, payload["success"]) == (FAILED, False), err
    (failed,) = [r for r in payload["sources"] if r["status"] == "failed"]
    named = (home / ".hermes" / "profiles" if closed_folder == "profiles"
             else home / ".hermes" / "profiles" / "work" / "state.db")
    assert (failed["kind"], failed["error"]) == (
        "hermes", f"cannot read {named}: Permission denied")
    assert {r["kind"] for r in payload["sources"] if r["status"] == "synced"} == {
        "claude-code", "codex"} | ({"hermes"} if closed_folder != "profiles" else set())


@pytest.mark.parametrize("kind", ["hermes", "claude-code", "codex"])
def test_a_symlink_loop_given_as_the_source_is_one_line(tmp_path: Path, kind: str) -> None:
    """Path.resolve() raised RuntimeError on a loop (internal error, exit 70): ``import``
    names the path and why, and ``sync`` fails only that source."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    loop = str(tmp_path / "a")
    done = harkback("import", kind, loop, "--db", str(tmp_path / "h.db"))
    assert (done.returncode, done.stderr) == (
        FAILED, f"harkback: {loop}: Too many levels of symbolic links\n")
    home = tmp_path / "home"
    home.mkdir()
    synced = subprocess.run(
        [sys.executable, "-m", "harkback.pipeline.cli", "sync", f"--{kind}", loop, "--db",
         str(tmp_path / "h.db"), "--json"], capture_output=True, text=True, timeout=120,
        check=False, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)})
    (report,) = [r for r in json.loads(synced.stdout)["sources"] if r["kind"] == kind]
    assert (synced.returncode, report["status"]) == (FAILED, "failed"), synced.stderr
    assert report["error"] == f"cannot read {loop}: Too many levels of symbolic links"


@pytest.mark.parametrize("mode", [0o000, 0o200])
@pytest.mark.parametrize("command", [("stats",), ("search", "docker"), ("migrate",),
                                     ("ingest", "{tmp}/sessions.jsonl")])
def test_a_store_this_user_may_not_read_is_named_so(tmp_path: Path, mode: int,
                                                    command: tuple[str, ...]) -> None:
    """A store file without read permission for the user (another user's, or one a
    ``sudo harkback`` left): exit 1, one line naming the file and 'Permission denied',
    as for a folder that cannot be entered; the file keeps its bytes."""
    db = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge drops"))])
    before = db.read_bytes()
    db.chmod(mode)
    try:
        done = harkback(*[part.format(tmp=tmp_path) for part in command], "--db", str(db))
    finally:
        db.chmod(0o644)
    assert done.returncode == FAILED
    [line] = done.stderr.splitlines()
    assert f"{db}: Permission denied" in line, line
    assert db.read_bytes() == before


def test_an_unreadable_agent_folder_alone_is_named_not_called_no_history(
        tmp_path: Path) -> None:
    """``~/.claude`` closed (made by ``sudo claude``) and no other agent: sync said "no
    agent history found", hiding why, and ``--watch`` would not start. Now that source
    fails naming the folder (exit 1, no store left behind), and a watch tries it again
    until it can be read, then syncs it."""
    home = tmp_path / "home"
    shutil.copytree(FIXTURES / "claude-code" / "projects", home / ".claude" / "projects")
    db = tmp_path / "h.db"
    (home / ".claude").chmod(0)
    try:
        status, payload, err = run(home, db)
        assert status == FAILED and "no agent history found" not in err, err
        (report,) = [r for r in payload["sources"] if r["status"] != "not found"]
        assert (report["kind"], report["error"]) == (
            "claude-code", f"cannot read {home / '.claude' / 'projects'}: Permission denied")
        assert not db.exists()
        with running(command(home, db, "--watch"), home) as watch:
            assert watch.stderr is not None
            assert "trying it again every 2 s" in watch.stderr.readline()
            (home / ".claude").chmod(0o755)
            deadline = time.monotonic() + 60
            while not _sessions(db) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert _sessions(db) > 0
            assert watch.poll() is None  # still watching
    finally:
        (home / ".claude").chmod(0o755)


def _sessions(db: Path) -> int:
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "stats", "--db",
                           str(db), "--json"], capture_output=True, text=True, timeout=120,
                          check=False)
    return int(json.loads(done.stdout)["sessions"]) if done.returncode == 0 else 0


@pytest.mark.parametrize("odd", ["link", "file", "fifo"])
def test_what_is_no_folder_where_transcripts_are_looked_for_is_named(
        tmp_path: Path, odd: str) -> None:
    """``~/.claude/projects`` a link to a disk not mounted, a file or a named pipe: sync
    said "not found" (exit 0 beside another agent), as if there were no history to keep.
    Now that source fails saying what stands there; the link's, once its target is back,
    syncs."""
    home = make_home(tmp_path / "home")
    projects = home / ".claude" / "projects"
    shutil.rmtree(projects)
    target = tmp_path / "disk" / "projects"
    said = {"link": f"{projects} is a link to {target}, which is not there",
            "file": f"{projects} is a file, not a folder",
            "fifo": f"{projects} is a named pipe (FIFO), not a folder"}[odd]
    if odd == "link":
        projects.symlink_to(target)
    elif odd == "file":
        projects.write_text("not a folder\n", encoding="utf-8")
    else:
        os.mkfifo(projects)
    status, payload, err = run(home, tmp_path / "h.db")
    reports = {r["kind"]: r for r in payload["sources"]}
    assert (status, reports["claude-code"]["status"]) == (FAILED, "failed"), err
    assert reports["claude-code"]["error"] == said
    assert [reports[k]["status"] for k in ("hermes", "codex")] == ["synced", "synced"]
    if odd == "link":
        shutil.copytree(FIXTURES / "claude-code" / "projects", target)
        status, payload, err = run(home, tmp_path / "h.db")
        assert {r["kind"]: r["status"] for r in payload["sources"]}["claude-code"] == "synced"


@pytest.mark.parametrize("odd", ["link", "file", "loop", "folder"])
def test_a_hermes_home_that_is_no_folder_is_named(tmp_path: Path, odd: str) -> None:
    """``~/.hermes`` a link to a disk not mounted, a file or a loop of links: sync said "not
    found" (or read the file as a state.db). Now that source fails saying what stands
    there; a home folder without a ``state.db`` stays "not found"."""
    home = make_home(tmp_path / "home")
    hermes = home / ".hermes"
    shutil.rmtree(hermes)
    target = tmp_path / "disk" / "hermes"
    said = {"link": f"{hermes} is a link to {target}, which is not there",
            "file": f"{hermes} is a file, not a folder",
            "loop": f"{hermes} is a link in a loop of links, not a folder"}.get(odd)
    if odd == "link":
        hermes.symlink_to(target)
    elif odd == "file":
        hermes.write_text("not a folder\n", encoding="utf-8")
    elif odd == "loop":
        hermes.symlink_to(home / ".hermes-too")
        (home / ".hermes-too").symlink_to(hermes)
    else:
        hermes.mkdir()
    status, payload, err = run(home, tmp_path / "h.db")
    reports = {r["kind"]: r for r in payload["sources"]}
    if said is None:
        assert status != FAILED and reports["hermes"]["status"] == "not found", err
        return
    assert (status, reports["hermes"]["status"]) == (FAILED, "failed"), err
    assert reports["hermes"]["error"] == said
    assert [reports[k]["status"] for k in ("claude-code", "codex")] == ["synced", "synced"]
