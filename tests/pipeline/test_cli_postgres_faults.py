"""The CLI against PostgreSQL when things go wrong, as a new user met them: a database of
another program's read, a URL that cannot be parsed, a socket on another port, and the
server stopped or frozen in the middle of an ingest or a search (one line, within a bound;
nothing half-written; a retry completes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from harkback.adapters.stores.postgres_connection import where
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations
from tests.support.postgres_server import (
    restarted,
    start_server,
    waits_for_a_lock,
)

SESSIONS, TURNS = 3_000, 40


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


@pytest.mark.parametrize("command", [("search", "docker"), ("recent",), ("stats",),
                                     ("show", "s1")])
def test_a_read_only_command_on_a_database_of_other_tables_says_so(
        url: str, command: tuple[str, ...]) -> None:
    """It offered to create a store there (`harkback ingest --db URL`), which ingest then
    refuses: the line says what is there instead, and nothing is written."""
    with psycopg.connect(url) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    done = harkback(*command, "--db", url)
    assert done.returncode == 1
    assert ("holds tables that are not harkback's; harkback writes only to an empty "
            "database or its own, or to a schema of its own") in done.stderr, done.stderr
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT count(*) FROM pg_tables WHERE schemaname = "
                                  "'public'").fetchone() == (1,)


def test_a_url_psycopg_cannot_parse_never_shows_its_password() -> None:
    """A password in the query of an unparsable URL was printed as given."""
    for url in ("postgresql:///h?password=hunter2&sslmod=x",
                "postgresql://me:hunter2@db.example/h?Password=hunter2&sslmod=x"):
        done = harkback("search", "x", "--db", url)
        assert done.returncode == 1
        assert "hunter2" not in done.stderr and "not a PostgreSQL URL" in done.stderr


def test_a_socket_url_is_named_with_its_port() -> None:
    """The port picks the socket's file: without it, the `harkback migrate --db ...` a
    message suggests reaches another server (or none)."""
    assert where("postgresql://me:pw@/h?host=/run/pg&port=5433") == \
        "postgresql://me:********@/h?host=/run/pg&port=5433"


def _write_many(path: Path) -> None:
    words = "docker bridge nginx cors postgres backup deploy pod yaml timeout".split()
    with path.open("w", encoding="utf-8") as out:
        for i in range(SESSIONS):
            turns = [{"role": ("user", "assistant")[t % 2],
                      "content": " ".join(words[(i + t + k) % 10] for k in range(30))}
                     for t in range(TURNS)]
            out.write(json.dumps({"id": f"m{i}", "started_at": 1_772_000_000 + i,
                                  "messages": turns}) + "\n")


def _counts(url: str) -> tuple[int, int, int]:
    """Sessions, messages, and sessions holding other than every one of their turns."""
    with psycopg.connect(url) as connection:
        row = connection.execute(
            "SELECT (SELECT count(*) FROM sessions), (SELECT count(*) FROM messages), "
            "(SELECT count(*) FROM sessions s WHERE (SELECT count(*) FROM messages m "
            f"WHERE m.session_id = s.id) <> {TURNS})").fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def _some_stored(url: str) -> bool:
    """Whether the ingest's first batch is in (its tables may not exist yet)."""
    try:
        with psycopg.connect(url) as connection:
            return connection.execute("SELECT EXISTS (SELECT FROM sessions)").fetchone() == (
                True,)
    except psycopg.errors.UndefinedTable:
        return False


