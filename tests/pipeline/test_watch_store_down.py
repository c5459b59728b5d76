"""``sync --watch`` on a store that is unavailable for a while (its PostgreSQL server
restarted): the watch says so once, tries again, says when it is back, and stores what
changed meanwhile once."""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from harkback.adapters.stores.postgres import PostgresStore
from tests.pipeline.sync_home import (
    CLAUDE_FILE,
    CLAUDE_SESSION,
    DONE_WITH_SKIPS,
    claude_line,
    make_home,
)
from tests.pipeline.test_sync_process import running
from tests.support.postgres_server import PostgresServer, restarted, start_server


@pytest.fixture
def server() -> Iterator[list[PostgresServer]]:
    """A server of this test's own (it is stopped and started again), in a list: the test
    puts the restarted one in its place."""
    held = [start_server()]
    try:
        yield held
    finally:
        held[0].stop()
        shutil.rmtree(held[0].folder, ignore_errors=True)


@contextlib.contextmanager
def _watching(home: Path, url: str) -> Iterator[subprocess.Popen[str]]:
    """``harkback sync --watch --db url`` on ``home``; killed on the way out if running
    (:func:`~tests.pipeline.test_sync_process.watching` drops root's file access, which
    the server's socket folder, of another user, needs)."""
    with running([sys.executable, "-m", "harkback.pipeline.cli", "sync", "--watch", "--db",
                  url], home) as watcher:
        yield watcher


def _messages_with(url: str, word: str) -> int:
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT count(*) FROM messages WHERE content LIKE %s",
                                 (f"%{word}%",)).fetchone()
    return int(row[0]) if row else 0


def _line_with(watcher: subprocess.Popen[str], text: str) -> str:
    """The first stderr line holding ``text`` (bounded: Ctrl-C after 60 s ends the output)."""
    assert watcher.stderr is not None
    bound = threading.Timer(60, watcher.send_signal, (signal.SIGINT,))
    bound.start()
    try:
        return next((line for line in watcher.stderr if text in line), "")
    finally:
        bound.cancel()


def _restarted_then_stopped(watcher: subprocess.Popen[str], server: list[PostgresServer],
                            url: str) -> tuple[str, str, str]:
    """Start the server again, wait for the watch to say it is back and to store the okapi
    line (bounded: 30 s), then stop it: the line, and what it wrote on stdout and stderr."""
    server[0] = restarted(server[0])
    back = _line_with(watcher, "is back")
    deadline = time.monotonic() + 30
    while _messages_with(url, "okapi") == 0 and time.monotonic() < deadline:
        time.sleep(0.1)
    watcher.send_signal(signal.SIGINT)
    out, err = watcher.communicate(timeout=60)
    return back, out, err


def test_a_watch_outlives_its_postgresql_server_restarting(
        tmp_path: Path, server: list[PostgresServer]) -> None:
    """The server stopped while the watch waited: its next round ended the watch
    (``cannot lock the store ... for writing``), so a watch run as a service died at every
    server restart. Now it says once that the store is unavailable and that it tries again,
    then once that it is back, and the transcript appended meanwhile is stored once."""
    home = make_home(tmp_path / "home")
    url = server[0].create_database("watched")
    with _watching(home, url) as watcher:
        _line_with(watcher, "watching ")
        server[0].stop()
        with (home / ".claude" / "projects" / CLAUDE_FILE).open("a", encoding="utf-8") as f:
            f.write(claude_line(CLAUDE_SESSION, "the okapi relay drops frames", "u-okapi"))
        down = _line_with(watcher, "unavailable")
        time.sleep(1.5)  # a few rounds while it is down: still said once
        back, _, err = _restarted_then_stopped(watcher, server, url)
    assert watcher.returncode == DONE_WITH_SKIPS, err
    assert "tries again" in down and "postgresql://" in down, down
    assert "is back" in back, back
    assert "unavailable" not in err and "Traceback" not in err, err
    assert err.rstrip().endswith("stopped watching"), err
    assert _messages_with(url, "okapi") == 1


def test_a_store_that_will_not_come_back_still_ends_the_watch(
        tmp_path: Path, server: list[PostgresServer]) -> None:
    """Its database dropped: the server refuses the connection, which waiting would not
    mend, so the watch ends at once in one line, status 1, not waiting for it."""
    home = make_home(tmp_path / "home")
    url = server[0].create_database("dropped")
    with _watching(home, url) as watcher:
        _line_with(watcher, "watching ")
        with psycopg.connect(server[0].url(), autocommit=True) as connection:
            connection.execute("DROP DATABASE dropped WITH (FORCE)")
        with (home / ".claude" / "projects" / CLAUDE_FILE).open("a", encoding="utf-8") as f:
            f.write(claude_line(CLAUDE_SESSION, "the okapi relay drops frames", "u-okapi"))
        _, err = watcher.communicate(timeout=60)
    assert watcher.returncode == 1, err
    assert 'database "dropped" does not exist' in err and "unavailable" not in err, err


