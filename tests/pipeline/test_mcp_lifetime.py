"""``harkback mcp`` as a long-running server: stopped by a signal, its store changed or
replaced under it. Through the SDK's own client, the server a subprocess started by a
shell that writes down its process id first (``exec``: the id stays the server's)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Conversation
from tests.conftest import conversation
from tests.pipeline.test_mcp_server import _environment, _ok, db
from tests.support.chat_server import ChatServer
from tests.support.processes import running

__all__ = ["db"]  # the store fixture, shared with the server's own tests

STOP_BOUND_S = 15.0
"""A generous bound on a stop due within a second."""


@asynccontextmanager
async def served(db: Path, folder: Path, env: dict[str, str] | None = None
                 ) -> AsyncIterator[tuple[ClientSession, int, Path]]:
    """A client of ``harkback mcp --db DB``, the server's process id and the file its
    standard error goes to."""
    pid_file, errors = folder / "server.pid", folder / "server.err"
    server = StdioServerParameters(
        command="sh", args=["-c", 'echo $$ > "$0"; exec "$@"', str(pid_file), sys.executable,
                            "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
        env={**_environment(), **(env or {})})
    with errors.open("w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session, int(pid_file.read_text()), errors


async def _ended(pid: int) -> float:
    """Seconds until ``pid`` ends (at most :data:`STOP_BOUND_S`, then it is killed)."""
    started = time.monotonic()
    while running(pid) and time.monotonic() - started < STOP_BOUND_S:
        await asyncio.sleep(0.05)
    took = time.monotonic() - started
    if running(pid):
        os.kill(pid, signal.SIGKILL)
    return took


@pytest.mark.parametrize(("sent", "said"), [(signal.SIGTERM, "harkback: terminated"),
                                            (signal.SIGINT, "harkback: interrupted")])
async def test_a_signal_stops_a_server_waiting_for_its_client(
        db: Path, tmp_path: Path, sent: signal.Signals, said: str) -> None:
    """The server read stdin in a thread that a cancellation waited for: SIGTERM (a
    client or service manager stopping it) and Ctrl-C left it running until the client
    sent another line, or for good. It stops now, says so, and leaves the store whole."""
    async with served(db, tmp_path) as (session, pid, errors):
        await _ok(session, "recent_sessions", {})
        os.kill(pid, sent)
        took = await _ended(pid)
    assert took < STOP_BOUND_S
    assert errors.read_text().strip() == said
    with sqlite3.connect(db) as check:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def _store_of(path: Path, *sessions: Conversation) -> Path:
    with SqliteStore.open(path).unwrap() as store:
        asyncio.run(_ingest(store, sessions))
    return path


async def _ingest(store: SqliteStore, sessions: tuple[Conversation, ...]) -> None:
    await store.ingest(list(sessions)).awaitable()


def test_a_store_replaced_under_a_server_with_a_model_is_read_anew(
        db: Path, tmp_path: Path) -> None:
    """With a model the store is writable, and SQLite kept reading and writing the file it
    had opened: a store rebuilt (deleted and made again) or restored (another file moved
    over it) under the server was never seen, its calls answered from the old file, its
    summaries written there. The server opens the file the name leads to now."""
    restored = _store_of(tmp_path / "backup.db", conversation(
        "walrus", ("user", "the walrus migration failed on the replica"), started_at=1.78e9))
    rebuilt = [conversation("narwhal", ("user", "narwhal tusk indexing"), started_at=1.79e9)]

    async def run() -> tuple[list[Any], ...]:
        with ChatServer() as chat:
            env = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": chat.url}
            async with served(db, tmp_path, env) as (session, _pid, _errors):
                await _ok(session, "session_search", {"query": "nginx"})
                os.replace(restored, db)
                after_move = await _ok(session, "session_search", {"query": "walrus"})
                db.unlink()
                with SqliteStore.open(db).unwrap() as store:
                    await _ingest(store, tuple(rebuilt))
                after_rebuild = await _ok(session, "recent_sessions", {})
        return ([r["session_id"] for r in after_move["results"]],
                [r["summary_kind"] for r in after_move["results"]],
                [r["session_id"] for r in after_rebuild["results"]])

    found, kinds, listed = asyncio.run(run())
    assert (found, kinds, listed) == (["walrus"], ["llm"], ["narwhal"])


def test_a_server_started_at_a_terminal_says_what_it_is(db: Path) -> None:
    """A person who types ``harkback mcp`` to try it saw nothing at all: the server waits
    for JSON-RPC on its stdin. At a terminal it now says, on stderr, what it is and how to
    stop it; Ctrl-C then stops it as before."""
    import pty
    import select

    keyboard, terminal = pty.openpty()
    server = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
        stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=_environment())
    os.close(terminal)
    try:
        assert server.stderr is not None
        ready, _, _ = select.select([server.stderr], [], [], 60)
        said = server.stderr.readline().decode() if ready else ""
        server.send_signal(signal.SIGINT)
        status = server.wait(STOP_BOUND_S)
    finally:
        os.close(keyboard)
        if server.poll() is None:
            server.kill()
            server.wait()
    assert said.startswith("harkback: this is an MCP server for an agent to start"), said
    assert "Ctrl-C stops it" in said
    assert status == 130


def test_a_server_started_with_stdin_closed_says_so_in_one_line(db: Path) -> None:
    """``harkback mcp <&-``: nothing to read JSON-RPC from. It was an internal error (a
    stdin of None asked whether it is a terminal); now a usage error saying why."""
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" -m harkback.pipeline.cli mcp --db "$1" <&-',
         sys.executable, str(db)],
        capture_output=True, text=True, env=_environment(), timeout=60)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.startswith("harkback: standard input is closed, and the MCP server "
                                  "reads JSON-RPC there"), done.stderr
    assert len(done.stderr.splitlines()) == 1


def test_a_client_that_stops_reading_ends_the_server_quietly(db: Path) -> None:
    """A client gone from the reading end of stdout (closed it, or died with the server
    left running) made the server's next answer an internal error: "harkback: internal
    error: ExceptionGroup: unhandled errors in a TaskGroup", status 70. It ends as any
    command whose reader went away does: quietly, status 141."""
    calls = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    server = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=_environment())
    assert server.stdin is not None and server.stdout is not None
    assert server.stderr is not None
    try:
        server.stdin.write("".join(json.dumps(c) + "\n" for c in calls).encode())
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        server.stdout.close()  # the client stops reading; its next call's answer has no reader
        server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                       "params": {"name": "recent_sessions",
                                                  "arguments": {}}}).encode() + b"\n")
        server.stdin.flush()
        status = server.wait(timeout=60)
    finally:
        server.kill()
        server.wait()
    assert (status, server.stderr.read()) == (141, b"")
