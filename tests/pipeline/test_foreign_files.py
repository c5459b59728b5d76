"""Files that are not harkback's are refused and never written, by every command that
takes ``--db``; a failed open leaves no side files; an empty file becomes a store only
when its name says it is a database, or with ``--create``."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation
from tests.support.closed_folders import refused_in_closed_folder

SIDE = ("-wal", "-shm", "-journal")


def harkback(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter, with stdin closed (``mcp`` ends)."""
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False,
                          stdin=subprocess.DEVNULL)


def digest(path: Path) -> str:
    """The file's SHA-256 (and so whether anything wrote it)."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def side_files(path: Path) -> list[str]:
    """Which of ``path``'s SQLite side files exist."""
    return [s for s in SIDE if Path(f"{path}{s}").exists()]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a sessions file, a Codex folder and a Claude Code folder to import."""
    folder = tmp_path_factory.mktemp("inputs")
    session = conversation("s1", ("user", "docker bridge"), started_at=1_770_000_000.0)
    (folder / "sessions.jsonl").write_text(json.dumps(conversation_to_json(session)) + "\n",
                                           encoding="utf-8")
    (folder / "codex").mkdir()
    (folder / "claude").mkdir()
    return folder


def commands(db: Path, inputs: Path) -> dict[str, tuple[str, ...]]:
    """Every command that takes ``--db``, pointed at ``db``."""
    target = ("--db", str(db))
    return {
        "ingest": ("ingest", str(inputs / "sessions.jsonl"), *target),
        "import jsonl": ("import", "jsonl", str(inputs / "sessions.jsonl"), *target),
        "import codex": ("import", "codex", str(inputs / "codex"), *target),
        "import claude-code": ("import", "claude-code", str(inputs / "claude"), *target),
        "import hermes": ("import", "hermes", str(inputs / "sessions.jsonl"), *target),
        "search": ("search", "docker", *target),
        "search --json": ("search", "docker", *target, "--json"),
        "recent": ("recent", *target),
        "show": ("show", "s1", *target),
        "stats": ("stats", *target),
        "sources": ("sources", *target),
        "embed": ("embed", "--embedder", "openai:m@http://127.0.0.1:9/v1", *target),
        "optimize": ("optimize", *target),
        "mcp": ("mcp", *target),
        "demo": ("demo", *target),
    }


def _foreign_sqlite(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("CREATE TABLE notes (body TEXT)")
    connection.execute("INSERT INTO notes VALUES ('mine')")
    connection.commit()
    connection.close()


def _text(path: Path) -> None:
    path.write_text("# my notes\nnot a database\n", encoding="utf-8")


def _empty(path: Path) -> None:
    path.write_bytes(b"")


FOREIGN: dict[str, Callable[[Path], None]] = {
    "foreign.db": _foreign_sqlite, "notes.md": _text, "notes.txt": _empty}


@pytest.fixture(params=sorted(FOREIGN))
def foreign(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A file that is not harkback's: another program's SQLite database (WAL mode), a
    text file, an empty file named like text."""
    path = tmp_path / request.param
    FOREIGN[request.param](path)
    yield path


_DRIVER = """
import contextlib, hashlib, io, json, pathlib, sys
from harkback.pipeline.cli import main
path = pathlib.Path(sys.argv[1])
report = {}
for name, args in json.loads(sys.stdin.readline()).items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(args)
    report[name] = {"status": status, "stderr": err.getvalue(),
                    "digest": hashlib.sha256(path.read_bytes()).hexdigest(),
                    "side": [s for s in ("-wal", "-shm", "-journal")
                             if pathlib.Path(f"{path}{s}").exists()]}
print(json.dumps(report))
"""


def run_every_command(db: Path, inputs: Path) -> dict[str, dict[str, object]]:
    """Run every command on ``db`` in one process (stdin at its end, so ``mcp`` stops),
    each followed by the file's checksum and side files."""
    done = subprocess.run([sys.executable, "-c", _DRIVER, str(db)],
                          input=json.dumps(commands(db, inputs)) + "\n",
                          capture_output=True, text=True, timeout=300, check=True)
    report: dict[str, dict[str, object]] = json.loads(done.stdout)
    return report


