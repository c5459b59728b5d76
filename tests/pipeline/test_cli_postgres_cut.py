"""The CLI when the PostgreSQL server ends harkback's connection in the middle of a
statement: ``pg_terminate_backend`` of the backend (or a fast shutdown) and an immediate
shutdown (``pg_ctl stop -m immediate``: SIGQUIT). Each is made to land on a statement
that waits for a lock another connection holds, so it lands there every run.

The line said "cannot reach the PostgreSQL server of URL: terminating connection due to
administrator command", with no step: it now says the server ended the connection, that
nothing is half-written, and to run the command again; an ingest run again holds each
session once and whole."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations
from tests.support.postgres_server import restarted, start_server

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""

SESSIONS, TURNS = 1_200, 3
"""More sessions than one ingest batch holds (500): batches before the one cut short commit."""

CUT = "ended the connection in the middle of a statement: "
STEP = ("(the server stopped or restarted, or an administrator ended the connection; a "
        "transaction is kept whole or not at all, so nothing is half-written, though the one "
        "cut may have committed: run the command again once the server is up)")


def _lock_waiter(url: str, waits: str = "wait_event_type = 'Lock'") -> int:
    """The id of the backend of ``url``'s database that waits for a lock (or as ``waits``
    says, within 60 s)."""
    deadline = time.monotonic() + 60
    with psycopg.connect(url, autocommit=True) as connection:
        while time.monotonic() < deadline:
            row = connection.execute(
                f"SELECT pid FROM pg_stat_activity WHERE {waits} "
                "AND datname = current_database()").fetchone()
            if row is not None:
                return int(row[0])
            time.sleep(0.05)
    raise AssertionError("no statement came to wait for the lock")


def _terminate(url: str, pid: int) -> None:
    with psycopg.connect(url, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone() == (True,)


def _search(url: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "search", "docker", "--db", url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _one_session(path: Path) -> Path:
    path.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "docker bridge drops packets"}]}) + "\n", encoding="utf-8")
    return path


def test_a_search_whose_backend_is_terminated_says_so_and_to_run_it_again(
        url: str, tmp_path: Path) -> None:
    assert harkback("ingest", str(_one_session(tmp_path / "one.jsonl")),
                    "--db", url).returncode == 0
    with psycopg.connect(url) as blocker:
        blocker.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
        search = _search(url)
        _terminate(url, _lock_waiter(url))
        _, err = search.communicate(timeout=120)
    assert search.returncode == 1, err
    assert err == (f"harkback: session store unavailable: the PostgreSQL server of {url} {CUT}"
                   f"terminating connection due to administrator command {STEP}\n")
    again = harkback("search", "docker", "--db", url)  # the step given works
    assert again.returncode == 0 and "docker bridge" in again.stdout, again.stderr


def test_a_search_cut_by_an_immediate_shutdown_says_so_and_to_run_it_again(
        tmp_path: Path) -> None:
    """No word from the server (its backends quit at once): libpq's "server closed the
    connection unexpectedly"."""
    server = start_server()
    try:
        at = server.create_database("immediate")
        assert harkback("ingest", str(_one_session(tmp_path / "one.jsonl")),
                        "--db", at).returncode == 0
        blocker = psycopg.connect(at)
        blocker.execute("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE")
        search = _search(at)
        _lock_waiter(at)
        server.process.send_signal(signal.SIGQUIT)  # what pg_ctl stop -m immediate sends
        _, err = search.communicate(timeout=120)
        server.process.wait(timeout=60)
        assert search.returncode == 1, err
        (line,) = err.splitlines()
        assert line.startswith(f"harkback: session store unavailable: the PostgreSQL server "
                               f"of {at} {CUT}") and line.endswith(STEP), line
        assert "server closed the connection unexpectedly" in line, line
        server = restarted(server)
        again = harkback("search", "docker", "--db", at)
        assert again.returncode == 0 and "docker bridge" in again.stdout, again.stderr
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def _conversation(i: int) -> dict[str, object]:
    return {"id": f"m{i}", "started_at": 1_772_000_000 + i, "messages": [
        {"role": ("user", "assistant")[t % 2], "content": f"docker bridge {i} turn {t}"}
        for t in range(TURNS)]}


