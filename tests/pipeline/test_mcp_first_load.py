"""``harkback mcp``'s first tool call, which loads the stages and stores, when that load
fails or hangs: a module of the install is broken, or its import never ends.

The broken module is ``snowballstemmer`` (which only the calls import) shadowed through
``PYTHONPATH`` by one that raises, or that waits; the server is a real subprocess.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import harkback.stages
from tests.pipeline.test_mcp_server import _environment, _error, db
from tests.pipeline.test_mcp_startup import importing

__all__ = ["db"]  # the store fixture, shared with the server's own tests

_HANDSHAKE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": '
    b'"2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}\n'
    b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
_CALL = (b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
         b'"recent_sessions", "arguments": {}}}\n')


def _shadowed(folder: Path, code: str) -> dict[str, str]:
    """An environment whose ``snowballstemmer`` runs ``code`` when imported."""
    shadow = folder / "shadow"
    shadow.mkdir()
    (shadow / "snowballstemmer.py").write_text(code)
    return {"PYTHONPATH": str(shadow)}


async def test_a_module_raising_at_its_import_is_a_tool_error_each_call(
        db: Path, tmp_path: Path) -> None:
    """A ValueError (or SyntaxError) from a module of a broken install reached the SDK:
    a traceback on the server's stderr and a JSON-RPC error, no tool error. Now each call
    is a tool error naming it, said in one line on stderr, and the next call tries again."""
    broken = _shadowed(tmp_path, 'raise ValueError("a broken install")\n')
    async with importing(db, tmp_path, broken) as (session, errors):
        first = await _error(session, "recent_sessions", {})
        second = await _error(session, "session_search", {"query": "docker"})
    said = [line for line in errors.read_text().splitlines()
            if not line.startswith("import time:")]
    assert first == second == "cannot load the server's tools (ValueError: a broken install)"
    assert said == [f"harkback: {first}"] * 2


def test_sigterm_stops_the_server_while_its_first_call_loads(db: Path, tmp_path: Path
                                                             ) -> None:
    """The first call's modules were imported in an executor's thread, which the
    interpreter joins at exit: SIGTERM during a load that took long waited for it to end
    (a load of 600 s: 600 s). The server now ends as SIGTERM ends it otherwise."""
    mark = tmp_path / "loading"
    env = {**_environment(), **_shadowed(
        tmp_path, f"import pathlib, time\npathlib.Path({str(mark)!r}).touch()\ntime.sleep(600)\n")}
    server = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    guard = threading.Timer(120, server.kill)  # the load's 600 s, were SIGTERM to wait
    guard.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(_HANDSHAKE + _CALL)
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1
        for _ in range(1200):  # until the call's load is under way
            if mark.exists():
                break
            time.sleep(0.05)
        server.send_signal(signal.SIGTERM)
        status = server.wait()
        said = server.stderr.read().decode() if server.stderr else ""
    finally:
        guard.cancel()
        if server.poll() is None:
            server.kill()
    assert mark.exists()
    assert (status, said) == (128 + signal.SIGTERM, "harkback: terminated\n")


def _install_with(folder: Path, module: str, code: str) -> dict[str, str]:
    """An environment whose harkback is a copy of this one with ``module`` (a path under
    the package) replaced by ``code``: an install of which one file is broken."""
    copy = folder / "install" / "harkback"
    shutil.copytree(Path(harkback.stages.__file__).parents[1], copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (copy / module).write_text(code)
    return {"PYTHONPATH": str(copy.parent)}


async def test_a_broken_module_the_error_reply_needs_is_still_a_tool_error(
        db: Path, tmp_path: Path) -> None:
    """The reply to a failed load imported the module bounding an error's length, on the
    event loop, and with it the stages it needs (0.09 s of CPU): when one of those was the
    broken one, the reply raised it again, and the client had no tool error, only the
    SDK's. The reply now imports nothing."""
    broken = _install_with(tmp_path, "stages/query.py", 'raise ValueError("a broken install")\n')
    async with importing(db, tmp_path, broken) as (session, errors):
        first = await _error(session, "recent_sessions", {})
        second = await _error(session, "read_session", {"session_id": "cors"})
    said = [line for line in errors.read_text().splitlines()
            if not line.startswith("import time:")]
    assert first == second == "cannot load the server's tools (ValueError: a broken install)"
    assert said == [f"harkback: {first}"] * 2
