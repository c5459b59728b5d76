"""``--db`` values a user may well type that name no file the way they read: a URL of
another database (or an SQLAlchemy one), a name starting ``file:``, an empty value. Each is
refused in one line, or names the file it reads as; nothing is written elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from returns.result import Failure

from harkback.adapters.stores.sqlite import SqliteStore

SESSION = json.dumps({"id": "s1", "messages": [{"role": "user", "content": "docker bridge"}]})


def harkback(folder: Path, *args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """``harkback ARGS`` run in ``folder`` (relative --db values land there), with ``env``
    over the environment but its ``$HARKBACK_DB``."""
    env = {**{k: v for k, v in os.environ.items() if k != "HARKBACK_DB"}, **(env or {})}
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args], cwd=folder,
                          capture_output=True, text=True, env=env, timeout=120, check=False)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An empty folder but for a JSON-lines file of one session."""
    (tmp_path / "one.jsonl").write_text(SESSION + "\n", encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("url", ["mysql://me:secret@db.example/harkback",
                                 "postgresql+psycopg://me@db.example/harkback",
                                 "POSTGRESQL://db.example/harkback", "file:///tmp/h.db"])
@pytest.mark.parametrize("command", [("ingest", "one.jsonl"), ("sync", "--codex", "."),
                                     ("migrate",)])
def test_a_url_of_another_kind_is_refused(folder: Path, url: str,
                                          command: tuple[str, ...]) -> None:
    """Taken for a path, ``mysql://host/db`` made folders ``mysql:/host`` and a SQLite file
    ``db`` in them, and the import went there: now one line, status 1, nothing made."""
    done = harkback(folder, *command, "--db", url)
    shown = url.replace(":secret@", ":********@")
    assert (done.returncode, done.stderr) == (1, (
        f"harkback: session store unavailable: {shown} is a URL of no store harkback opens: "
        "give a database file's path or a postgresql:// URL (postgres:// also, in lower "
        "case)\n"))
    assert sorted(p.name for p in folder.iterdir()) == ["one.jsonl"]


@pytest.mark.parametrize(("url", "shown"), [("postgresql:/team", "postgresql:/..."),
                                           ("postgres:me:secret@db/team", "postgres:...")])
@pytest.mark.parametrize("command", [("ingest", "one.jsonl"), ("recent",)])
def test_a_postgresql_url_a_slash_short_is_refused(folder: Path, url: str, shown: str,
                                                   command: tuple[str, ...]) -> None:
    """``postgresql:/team`` (one slash) was taken for a path: ingest made a folder
    ``postgresql:`` and a SQLite file ``team`` in it, and the user's server got nothing.
    Now one line saying how to write it, its rest (a password, perhaps) unshown, nothing
    made; ``./postgresql:team`` still names such a file."""
    done = harkback(folder, *command, "--db", url)
    assert (done.returncode, done.stderr) == (1, (
        f"harkback: session store unavailable: {shown} is no PostgreSQL URL: write two "
        "slashes after the colon (postgresql://HOST/DATABASE, postgresql:///DATABASE for "
        "the local socket), or start it with ./ for a database file of that name\n"))
    assert sorted(p.name for p in folder.iterdir()) == ["one.jsonl"]
    assert harkback(folder, "ingest", "one.jsonl", "--db", "./postgresql:team").returncode == 0
    assert sorted(p.name for p in folder.iterdir()) == ["one.jsonl", "postgresql:team"]



def test_a_postgresql_url_a_slash_short_in_the_config_file_is_refused(folder: Path) -> None:
    """The config file's ``db = "postgresql:/team"`` was read as a path relative to the
    file's folder: ingest made ``postgresql:/team`` there, a SQLite store, where ``--db`` and
    ``$HARKBACK_DB`` giving the same value are refused. It is refused too, nothing made."""
    settings = folder / "settings"
    settings.mkdir()
    (settings / "config.toml").write_text('db = "postgresql:/team"\n', encoding="utf-8")
    done = harkback(folder, "ingest", "one.jsonl",
                    env={"HARKBACK_CONFIG": str(settings / "config.toml")})
    assert done.returncode == 1, done.stderr
    assert "postgresql:/... is no PostgreSQL URL: write two slashes" in done.stderr
    assert sorted(p.name for p in settings.iterdir()) == ["config.toml"]



@pytest.mark.parametrize("where", ["flag", "file"])
def test_a_key_value_connection_string_is_refused(folder: Path, where: str) -> None:
    """libpq's other form, ``host=/run/pg dbname=team password=...``, was taken for a path:
    ingest made a folder ``host=`` and a SQLite store in it (beside the config file, for
    its ``db``). Now one line saying to write a URL, only its first key shown."""
    conninfo = "host=/tmp dbname=team password=secret"
    settings = folder / "settings"
    settings.mkdir()
    (settings / "config.toml").write_text(f'db = "{conninfo}"\n', encoding="utf-8")
    flags = ["--db", conninfo] if where == "flag" else []
    done = harkback(folder, "ingest", "one.jsonl", *flags,
                    env={"HARKBACK_CONFIG": str(settings / "config.toml")})
    assert done.returncode == 1, done.stderr
    assert "host=... is a key=value connection string, which harkback does not read: write " \
           "it as a URL" in done.stderr
    assert "secret" not in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["one.jsonl", "settings"]
    assert sorted(p.name for p in settings.iterdir()) == ["config.toml"]


def test_a_name_starting_file_colon_is_the_file_it_names(folder: Path) -> None:
    """SQLite read ``file:h.db?mode=rwc`` as a URI: ingest wrote ``h.db`` (an existing
    store of that name too) while every reader looked for ``file:h.db?mode=rwc``."""
    name = "file:h.db?mode=rwc"
    done = harkback(folder, "ingest", "one.jsonl", "--db", name)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == [name, "one.jsonl"]
    listed = harkback(folder, "recent", "--db", name, "--json")
    assert [r["session_id"] for r in json.loads(listed.stdout)["results"]] == ["s1"]


DB_COMMANDS = [("ingest", "one.jsonl"), ("import", "jsonl", "one.jsonl"), ("search", "docker"),
               ("recent",), ("show", "s1"), ("stats",), ("sources",), ("embed",),
               ("optimize",), ("migrate",), ("redact",), ("check",), ("mcp",), ("demo",),
               ("sync", "--dry-run", "--codex", "."), ("search", "docker", "--json")]


@pytest.mark.parametrize("command", DB_COMMANDS)
def test_an_empty_db_is_a_usage_error(folder: Path, command: tuple[str, ...]) -> None:
    """``--db "$UNSET"`` (read as a path, the current folder) ended with exit status 1,
    as a store that failed does, and ``demo`` built a temporary store instead: it is a
    usage error in every command taking ``--db`` (status 2), one line, nothing made."""
    done = harkback(folder, *command, "--db", "")
    said = "--db is empty: name a database file, such as harkback.db, or leave --db out"
    assert (done.returncode, done.stderr) == (2, f"harkback: {said}\n")
    if "--json" in command:
        assert json.loads(done.stdout) == {"success": False, "error": said, "usage": True}
    assert sorted(p.name for p in folder.iterdir()) == ["one.jsonl"]


@pytest.mark.parametrize("given", [(" ",), ("\t  ",), ("h.db", " ")])
def test_a_blank_db_is_a_usage_error_too(folder: Path, given: tuple[str, ...]) -> None:
    """``--db " "`` (``--db "$DB "`` with ``DB`` unset) made a database file named by a
    blank in the current folder and ingested into it, while a blank ``$HARKBACK_DB`` is
    unset and a blank ``db`` in the config file is refused: it is empty, as ``--db ""``
    is (the last ``--db`` given counts)."""
    done = harkback(folder, "ingest", "one.jsonl", *(a for value in given for a in ("--db", value)))
    said = "--db is empty: name a database file, such as harkback.db, or leave --db out"
    assert (done.returncode, done.stderr) == (2, f"harkback: {said}\n")
    assert sorted(p.name for p in folder.iterdir()) == ["one.jsonl"]


def test_an_empty_harkback_db_is_unset(folder: Path) -> None:
    """An empty ``$HARKBACK_DB`` (as README says) is no value: the config file's ``db``
    is the store, as with the variable unset."""
    assert harkback(folder, "ingest", "one.jsonl", "--db", "h.db").returncode == 0
    (folder / "config.toml").write_text('db = "h.db"\n', encoding="utf-8")
    env = {"HARKBACK_DB": " ", "HARKBACK_CONFIG": str(folder / "config.toml")}
    done = harkback(folder, "recent", "--json", env=env)
    assert [r["session_id"] for r in json.loads(done.stdout)["results"]] == ["s1"]


FIFO_COMMANDS = [("ingest", "one.jsonl"), ("ingest", "--create", "one.jsonl"),
                 ("import", "jsonl", "one.jsonl"), ("search", "docker"), ("recent",),
                 ("show", "s1"), ("stats",), ("migrate",), ("optimize",), ("redact",),
                 ("sync", "--dry-run", "--codex", ".")]


@pytest.mark.parametrize("command", FIFO_COMMANDS)
def test_a_fifo_is_named_for_what_it_is_and_never_opened(folder: Path,
                                                         command: tuple[str, ...]) -> None:
    """A named pipe was "an empty file not named like a database" (with ``--create``, a
    "disk I/O error" after SQLite opened it to write): now one line saying it is no regular
    file, status 1, and nothing opens it (a reader would wait for a writer forever)."""
    os.mkfifo(folder / "pipe")
    done = harkback(folder, *command, "--db", "pipe")
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith("pipe is a named pipe (FIFO), not a regular file: name a "
                                "database file, such as harkback.db\n"), done.stderr
    assert done.stderr.count("\n") == 1
    assert sorted(p.name for p in folder.iterdir()) == ["one.jsonl", "pipe"]


@pytest.mark.parametrize("readonly", [True, False])
def test_the_library_refuses_a_device_or_a_fifo(folder: Path, readonly: bool) -> None:
    """``SqliteStore.open`` says the same, read-only or writable, for a FIFO and for
    ``/dev/null`` (where a writable open made a "store" that kept nothing)."""
    os.mkfifo(folder / "pipe")
    for path, kind in ((folder / "pipe", "a named pipe (FIFO)"),
                       (Path("/dev/null"), "a character device")):
        opened = SqliteStore.open(path, readonly=readonly, create=True)
        assert isinstance(opened, Failure)
        assert opened.failure().reason == (f"{path} is {kind}, not a regular file: name a "
                                           "database file, such as harkback.db")


@pytest.mark.parametrize("command", [("ingest", "one.jsonl"), ("ingest", "--create", "one.jsonl"),
                                     ("import", "jsonl", "one.jsonl"), ("migrate",),
                                     ("optimize",)])
def test_a_file_whose_size_reads_0_but_holds_bytes_is_not_called_empty(
        folder: Path, command: tuple[str, ...]) -> None:
    """A /proc file says its size is 0 and holds bytes (the kernel makes them as it is
    read): it was "an empty file not named like a database", and ``--create`` had SQLite
    open it to write. Now one line that says it is not a database, status 1. Each command's
    own ``/proc/self/comm`` is a file its user may write, root or not."""
    done = harkback(folder, *command, "--db", "/proc/self/comm")
    assert done.returncode == 1, done.stderr
    assert done.stderr.endswith("/proc/self/comm is not a database: its size reads 0, yet it "
                                "holds bytes (as files under /proc and /sys do): name a "
                                "database file, such as harkback.db\n"), done.stderr
    assert done.stderr.count("\n") == 1
    assert sorted(p.name for p in folder.iterdir()) == ["one.jsonl"]
