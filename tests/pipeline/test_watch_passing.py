"""What ``sync --watch`` waits for and what ends it, as the store says (its error's
``transient`` flag), not as its words read: a lock another connection holds past the lock
wait and a server whose connections are all taken pass; a certificate that stops
verifying does not."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import psycopg
import pytest

from tests.pipeline.sync_home import CLAUDE_FILE, CLAUDE_SESSION, claude_line, make_home
from tests.pipeline.test_watch_store_down import (
    _line_with,
    _messages_with,
    _wait_for_a_waiter,
    _watching,
)
from tests.support.postgres_server import PostgresServer, _as_server_user, start_server


@contextlib.contextmanager
def _server(settings: Sequence[str] = (), *, tls: bool = False) -> Iterator[PostgresServer]:
    """A server of the test's own, with ``settings`` (and TLS on 127.0.0.1 when ``tls``)."""
    server = start_server(tcp=tls, settings=lambda folder: (
        [*settings, *(_tls_settings(folder) if tls else ())]))
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(server.folder, ignore_errors=True)


def _certificate(folder: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made in ``folder`` by openssl."""
    if shutil.which("openssl") is None:
        pytest.fail("these tests make TLS certificates with openssl: install it "
                    "(Debian/Ubuntu: apt-get install openssl)")
    key, cert = folder / f"{name}.key", folder / f"{name}.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1"],
                   check=True, capture_output=True)
    return key, cert


def _tls_settings(folder: Path) -> list[str]:
    key, cert = _certificate(folder, "server")
    _, uid, gid = _as_server_user()
    key.chmod(0o600)  # the server refuses a key others may read
    if uid is not None and gid is not None:
        os.chown(key, uid, gid)
        os.chown(cert, uid, gid)
    return ["-c", "ssl=on", "-c", f"ssl_cert_file={cert}", "-c", f"ssl_key_file={key}"]


def _appended(home: Path) -> None:
    with (home / ".claude" / "projects" / CLAUDE_FILE).open("a", encoding="utf-8") as f:
        f.write(claude_line(CLAUDE_SESSION, "the okapi relay drops frames", "u-okapi"))


_OTHERS = ("FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
           "AND backend_type = 'client backend'")


def _cut_off(server: PostgresServer) -> None:
    """End every other connection to ``server`` (the watch's pool and sync lock) once the
    round the watch makes when its watcher is in place is over (no sync lock held for 1 s),
    and wait until they are gone (each bounded: 30 s): its next round must connect again."""
    with psycopg.connect(server.url(), autocommit=True) as connection:
        quiet = 0
        for _ in range(300):
            held = connection.execute("SELECT count(*) FROM pg_locks WHERE locktype = "
                                      "'advisory' AND granted").fetchone()
            quiet = quiet + 1 if held == (0,) else 0
            if quiet == 10:
                break
            time.sleep(0.1)
        connection.execute(f"SELECT pg_terminate_backend(pid) {_OTHERS}")
        for _ in range(300):
            if connection.execute(f"SELECT count(*) {_OTHERS}").fetchone() == (0,):
                return
            time.sleep(0.1)
    raise AssertionError("the watch's connections did not end")


def _ended(watcher: subprocess.Popen[str], within: float) -> tuple[str, str]:
    """The watcher's stdout and stderr once it ended, or once Ctrl-C ended it after
    ``within`` seconds."""
    try:
        return watcher.communicate(timeout=within)
    except subprocess.TimeoutExpired:
        watcher.send_signal(signal.SIGINT)
        return watcher.communicate(timeout=60)


def _stopped(watcher: subprocess.Popen[str], url: str) -> tuple[str, str]:
    """Ctrl-C once the okapi line is stored (bounded: 30 s); stdout and stderr."""
    for _ in range(300):
        if _messages_with(url, "okapi"):
            break
        with contextlib.suppress(subprocess.TimeoutExpired):
            watcher.wait(timeout=0.1)
    watcher.send_signal(signal.SIGINT)
    return watcher.communicate(timeout=60)


def test_a_lock_held_past_the_lock_wait_in_a_round_is_waited_for(tmp_path: Path) -> None:
    """Another connection held a table past the lock wait (here 1 s, from the URL): each
    round printed ``claude-code: failed: ... gave up waiting for a lock`` on stdout, every
    2 s. Now the watch says once that the store is unavailable, and once that it is back
    when the lock is let go; the line appended meanwhile is stored once."""
    home = make_home(tmp_path / "home")
    with _server() as server:
        url = server.create_database("locked") + "&options=-c%20lock_timeout%3D1000"
        with _watching(home, url) as watcher:
            _line_with(watcher, "watching ")
            with psycopg.connect(url) as blocker:
                blocker.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
                _appended(home)
                _wait_for_a_waiter(server)
                down = _line_with(watcher, "unavailable")
                if down:
                    _wait_for_a_waiter(server)  # a try again, after the first wait
            back = _line_with(watcher, "is back")
            out, err = _stopped(watcher, url)
        stored = _messages_with(url, "okapi")
    assert "gave up waiting for a lock" in down and "tries again" in down, down
    assert "is back" in back, back
    assert "failed:" not in out, out
    assert "unavailable" not in err and "Traceback" not in err, err
    assert stored == 1


def test_a_server_whose_connections_are_all_taken_is_waited_for(tmp_path: Path) -> None:
    """Other clients held every connection the server allows when a round connected again:
    the watch ended (``too many clients``, status 1), as for a refused login. Now it waits,
    says once that the store is unavailable and once that it is back, and stores the line
    appended meanwhile once."""
    home = make_home(tmp_path / "home")
    with _server(["-c", "max_connections=12"]) as server:
        url = server.create_database("crowded")
        with _watching(home, url) as watcher:
            _line_with(watcher, "watching ")
            _cut_off(server)
            crowd: list[psycopg.Connection[tuple[object, ...]]] = []
            with contextlib.ExitStack() as held:
                with contextlib.suppress(psycopg.OperationalError):
                    while len(crowd) < 50:
                        crowd.append(held.enter_context(psycopg.connect(server.url())))
                _appended(home)
                down = _line_with(watcher, "unavailable")
            back = _line_with(watcher, "is back")
            out, err = _stopped(watcher, url)
        stored = _messages_with(url, "okapi")
    assert "too many clients" in down and "tries again" in down, (down, err)
    assert "is back" in back, back
    assert "failed:" not in out, out
    assert "Traceback" not in err, err
    assert stored == 1


def test_a_certificate_that_stops_verifying_ends_the_watch(tmp_path: Path) -> None:
    """The server's certificate no longer verified against the trusted one (replaced, or
    the trust changed) when a round connected again: the watch waited for it as for a
    server restarting, for ever, saying once that the store was unavailable. Waiting does
    not mend that: the watch ends in one line naming it, status 1."""
    home = make_home(tmp_path / "home")
    trusted = tmp_path / "root.crt"
    with _server(tls=True) as server:
        shutil.copy(server.folder / "server.crt", trusted)
        server.create_database("tls")
        url = f"{server.tcp_url('tls')}?sslmode=verify-ca&sslrootcert={trusted}"
        with _watching(home, url) as watcher:
            _line_with(watcher, "watching ")
            shutil.copy(_certificate(tmp_path, "other")[1], trusted)
            _cut_off(server)
            _appended(home)
            _, err = _ended(watcher, within=30)
    assert watcher.returncode == 1, err
    assert "certificate verify failed" in err and "unavailable" not in err, err
    assert "Traceback" not in err, err
