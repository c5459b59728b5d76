"""``harkback mcp`` while it mends a line of megabytes of brackets: its other calls go on,
and SIGTERM stops it. Written on the server's pipes as a client would write them (the SDK's
own client cannot send such a line); the calls' model is a local scripted endpoint."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from tests.pipeline.test_mcp_server import _environment, db
from tests.support.chat_server import ChatServer, Received, Reply

__all__ = ["db"]  # the store fixture, shared with the server's own tests

BRACKETS = 6_000_000
"""Arrays opened, then closed: a 12 MB line, which took about 3 s to mend."""

_HANDSHAKE: list[dict[str, Any]] = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"}]


def _lines(*messages: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(m).encode() + b"\n" for m in messages)


def _reply(out: IO[bytes]) -> dict[str, Any]:
    line = out.readline()
    assert line, "the server ended without answering"
    answer: dict[str, Any] = json.loads(line)
    return answer


def _until(condition: Any, what: str) -> None:
    # A wait for the server's side to get somewhere, bounded so a broken server fails.
    for _ in range(1200):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


def test_a_call_is_answered_and_sigterm_stops_the_server_while_a_line_is_mended(
        db: Path) -> None:
    """The brackets of each line past 100 levels are mended before the SDK parses it; that
    ran on the server's event loop, so a 12 MB line of brackets held up every call in
    flight, and SIGTERM, for about 3 s. It runs in the thread that reads stdin now: a
    search whose model answers once that line is sent is answered before it, and
    SIGTERM then stops the server as it says it does (status 143, one line)."""
    gate = threading.Event()

    def held(_received: Received) -> Reply:
        gate.wait(60)  # the model answers once the long line is on its way
        return Reply()

    with ChatServer(held) as chat:
        env = {**_environment(), "HARKBACK_MODEL": "m", "OPENAI_BASE_URL": chat.url,
               "OPENAI_API_KEY": "k"}
        server = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        guard = threading.Timer(120, server.kill)
        guard.start()
        try:
            assert server.stdin is not None and server.stdout is not None
            search = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
                "name": "session_search", "arguments": {"query": "nginx", "limit": 1}}}
            server.stdin.write(_lines(*_HANDSHAKE, search))
            server.stdin.flush()
            assert _reply(server.stdout)["id"] == 1
            _until(lambda: chat.received, "the search asked its model")
            # Written whole (the server has read all but a pipe's buffer of it), then the
            # model answers: the search's answer comes while the line is mended.
            server.stdin.write(b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": '
                               b'{"x": ' + b"[" * BRACKETS + b"]" * BRACKETS + b"}}\n")
            server.stdin.flush()
            gate.set()
            first = _reply(server.stdout)
            server.send_signal(signal.SIGTERM)
            status = server.wait()
            said = server.stderr.read().decode() if server.stderr else ""
        finally:
            guard.cancel()
            gate.set()
            if server.poll() is None:
                server.kill()
    assert first["id"] == 2 and not first["result"]["isError"], first
    assert first["result"]["structuredContent"]["results"][0]["session_id"] == "nginx-long"
    assert (status, said) == (128 + signal.SIGTERM, "harkback: terminated\n")