def test_a_server_stopped_mid_ingest_is_one_line_and_a_retry_completes(tmp_path: Path) -> None:
    """The pool's own warnings (a dropped connection, a failed reconnect) printed on stderr
    beside the one line; what was committed is whole sessions, and a retry stores all."""
    source = tmp_path / "many.jsonl"
    _write_many(source)
    server = start_server()
    try:
        url = server.create_database("mid_ingest")
        ingest = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", "ingest", str(source), "--db", url,
             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not _some_stored(url) and time.monotonic() < deadline:
            time.sleep(0.05)
        server.stop()
        out, err = ingest.communicate(timeout=120)
        assert ingest.returncode == 1, err
        assert json.loads(out)["success"] is False
        (line,) = err.splitlines()
        # Between two batches the next statement finds no server; inside one, the server
        # ends the connection under it as it shuts down.
        assert line.startswith("harkback: ingested ") and (
            "cannot reach the PostgreSQL" in line
            or "ended the connection in the middle of a statement" in line), line
        server = restarted(server)
        _whole_sessions_then_all(url, source)
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def _whole_sessions_then_all(url: str, source: Path) -> None:
    """An interrupted ingest stored some sessions, each whole; ingesting again stores all."""
    sessions, messages, partial = _counts(url)
    assert (partial, messages) == (0, sessions * TURNS) and 0 < sessions < SESSIONS
    again = harkback("ingest", str(source), "--db", url)
    assert again.returncode == 0, again.stderr
    assert _counts(url) == (SESSIONS, SESSIONS * TURNS, 0)


BOUND_S = 20.0
"""A generous bound on an answer due after ~4 s (connect_timeout=2: 2 s unanswered, 2 s for
a new connection); the old code waited for good."""


def _waiting_for_a_lock(url: str) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if waits_for_a_lock(url):
            return
        time.sleep(0.05)
    raise AssertionError("no statement came to wait for the lock")


def _ended(process: subprocess.Popen[str]) -> tuple[float, str]:
    """How long ``process`` took to end from now (killed past the bound), and its stderr."""
    started = time.monotonic()
    try:
        _, err = process.communicate(timeout=BOUND_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"still waiting after {BOUND_S} s") from None
    return time.monotonic() - started, err


