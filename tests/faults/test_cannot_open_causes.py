"""Why a store cannot be opened, each cause in its own words: a process out of file
descriptors, a symbolic link to a file that cannot be made, a path too long for SQLite, a
folder. The first three were told "the folder ... takes no new files" (or SQLite's bare
"unable to open database file"), which sent the user after folder permissions that were
fine; the folder, "disk I/O error"."""

from __future__ import annotations

import json
import os
import resource
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest

from harkback.adapters.stores.sql.schema import SCHEMA_VERSION
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_errors import SQLITE_PATH_BYTES, unavailable
from harkback.pipeline.mcp_command import MCP_EXTRA
from harkback.stages.ingest_format import conversation_to_json
from tests.adapters.stores.old_files import old_file
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested
from tests.support.closed_folders import refused_in_closed_folder

WAY_OUT = "pass --db a path where this user may write"


def _source(tmp_path: Path) -> Path:
    """A file of one session to ingest, written in ``tmp_path``."""
    source = tmp_path / "sessions.jsonl"
    session = conversation("s1", ("user", "the docker bridge"))
    source.write_text(json.dumps(conversation_to_json(session)) + "\n", encoding="utf-8")
    return source


def _ingest(db: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``harkback ingest`` of one session, written in ``tmp_path``, into ``db``."""
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "ingest",
                           str(_source(tmp_path)), "--db", str(db)],
                          capture_output=True, text=True, timeout=120, check=False)


@contextmanager
def _no_descriptor_left() -> Iterator[None]:
    """Every file descriptor this process may open taken (its limit lowered first, so
    that takes a few dozen), all given back after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    held: list[int] = []
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 32, hard))
    try:
        while True:
            try:
                held.append(os.open(os.devnull, os.O_RDONLY))
            except OSError:
                break
        yield
    finally:
        for descriptor in held:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_process_out_of_file_descriptors_says_so(tmp_path: Path) -> None:
    """A new store and an existing one opened read-only, with no descriptor left (a
    long-lived MCP server at its limit): the line names the limit and how to raise it,
    not the folder; nothing is created."""
    existing = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge"))])
    new = tmp_path / "new.db"
    with _no_descriptor_left():
        made = SqliteStore.open(new)
        read = SqliteStore.open(existing, readonly=True)
    for opened, path in ((made, new), (read, existing)):
        reason = opened.failure().reason
        assert reason.startswith(f"cannot open the database {path}: too many files are open"), \
            reason
        assert reason.endswith("close some, or raise the limit (ulimit -n)"), reason
    assert not new.exists()


def test_a_link_to_a_file_in_a_missing_folder_says_so(tmp_path: Path) -> None:
    """``--db`` a symbolic link whose target's folder does not exist: the line names the
    link and where it points, not the link's (writable) folder."""
    link = tmp_path / "h.db"
    link.symlink_to(tmp_path / "gone" / "h.db")
    done = _ingest(link, tmp_path)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert (f"cannot create the database {link}: {link} is a symbolic link to "
            f"{tmp_path / 'gone' / 'h.db'}, whose folder does not exist") in line, line
    assert WAY_OUT in line, line


def test_a_link_into_a_folder_this_user_may_not_write_names_that_folder(
        tmp_path: Path) -> None:
    """The link's folder is writable, its target's is not: the line names the target's
    folder (SQLite makes the file where the link points), and it stays empty."""
    closed = tmp_path / "closed"
    closed.mkdir()
    link = tmp_path / "h.db"
    link.symlink_to(closed / "h.db")
    line = refused_in_closed_folder(closed, _source(tmp_path), link)
    assert (f"{link} is a symbolic link to {closed / 'h.db'}, and the folder {closed} is "
            "read-only for this user") in line, line
    assert list(closed.iterdir()) == []


def test_a_link_to_a_store_in_a_folder_this_user_may_not_write_names_that_folder(
        tmp_path: Path) -> None:
    """The store exists where the link points, in a folder this user may not write (so
    SQLite cannot make its -wal there); the link's folder is writable. The line said only
    "the database's folder is read-only: h.db", the link's name, with no way out; it names
    the target's folder now, and the store is left as it was."""
    closed = tmp_path / "closed"
    closed.mkdir()
    store = ingested(closed, [conversation("s1", ("user", "the docker bridge"))])
    before, held = store.read_bytes(), sorted(closed.iterdir())
    link = tmp_path / "h.db"
    link.symlink_to(store)
    line = refused_in_closed_folder(closed, _source(tmp_path), link)
    assert (f"cannot write the database {link}: {link} is a symbolic link to {store}, and "
            f"the folder {closed} is read-only for this user") in line, line
    assert WAY_OUT in line, line
    assert store.read_bytes() == before and sorted(closed.iterdir()) == held