def _stored(url: str) -> tuple[set[str], list[tuple[str, int, str]]]:
    """The session ids stored, and every message row as (session, position, content)."""
    with psycopg.connect(url) as connection:
        ids = [str(r[0]) for r in connection.execute("SELECT id FROM sessions")]
        rows = [(str(s), int(p), str(c)) for s, p, c in connection.execute(
            "SELECT session_id, position, content FROM messages ORDER BY 1, 2")]
    assert len(ids) == len(set(ids))
    return set(ids), rows


def _whole(ids: set[str], rows: list[tuple[str, int, str]],
           expected: dict[str, list[str]]) -> None:
    """Each session of ``ids`` holds exactly its messages of ``expected``, once each."""
    assert {s for s, _, _ in rows} <= ids
    assert rows == sorted((s, p, c) for s in ids for p, c in enumerate(expected[s]))


def test_an_ingest_cut_between_batches_keeps_whole_sessions_and_a_rerun_stores_each_once(
        url: str, tmp_path: Path) -> None:
    """m700 is stored first with other text, and another connection holds its row: the
    ingest's first batch (m0-m499) commits, the second upserts its sessions up to m700 and
    waits there, and its backend is terminated. The line says so; the store holds the first
    batch whole and m700 as it was (the cut batch rolled back); the ingest run again holds
    every session once, each with all its messages (m700 the file's)."""
    source = tmp_path / "many.jsonl"
    conversations = [_conversation(i) for i in range(SESSIONS)]
    source.write_text("".join(json.dumps(c) + "\n" for c in conversations), encoding="utf-8")
    expected = {str(c["id"]): [m["content"] for m in c["messages"]]  # type: ignore[attr-defined]
                for c in conversations}
    before = tmp_path / "before.jsonl"
    before.write_text(json.dumps({"id": "m700", "messages": [
        {"role": "user", "content": "an older text"}]}) + "\n", encoding="utf-8")
    assert harkback("ingest", str(before), "--db", url).returncode == 0
    with psycopg.connect(url) as holder:
        holder.execute("SELECT FROM sessions WHERE id = 'm700' FOR UPDATE")
        ingest = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", "ingest", str(source), "--db", url],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _terminate(url, _lock_waiter(url))
        _, err = ingest.communicate(timeout=120)
    assert ingest.returncode == 1, err
    (line,) = err.splitlines()
    assert line.startswith("harkback: ingested 500 session(s) (500 added, 0 updated, 0 "
                           "unchanged)"), line
    # The batch's upserts go in the driver's pipeline, whose read of the answer fails
    # first: "server closed the connection unexpectedly".
    assert CUT in line and line.endswith(STEP), line
    ids, rows = _stored(url)
    assert ids == {f"m{i}" for i in range(500)} | {"m700"}
    _whole(ids, rows, {**expected, "m700": ["an older text"]})
    again = harkback("ingest", str(source), "--db", url)
    assert again.returncode == 0, again.stderr
    ids, rows = _stored(url)
    assert ids == set(expected)
    _whole(ids, rows, expected)


def test_an_ingest_whose_commit_is_cut_is_not_said_to_be_rolled_back(tmp_path: Path) -> None:
    """A COMMIT waiting for a synchronous standby (one that is down) has committed on the
    server; its backend terminated, the line said "the statement's transaction was rolled
    back", and "ingested 0 session(s)", while the store held the session. The line now says
    the one cut may have committed; run again, the session is there once."""
    server = start_server(settings=lambda _: ("-c", "synchronous_commit=on",  # tests' is off
                                              "-c", "synchronous_standby_names=ghost"))
    try:
        no_wait = "&options=-csynchronous_commit%3Dlocal"  # to make the database and store
        with psycopg.connect(server.url() + no_wait, autocommit=True) as admin:
            admin.execute("CREATE DATABASE standby")
        at, local = server.url("standby"), server.url("standby") + no_wait
        assert harkback("migrate", "--db", local).returncode == 0
        ingest = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", "ingest",
             str(_one_session(tmp_path / "one.jsonl")), "--db", at],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _terminate(local, _lock_waiter(local, "wait_event = 'SyncRep'"))
        _, err = ingest.communicate(timeout=120)
        assert ingest.returncode == 1, err
        (line,) = err.splitlines()
        assert CUT in line and line.endswith(STEP) and "rolled back" not in line, line
        ids, _ = _stored(local)
        assert ids == {"s1"}  # committed, as the line allows
        assert harkback("ingest", str(tmp_path / "one.jsonl"), "--db", local).returncode == 0
        assert _stored(local)[0] == {"s1"}
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)