def test_a_search_whose_server_freezes_is_one_line_within_its_bound(tmp_path: Path) -> None:
    """The server's processes stopped while a search waits on it: one line, exit 1, in
    seconds; it waited for good."""
    server = start_server()
    try:
        url = server.create_database("frozen_search") + "&connect_timeout=2"
        source = tmp_path / "some.jsonl"  # 200 sessions: 20 went in one send, and no log came
        source.write_text(json.dumps({"id": "s1", "messages": [
            {"role": "user", "content": "docker bridge"}]}) + "\n", encoding="utf-8")
        assert harkback("ingest", str(source), "--db", url).returncode == 0
        with psycopg.connect(url) as blocker:
            blocker.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
            search = subprocess.Popen(
                [sys.executable, "-m", "harkback.pipeline.cli", "search", "docker", "--db",
                 url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            _waiting_for_a_lock(url)
            with server.frozen():
                took, err = _ended(search)
        assert search.returncode == 1
        (line,) = err.splitlines()
        assert line.startswith("harkback: session store unavailable: cannot reach the "
                               "PostgreSQL server of postgresql://harkback@/frozen_search"), line
        assert "no answer for 2 s, nor to a new connection within 2 s" in line
        assert took < BOUND_S
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def test_a_server_frozen_mid_ingest_is_one_line_and_leaves_whole_sessions(
        tmp_path: Path) -> None:
    """Frozen between two batches or inside one: one line within the bound; once the server
    goes on, what it committed is whole sessions (the batch cut short is rolled back), and a
    retry stores all."""
    source = tmp_path / "many.jsonl"
    _write_many(source)
    server = start_server()
    try:
        url = server.create_database("frozen_ingest") + "&connect_timeout=2"
        ingest = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", "ingest", str(source), "--db", url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not _some_stored(url) and time.monotonic() < deadline:
            time.sleep(0.05)
        with server.frozen():
            took, err = _ended(ingest)
        assert ingest.returncode == 1, err
        (line,) = err.splitlines()
        # Which wait sees the freeze first (a statement's, or a new connection's on another
        # of the store's threads) decides the reason given after this.
        assert line.startswith("harkback: ingested ") and "cannot reach the PostgreSQL" in line
        assert took < BOUND_S
        _whole_sessions_then_all(url, source)
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def test_a_connection_lost_mid_write_is_the_one_line_only(url: str, tmp_path: Path) -> None:
    """The driver's own log line ("error ignored terminating <psycopg.Pipeline [BAD] at
    0x...>: the connection is lost") was printed on stderr beside the command's line
    when the server dropped the connection in the middle of a batch's upserts."""
    source = tmp_path / "some.jsonl"  # 200 sessions: 20 went in one send, and no log came
    source.write_text("".join(json.dumps({"id": f"s{i}", "messages": [
        {"role": "user", "content": f"docker bridge {i}"}]}) + "\n" for i in range(200)),
        encoding="utf-8")
    assert harkback("migrate", "--db", url).returncode == 0
    with psycopg.connect(url) as holder:
        # Reads of sessions go on; the batch's upserts wait, inside the driver's pipeline.
        holder.execute("LOCK TABLE sessions IN SHARE MODE")
        ingest = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", "ingest", str(source), "--db", url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _waiting_for_a_lock(url)
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE wait_event_type = 'Lock'")
        _, err = ingest.communicate(timeout=120)
    assert ingest.returncode == 1, err
    (line,) = err.splitlines()
    assert line.startswith("harkback: ingested 0 session(s)") and "stopped: " in line
    assert not _some_stored(url)


@pytest.mark.parametrize(("command", "mode"), [("ingest", "SHARE"),
                                              ("stats", "ACCESS EXCLUSIVE")])
def test_a_lock_someone_left_held_is_one_line_within_the_lock_wait(
        url: str, tmp_path: Path, command: str, mode: str) -> None:
    """A transaction left open on another connection, holding a lock on the store's tables:
    an ingest's write (its reads go on beside a SHARE lock) and stats (no read bound: it
    counts the whole store) waited for good, without a word."""
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "docker bridge"}]}) + "\n", encoding="utf-8")
    assert harkback("ingest", str(source), "--db", url).returncode == 0
    source.write_text(json.dumps({"id": "s2", "messages": [
        {"role": "user", "content": "nginx cors"}]}) + "\n", encoding="utf-8")
    with psycopg.connect(url) as holder:
        holder.execute(f"LOCK TABLE messages IN {mode} MODE")
        process = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", command,
             *([str(source)] if command == "ingest" else []), "--db", url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "HARKBACK_PG_LOCK_TIMEOUT": "1"})
        _, err = _ended(process)
    assert process.returncode == 1, err
    (line,) = err.splitlines()
    assert line.endswith("gave up waiting for a lock another connection holds on the store's "
                         "tables (another harkback's write or upkeep, or a transaction left "
                         "open; $HARKBACK_PG_LOCK_TIMEOUT sets how long to wait)"), line


@pytest.mark.parametrize("seconds", ["3000000", "1e308"])
def test_a_lock_wait_past_what_the_server_takes_is_named_not_a_refused_connection(
        url: str, tmp_path: Path, seconds: str) -> None:
    """``$HARKBACK_PG_LOCK_TIMEOUT`` past 2,147,483 s (``lock_timeout`` counts its ms in 32
    bits): 35 days made every command say the server "refused the connection", and 1e308
    was an internal error (exit 70, ``OverflowError``). The variable is named, with what
    it may be; the most it may be still works."""
    source = tmp_path / "one.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "docker bridge"}]}) + "\n", encoding="utf-8")
    assert harkback("ingest", str(source), "--db", url).returncode == 0
    for command in (("search", "docker"), ("ingest", str(source))):
        done = harkback(*command, "--db", url, env={"HARKBACK_PG_LOCK_TIMEOUT": seconds})
        assert done.returncode == 1, done.stderr
        assert done.stderr == (
            "harkback: session store unavailable: HARKBACK_PG_LOCK_TIMEOUT is more than the "
            "2,147,483 seconds (about 24 days) PostgreSQL's lock_timeout takes: "
            f"'{seconds}'; 0 is no limit\n")
    most = harkback("search", "docker", "--db", url,
                    env={"HARKBACK_PG_LOCK_TIMEOUT": "2147483"})
    assert most.returncode == 0, most.stderr