def test_a_store_that_is_a_folder_says_so(tmp_path: Path) -> None:
    """A folder opened as a store by the library (the command line checks before): the
    line says it is a folder and names a file in it, writable ("disk I/O error" before)
    or read-only ("no harkback database")."""
    for readonly in (False, True):
        reason = SqliteStore.open(tmp_path, readonly=readonly).failure().reason
        assert reason == (f"{tmp_path} is a folder, not a database file: name a file in "
                          f"it, such as {tmp_path / 'harkback.db'}"), reason
    assert list(tmp_path.iterdir()) == []


def test_a_path_too_long_for_sqlite_says_so(tmp_path: Path) -> None:
    """A new store whose full path is longer than SQLite opens, in a folder that exists
    and may be written: the line says the path is too long, and nothing is made."""
    folder = tmp_path
    while len(str(folder)) < SQLITE_PATH_BYTES - 100:
        folder = folder / ("d" * 100)
    folder.mkdir(parents=True)
    db = folder / ("h" * 100 + ".db")
    done = _ingest(db, tmp_path)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert f"its full path is longer than the {SQLITE_PATH_BYTES} bytes SQLite opens" in line, line
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("command", [("search", "docker"), ("recent",)])
def test_a_command_at_its_descriptor_limit_says_so_in_one_line(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """``ulimit -n`` at 5 to 11: the event loop (the command's, or the store thread's) could
    not be made, an internal error (exit 70), and Python then printed a traceback of the
    half-made loop. Each limit now either runs or says, in one line, what the store would
    have said: too many files are open, and how to raise the limit."""
    store = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge"))])
    said: list[int] = []
    for limit in range(5, 12):
        done = subprocess.run(
            [sys.executable, "-m", "harkback.pipeline.cli", *command, "--db", str(store)],
            capture_output=True, text=True, timeout=120, check=False,
            stdin=subprocess.DEVNULL, preexec_fn=partial(
                resource.setrlimit, resource.RLIMIT_NOFILE, (limit, limit)))
        assert done.returncode in (0, 1), (limit, done.stderr)
        assert done.stderr.count("\n") <= 1 and "Traceback" not in done.stderr, done.stderr
        if done.returncode:
            assert (f"too many files are open (Too many open files; this process may have "
                    f"{limit})") in done.stderr, done.stderr
            assert done.stderr.endswith("close some, or raise the limit (ulimit -n)\n")
            said.append(limit)
    assert said and said[-1] < 11, said  # some limits were too low; the last was enough


@pytest.mark.parametrize("command", [("search", "docker"), ("stats",)])
def test_a_command_at_its_memory_limit_says_so_in_one_line(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """``ulimit -v`` of 20 to 80 MiB: a ``MemoryError``, a C library that could not be
    mapped, or a thread that could not start, was an internal error (exit 70, "set
    HARKBACK_DEBUG=1"), as if harkback had a bug, or a traceback. Each now says in one
    line which limit to raise. (CPython may fail otherwise too under such a cap, as a
    ``SystemError`` from ``compile``: that stays an internal error, in one line.)"""
    store = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge"))])
    said = set()
    for mebibytes in range(20, 84, 4):
        cap = mebibytes * 2 ** 20
        if not _loads_under(cap):
            continue  # Python fails before any harkback code runs: nothing it can say
        done = subprocess.run(
            [sys.executable, "-m", "harkback.pipeline.cli", *command, "--db", str(store)],
            capture_output=True, text=True, timeout=120, check=False,
            stdin=subprocess.DEVNULL,
            preexec_fn=partial(resource.setrlimit, resource.RLIMIT_AS, (cap, cap)))
        assert done.stderr.count("\n") <= 1 and "Traceback" not in done.stderr, done.stderr
        assert not any(cause in done.stderr for cause in (
            "MemoryError", "can't start new thread) (set", "failed to map")), done.stderr
        if "(ulimit -v)" in done.stderr:
            assert done.returncode == 1, done.stderr
            said.add(done.stderr.split(" (")[0])
    assert said, "no limit was low enough to fail"


def test_the_mcp_server_at_its_memory_limit_names_the_limit_not_the_extra(
        tmp_path: Path) -> None:
    """``harkback mcp`` under ``ulimit -v`` of 60 to 74 MiB, where a C library of the SDK's
    (cryptography's) could not be mapped: it said the mcp extra was not installed, and to
    pip install it. It names the memory limit now."""
    store = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge"))])
    said = []
    for mebibytes in range(60, 76, 2):
        cap = mebibytes * 2 ** 20
        done = subprocess.run(
            [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(store)],
            capture_output=True, text=True, timeout=120, check=False,
            stdin=subprocess.DEVNULL,
            preexec_fn=partial(resource.setrlimit, resource.RLIMIT_AS, (cap, cap)))
        assert MCP_EXTRA not in done.stderr, (mebibytes, done.stderr)
        said.append(done.stderr)
    assert any("(ulimit -v)" in line for line in said), said


def _loads_under(cap: int) -> bool:
    """Whether Python can import the command line and what its commands load with ``cap``
    bytes of address space: below it, the interpreter fails in its own import machinery,
    or the standard library logs its own tracebacks (``hashlib``, ``random``), before
    harkback could say anything (the floor moves with what the CLI imports, and with the
    platform)."""
    return subprocess.run(
        [sys.executable, "-c", "import harkback.pipeline.cli, harkback.pipeline.commands, "
         "harkback.pipeline.facade, hashlib, random"], capture_output=True,
        timeout=120, check=False, stdin=subprocess.DEVNULL,
        preexec_fn=partial(resource.setrlimit, resource.RLIMIT_AS, (cap, cap))).returncode == 0


def test_an_upgrade_past_the_file_size_limit_names_it_and_leaves_the_old_store(
        tmp_path: Path) -> None:
    """``ulimit -f`` below what ``migrate`` writes: SQLite's write fails with EFBIG, which
    it reports as "disk I/O error", as if the disk were failing. The line now names the
    limit; the store is whole, at its old version or its new one (the commit may pass and
    the checkpoint into the main file fail), and migrates once the limit is raised."""
    db = tmp_path / "h.db"
    old_file(db, [conversation(f"s{i}", ("user", f"the docker bridge バケット {i}"))
                  for i in range(300)])
    failed = 0
    for kibibytes in (48, 96, 192):
        done = subprocess.run(
            [sys.executable, "-m", "harkback.pipeline.cli", "migrate", "--db", str(db)],
            capture_output=True, text=True, timeout=120, check=False,
            stdin=subprocess.DEVNULL, preexec_fn=partial(
                resource.setrlimit, resource.RLIMIT_FSIZE, (kibibytes << 10,) * 2))
        if done.returncode == 0:
            break
        failed += 1
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert f"at most {kibibytes << 10:,} bytes; raise the limit, ulimit -f" in done.stderr
        assert _version(db) in (1, SCHEMA_VERSION)
    assert failed, "no limit was low enough to fail"
    assert subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "migrate", "--db",
                           str(db)], capture_output=True, timeout=120).returncode == 0
    found = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "stats", "--db",
                            str(db), "--json"], capture_output=True, text=True, timeout=120,
                           check=True)
    assert (json.loads(found.stdout)["sessions"], _version(db)) == (300, SCHEMA_VERSION)



