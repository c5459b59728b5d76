"""The CLI against a real PostgreSQL server (``--db postgresql:///DB?host=SOCKETDIR``): the
commands end to end, and every bad connection as one line, exit 1, nothing written."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.pipeline.sync_home import DONE_WITH_SKIPS
from tests.pipeline.test_cli import _write_sessions
from tests.pipeline.test_import_cli import FIXTURES, harkback
from tests.support.chat_server import ChatServer
from tests.support.corpus import QUERY, docker_session
from tests.support.new_stores import store_locations
from tests.support.postgres_server import PostgresServer

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


def _tables(url: str) -> list[str]:
    with psycopg.connect(url) as connection:
        return sorted(r[0] for r in connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))


def _one_line_failure(done: object, *expected: str) -> None:
    assert getattr(done, "returncode", None) == 1, done
    lines = str(getattr(done, "stderr", "")).strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("harkback: ") and "internal error" not in lines[0], lines
    assert "Traceback" not in lines[0]
    for part in expected:
        assert part in lines[0], lines[0]


def test_ingest_import_search_recent_and_show(url: str, tmp_path: Path) -> None:
    """Every command a user runs works on a PostgreSQL store as on a file."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    codex = tmp_path / "codex"
    shutil.copytree(FIXTURES / "codex" / "sessions", codex / "sessions")
    ingested = harkback("ingest", str(source), "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    assert "3 added" in ingested.stdout
    imported = harkback("import", "codex", "--db", url, "--json",
                        env={"CODEX_HOME": str(codex)})
    assert imported.returncode == DONE_WITH_SKIPS, imported.stderr  # a fixture's bad line
    assert json.loads(imported.stdout)["sources"][0]["sessions"]["added"] == 4
    again = harkback("import", "codex", "--db", url, "--json", env={"CODEX_HOME": str(codex)})
    assert json.loads(again.stdout)["sources"][0]["sessions"]["added"] == 0
    found = harkback("search", "docker network bridge", "--db", url, "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results[0]["session_id"] == "docker-fix"
    listed = harkback("recent", "--db", url, "--json")
    assert listed.returncode == 0, listed.stderr
    assert "cors" in listed.stdout and "docker-fix" in listed.stdout
    shown = harkback("show", "docker-fix", "--db", url)
    assert shown.returncode == 0, shown.stderr
    assert "run docker network create backend" in shown.stdout
    sources = harkback("sources", "--db", url, "--json")
    assert json.loads(sources.stdout)["sources"][0]["kind"] == "codex"
    optimized = harkback("optimize", "--db", url)
    assert optimized.returncode == 0, optimized.stderr
    assert "vacuumed and analysed postgresql://harkback@/" in optimized.stdout


def test_a_url_that_is_not_one_is_refused(tmp_path: Path) -> None:
    """A malformed URL is named (its password masked) and nothing is tried."""
    done = harkback("search", "x", "--db", "postgresql://me:secret@host:notaport/db")
    _one_line_failure(done, "not a PostgreSQL URL", "postgresql://me:********@host")
    assert "secret" not in done.stderr


@pytest.mark.parametrize(("url", "detail"), [
    ("postgresql://me:secret@127.0.0.1:99999/h", 'invalid port number: "99999"'),
    ("postgresql://me:secret@127.0.0.1:1/h?sslmode=bogus", 'invalid sslmode value: "bogus"')])
def test_a_setting_libpq_refuses_is_a_bad_url_not_an_unreachable_server(
        url: str, detail: str) -> None:
    """libpq refuses these before trying a server; the line said "cannot reach the
    PostgreSQL server", which sends the user to the network for a typo in the URL."""
    done = harkback("stats", "--db", url)
    _one_line_failure(done, "not a PostgreSQL URL: postgresql://me:********@127.0.0.1:", detail)
    assert "cannot reach" not in done.stderr and "secret" not in done.stderr


def test_a_refused_connection_is_one_line(postgres_server: PostgresServer) -> None:
    """No server listening: one line naming where it looked."""
    done = harkback("recent", "--db", "postgresql://me:pw@127.0.0.1:1/harkback")
    _one_line_failure(done, "cannot reach the PostgreSQL server of "
                      "postgresql://me:********@127.0.0.1:1")
    assert "pw" not in done.stderr.replace("postgresql", "")


def test_wrong_credentials_and_a_missing_database_are_one_line(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    """The server's refusal (an unknown role, an unknown database) comes back as its reason,
    as a refusal: it said "cannot reach the PostgreSQL server", which sent the user to
    look at the network."""
    folder = postgres_server.socket_dir
    done = harkback("recent", "--db", f"postgresql://intruder@/postgres?host={folder}")
    _one_line_failure(done, 'role "intruder" does not exist')
    assert "the PostgreSQL server of postgresql://intruder@/postgres?host=" in done.stderr
    assert " refused the connection: " in done.stderr
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    done = harkback("ingest", str(source), "--db",
                    f"postgresql://harkback@/no_such_db?host={folder}")
    _one_line_failure(done, 'database "no_such_db" does not exist')
    assert " refused the connection: " in done.stderr and "cannot reach" not in done.stderr


def test_a_database_without_the_schema_is_never_written(url: str, tmp_path: Path) -> None:
    """Read-only commands on an empty database offer to create the store and create
    nothing; a database holding someone else's tables is refused even for writing."""
    done = harkback("search", "docker", "--db", url)
    _one_line_failure(done, "holds no harkback store", "harkback ingest FILE --db URL")
    assert _tables(url) == []
    with psycopg.connect(url) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    done = harkback("ingest", str(source), "--db", url)
    _one_line_failure(done, "holds tables that are not harkback's")
    assert _tables(url) == ["customers"]


def test_a_newer_schema_is_refused(url: str, tmp_path: Path) -> None:
    """A store written by a newer harkback is refused with what to do."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    assert harkback("ingest", str(source), "--db", url).returncode == 0
    with psycopg.connect(url) as connection:
        connection.execute("UPDATE harkback_schema SET version = 99")
    for command in (("recent",), ("ingest", str(source))):
        done = harkback(*command, "--db", url)
        _one_line_failure(done, "harkback schema version 99, newer than this harkback knows")


@pytest.mark.parametrize(("raised", "said"), [
    # What importing a missing package raises: the package missing.
    ("ModuleNotFoundError(\"No module named 'psycopg'\", name='psycopg')",
     "the PostgreSQL store needs the postgres extra: pip install 'harkback[postgres]'"),
    # psycopg's own error without libpq: installed, not loading. It was said to be missing.
    ("ImportError('no pq wrapper available.')",
     "needs psycopg, which is installed but does not load (no pq wrapper available.): pip "
     "install --force-reinstall 'harkback[postgres]'")])
def test_a_psycopg_missing_or_not_loading_is_named_so(url: str, tmp_path: Path, raised: str,
                                                      said: str) -> None:
    """An install without the postgres extra says how to get it, in one line; one whose
    psycopg does not load gives its reason, with the reinstall that brings libpq. A module
    named psycopg raising the error stands in for the package."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "psycopg.py").write_text(f"raise {raised}\n")
    done = harkback("recent", "--db", url, env={"PYTHONPATH": str(blocker)})
    _one_line_failure(done, said)


def _failing_module(folder: Path, module: str) -> dict[str, str]:
    """An environment whose interpreters fail to import harkback's ``module`` (and only
    it: psycopg and the rest load as installed), as a damaged install would."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import sys\n\n\n"
        "class Fails:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n"
        "            raise ImportError('cannot import name NOT_VACUUMABLE', name=name)\n"
        "        return None\n\n\n"
        "sys.meta_path.insert(0, Fails())\n")
    return {"PYTHONPATH": str(folder)}


@pytest.mark.parametrize("command", [("recent",), ("migrate",)])
def test_a_module_of_the_store_that_fails_to_import_is_named_not_the_extra(
        url: str, tmp_path: Path, command: tuple[str, ...]) -> None:
    """Any ImportError opening the store said "needs the postgres extra", psycopg
    installed and loading: the real cause (the module, its error) is named instead."""
    module = "harkback.adapters.stores.postgres_vacuum"
    env = _failing_module(tmp_path / "shim", module)
    loads = subprocess.run([sys.executable, "-c", "import psycopg"], env={**os.environ, **env},
                           capture_output=True, text=True, check=False)
    assert loads.returncode == 0, loads.stderr  # the shim leaves psycopg alone
    done = harkback(*command, "--db", url, env=env)
    _one_line_failure(done, "the PostgreSQL store could not be loaded: cannot import name "
                      f"NOT_VACUUMABLE (in {module}); psycopg loads, so the cause is in "
                      "harkback's own installation: reinstall harkback")
    assert "harkback[postgres]" not in done.stderr


def test_a_locked_summary_cache_does_not_hold_a_search_with_a_model(url: str,
                                                                     tmp_path: Path) -> None:
    """The summary cache's table locked by another connection (a migration, a rewrite):
    the lookups and writes give up at once and the model summarises; they waited the 60 s
    read timeout, past --deadline 5, and every session fell back to extractive."""
    source = tmp_path / "sessions.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                              for i in range(2)))
    assert harkback("ingest", str(source), "--db", url).returncode == 0
    with psycopg.connect(url) as holder, ChatServer() as server:
        holder.execute("LOCK TABLE summary_cache IN ACCESS EXCLUSIVE MODE")
        done = harkback("search", QUERY, "--db", url, "--json", "--model", "m",
                        "--base-url", server.url, "--deadline", "5")
        holder.rollback()
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert [r["summary_kind"] for r in results] == ["llm", "llm"], results
    assert done.stderr == ""


def test_a_sync_the_store_refuses_does_not_send_the_user_to_the_source(
        url: str, tmp_path: Path) -> None:
    """A store that may not be written (a read-only session here; a role without rights, a
    server gone) failed each source's row with "fix that, or name another location with
    --codex": no other location would do. A source that is not there still says it."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    assert harkback("ingest", str(source), "--db", url).returncode == 0
    codex = tmp_path / "codex"
    shutil.copytree(FIXTURES / "codex" / "sessions", codex / "sessions")
    done = harkback("sync", "--codex", str(codex / "sessions"), "--db",
                    f"{url}&options=-cdefault_transaction_read_only%3Don")
    assert done.returncode == 1, done.stderr
    failed = [line for line in done.stdout.splitlines() if line.startswith("codex: failed")]
    assert len(failed) == 1 and "read-only transaction" in failed[0], done.stdout
    assert "another location" not in failed[0], failed[0]
    missing = harkback("sync", "--codex", str(tmp_path / "nowhere"), "--db", url)
    assert "name another location with --codex" in missing.stdout, missing.stdout
    assert json.loads(harkback("stats", "--db", url, "--json").stdout)["sessions"] == 3


def test_a_psycopg_with_a_module_missing_is_not_said_to_be_missing(url: str,
                                                                     tmp_path: Path) -> None:
    """psycopg installed but damaged (a module of it gone, as a partial upgrade leaves it):
    the line said it needs the postgres extra, whose pip install finds it satisfied and
    does nothing. A copy of the installed psycopg without its _tpc module comes first."""
    damaged = tmp_path / "damaged" / "psycopg"
    shutil.copytree(Path(psycopg.__file__).parent, damaged)
    (damaged / "_tpc.py").unlink()
    done = harkback("recent", "--db", url, env={"PYTHONPATH": str(damaged.parent)})
    _one_line_failure(done, "the PostgreSQL store needs psycopg, which is installed but does "
                      "not load (No module named 'psycopg._tpc'): pip install "
                      "--force-reinstall 'harkback[postgres]'")