def test_every_command_refuses_a_foreign_file_unwritten(foreign: Path, inputs: Path) -> None:
    """Checksums before and after each command are equal, and no side file appears."""
    before = digest(foreign)
    report = run_every_command(foreign, inputs)
    assert sorted(report) == sorted(commands(foreign, inputs))
    for name, outcome in report.items():
        assert outcome["digest"] == before, name
        assert outcome["side"] == [], name
        if name != "mcp":  # the server opens its store only for a tool call
            assert outcome["status"] != 0, name
            assert "internal error" not in str(outcome["stderr"]), (name, outcome)


def test_an_empty_file_named_like_a_database_becomes_a_store(tmp_path: Path,
                                                              inputs: Path) -> None:
    """notes.db is adopted; notes.txt only with --create."""
    named = tmp_path / "notes.db"
    named.write_bytes(b"")
    assert harkback("ingest", str(inputs / "sessions.jsonl"), "--db", str(named)).returncode == 0
    plain = tmp_path / "notes.txt"
    plain.write_bytes(b"")
    refused = harkback("ingest", str(inputs / "sessions.jsonl"), "--db", str(plain))
    assert refused.returncode == 1 and "--create" in refused.stderr
    assert plain.stat().st_size == 0
    created = harkback("import", "jsonl", str(inputs / "sessions.jsonl"), "--db", str(plain),
                       "--create", "--json")
    assert created.returncode == 0, created.stderr
    stats = json.loads(harkback("stats", "--db", str(plain), "--json").stdout)
    assert (stats["sessions"], stats["messages"]) == (1, 1)


def test_a_read_only_store_fails_without_side_files(tmp_path: Path, inputs: Path) -> None:
    """Ingest into a store the process may not write (immutable, so even root cannot):
    one clear line, and no -wal or -shm left beside it."""
    db = tmp_path / "h.db"
    assert harkback("ingest", str(inputs / "sessions.jsonl"), "--db", str(db)).returncode == 0
    assert side_files(db) == []
    subprocess.run(["chattr", "+i", str(db)], check=True)
    try:
        done = harkback("ingest", str(inputs / "sessions.jsonl"), "--db", str(db))
        assert done.returncode == 1
        assert "read-only" in done.stderr
        assert side_files(db) == []
        assert harkback("recent", "--db", str(db)).returncode == 0
        assert side_files(db) == []
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=True)



def test_a_store_in_a_folder_that_cannot_be_written_names_the_folder(
        tmp_path: Path, inputs: Path) -> None:
    """The file itself is writable, its folder is not: the line blamed the file ("the
    database is read-only"), which a chmod of the file cannot fix. (As root, without the
    capability to override permissions: ``BOUND``.)"""
    folder = tmp_path / "locked"
    folder.mkdir()
    db = folder / "h.db"
    assert harkback("ingest", str(inputs / "sessions.jsonl"), "--db", str(db)).returncode == 0
    line = refused_in_closed_folder(folder, inputs / "sessions.jsonl", db)
    assert (f"cannot write the database {db}: the folder {folder} is read-only for this "
            "user") in line, line
    assert "pass --db a path where this user may write" in line, line
    assert sorted(p.name for p in folder.iterdir()) == ["h.db"]


def test_a_new_store_in_a_folder_that_cannot_be_written_names_the_folder(
        tmp_path: Path, inputs: Path) -> None:
    """A store to be made in a folder this user may not write: the line was SQLite's
    "the database file cannot be opened (unable to open database file)", which says
    neither why nor what to do. It names the folder now, and the way out. (As root,
    without the capability to override permissions: ``BOUND``.)"""
    folder = tmp_path / "locked"
    folder.mkdir()
    db = folder / "new.db"
    line = refused_in_closed_folder(folder, inputs / "sessions.jsonl", db)
    assert (f"cannot create the database {db}: the folder {folder} is read-only for this "
            "user") in line, line
    assert line.endswith("pass --db a path where this user may write, or run a command that "
                         "only reads (search, recent, show, stats)"), line
    assert list(folder.iterdir()) == []