@pytest.mark.parametrize(("failed", "limit"), [("SQLITE_IOERR_WRITE", 1 << 30),
                                               ("SQLITE_IOERR_READ", 16 << 10)])
def test_a_disk_error_the_file_size_limit_did_not_cause_is_not_blamed_on_it(
        tmp_path: Path, failed: str, limit: int) -> None:
    """``ulimit -f`` finite and a disk I/O error the limit cannot have caused: a write
    with the limit far above the store (a batch system's 1 GiB), or a read (only writes
    are stopped by it) of a store larger than the limit. Every I/O error under any finite
    limit named it ("raise the limit, ulimit -f"), sending the user after the wrong cause."""
    store = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge"))])
    assert store.stat().st_size > limit + (64 << 10) or limit == 1 << 30
    error = sqlite3.OperationalError("disk I/O error")
    error.sqlite_errorname = failed
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    lowered = limit if hard == resource.RLIM_INFINITY else min(hard, limit)
    resource.setrlimit(resource.RLIMIT_FSIZE, (lowered, hard))
    try:  # nothing is written meanwhile: only stat and statvfs
        said = unavailable(store, error).reason
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert said == f"disk I/O error: {store} (disk I/O error)", said

def _version(db: Path) -> int:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as raw:
        version: int = raw.execute("PRAGMA user_version").fetchone()[0]
        assert raw.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    raw.close()
    return version