def test_a_watch_stopped_while_it_tries_the_store_again_does_not_call_it_back(
        tmp_path: Path, server: list[PostgresServer]) -> None:
    """Ctrl-C while a try of the store out of reach waited on its connect (a server that
    does not answer): the watch said the store was back and that what changed was synced,
    and ended as if nothing waited. Now it says neither, and ends failing (status 1)."""
    home = make_home(tmp_path / "home")
    url = server[0].create_database("frozen") + "&connect_timeout=4"
    with _watching(home, url) as watcher:
        _line_with(watcher, "watching ")
        with server[0].frozen():
            with (home / ".claude" / "projects" / CLAUDE_FILE).open("a", encoding="utf-8") as f:
                f.write(claude_line(CLAUDE_SESSION, "the okapi relay drops frames", "u-okapi"))
            down = _line_with(watcher, "unavailable")
            # The next try starts about 1 s later and waits up to 4 s for the connect.
            time.sleep(2.5)
            watcher.send_signal(signal.SIGINT)
            _, err = watcher.communicate(timeout=60)
    assert "tries again" in down, down
    assert "is back" not in err and "Traceback" not in err, err
    assert err.rstrip().endswith("stopped watching"), err
    assert watcher.returncode == 1, err
    assert _messages_with(url, "okapi") == 0


def test_a_store_lost_in_the_middle_of_a_round_is_waited_for_as_at_its_start(
        tmp_path: Path, server: list[PostgresServer]) -> None:
    """The server stopped after a round took the sync lock (its store waited on a table
    another connection locked): each round printed ``claude-code: failed: cannot reach``,
    every 2 s, without backing off. Now it says once that the store is unavailable, once
    that it is back, and stores the transcript appended then once."""
    home = make_home(tmp_path / "home")
    url = server[0].create_database("lost")
    with _watching(home, url) as watcher:
        _line_with(watcher, "watching ")
        blocker = psycopg.connect(url)
        blocker.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
        with (home / ".claude" / "projects" / CLAUDE_FILE).open("a", encoding="utf-8") as f:
            f.write(claude_line(CLAUDE_SESSION, "the okapi relay drops frames", "u-okapi"))
        _wait_for_a_waiter(server[0])  # the round has its sync lock and waits on the table
        server[0].stop()
        blocker.close()
        down = _line_with(watcher, "unavailable")
        time.sleep(3)  # a round every 2 s before: none of them says it again
        back, out, err = _restarted_then_stopped(watcher, server, url)
    assert "tries again" in down and "postgresql://" in down, down
    assert "is back" in back, back
    assert "failed:" not in out, out
    assert "unavailable" not in err and "Traceback" not in err, err
    assert _messages_with(url, "okapi") == 1


def _wait_for_a_waiter(server: PostgresServer) -> None:
    """Until a connection of the server waits on a lock (bounded: 30 s)."""
    deadline = time.monotonic() + 30
    with psycopg.connect(server.url(), autocommit=True) as connection:
        while time.monotonic() < deadline:
            row = connection.execute("SELECT count(*) FROM pg_locks WHERE NOT granted"
                                     ).fetchone()
            if row and row[0]:
                return
            time.sleep(0.1)
    raise AssertionError("no round waited on the locked table")


def test_a_watch_started_before_its_server_is_up_waits_for_it(
        tmp_path: Path, server: list[PostgresServer]) -> None:
    """Started while the server was down (a service at boot, before the database is up),
    the watch ended at once, status 1, though it waits out the same outage met between
    rounds. Now it says once that the store is unavailable and that it tries again, then
    that it is back, and syncs what is there."""
    home = make_home(tmp_path / "home")
    url = server[0].create_database("late")
    PostgresStore.open(url).unwrap().close()  # a store made before, as a service's is
    with (home / ".claude" / "projects" / CLAUDE_FILE).open("a", encoding="utf-8") as f:
        f.write(claude_line(CLAUDE_SESSION, "the okapi relay drops frames", "u-okapi"))
    server[0].stop()
    with _watching(home, url) as watcher:
        down = _line_with(watcher, "unavailable")
        server[0] = restarted(server[0])
        back = _line_with(watcher, "is back")
        watching = _line_with(watcher, "watching ")  # its first sync done
        watcher.send_signal(signal.SIGINT)
        _, err = watcher.communicate(timeout=60)
    assert watcher.returncode == DONE_WITH_SKIPS, err
    assert "tries again" in down and "postgresql://" in down, down
    assert "is back" in back and watching, (back, watching)
    assert "Traceback" not in err and err.rstrip().endswith("stopped watching"), err
    assert _messages_with(url, "okapi") == 1