WAY_OUT = ("pass --db a path where this user may write, or run a command that only reads "
           "(search, recent, show, stats)")


def test_a_new_store_where_no_file_can_be_made_says_what_to_do(inputs: Path) -> None:
    """/proc takes no new file, though to root its permissions and mount flags look
    writable: the line was SQLite's "the database file cannot be opened (unable to open
    database file)", which says neither why nor what to do. (Another user is told the
    folder is read-only for them.)"""
    done = harkback("ingest", str(inputs / "sessions.jsonl"), "--db", "/proc/harkback.db")
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert "cannot create the database /proc/harkback.db: the folder /proc " in line, line
    assert line.endswith(WAY_OUT), line


def test_a_new_store_below_a_file_names_the_file(tmp_path: Path, inputs: Path) -> None:
    """A path through a file (``notes.txt/sub/h.db``): the line was "cannot create the
    folder .../sub: File exists", naming a folder that does not exist and no way out."""
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    db = tmp_path / "notes.txt" / "sub" / "h.db"
    done = harkback("ingest", str(inputs / "sessions.jsonl"), "--db", str(db))
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert f"cannot create the database {db}: {tmp_path / 'notes.txt'} is not a folder" in line
    assert line.endswith(WAY_OUT), line
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "mine\n"


@pytest.mark.parametrize("command", [("search", "docker"), ("stats",), ("ingest", "IN")])
def test_a_hermes_state_db_as_the_store_says_how_to_import_it(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """``--db ~/.hermes/state.db`` (a Hermes user's first guess) was only "not a harkback
    database"; the line now names the import that makes one of it, which works, and the
    Hermes file is left as it was, by a reading command and a writing one alike."""
    from tests.support.hermes_db import HermesFile

    state = tmp_path / "state.db"
    hermes = HermesFile(state, "v30")
    hermes.session("20260303_100000_aa11bb", title="docker bridge")
    hermes.message("20260303_100000_aa11bb", "user", "docker bridge is down")
    hermes.close()
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(conversation_to_json(conversation("s", ("user", "x")))) + "\n",
                      encoding="utf-8")
    before = digest(state)
    done = harkback(*(str(source) if a == "IN" else a for a in command), "--db", str(state))
    assert done.returncode == 1
    assert f"is Hermes' state.db, not a harkback database: import it into one with harkback " \
        f"import hermes {state}" in done.stderr
    assert digest(state) == before and side_files(state) == []
    store = tmp_path / "h.db"
    assert harkback("import", "hermes", str(state), "--db", str(store)).returncode == 0
    found = harkback("search", "docker", "--db", str(store), "--json")
    assert [r["session_id"] for r in json.loads(found.stdout)["results"]] == [
        "20260303_100000_aa11bb"]


def test_the_hermes_import_hint_works_pasted_from_a_folder_with_a_tab(tmp_path: Path) -> None:
    """The ``import hermes`` a Hermes file named as the store asks for quoted its path with
    plain quotes, which output then showed with ``␉`` for the tab: pasted, it named a file
    that does not exist. Pasted now, it imports the session."""
    from tests.pipeline.test_cli_show import _pasted
    from tests.support.hermes_db import HermesFile

    folder = tmp_path / "tab\there"
    folder.mkdir()
    hermes = HermesFile(folder / "state.db", "v30")
    hermes.session("20260303_100000_aa11bb", title="docker bridge")
    hermes.message("20260303_100000_aa11bb", "user", "docker bridge is down")
    hermes.close()
    done = harkback("stats", "--db", str(folder / "state.db"))
    assert done.returncode == 1
    hint = done.stderr.split("import it into one with ", 1)[1].rstrip()
    store = tmp_path / "h.db"
    imported = _pasted(f"{hint} --db {store}", tmp_path)
    assert imported.returncode == 0, (hint, imported.stderr)
    found = harkback("search", "docker", "--db", str(store), "--json")
    assert [r["session_id"] for r in json.loads(found.stdout)["results"]] == [
        "20260303_100000_aa11bb"]
