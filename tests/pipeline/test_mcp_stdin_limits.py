"""``harkback mcp`` given a line on stdin longer than its memory limit lets it read or
mend: it ends in one line, where it waited for good.

The limit is set on the running server (``prlimit``), once its first call has loaded
everything, a little above what it holds then; the line is a real pipe's.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from harkback.pipeline import mcp_stdin
from harkback.pipeline.mcp_stdin import StdinLines
from tests.pipeline.test_mcp_first_load import _CALL, _HANDSHAKE
from tests.pipeline.test_mcp_server import _environment, db

__all__ = ["db"]  # the store fixture, shared with the server's own tests

HEADROOM = 64 * 2**20
"""Bytes of address space the server may add once its limit is set."""
LINE = 512 * 2**20
"""Bytes of the line sent then: more than the headroom, whatever the reader copies."""


def _address_space(pid: int) -> int:
    """The bytes of address space process ``pid`` holds (VmSize)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize")


@contextmanager
def limited(db: Path, headroom: int) -> Iterator[subprocess.Popen[bytes]]:
    """``harkback mcp --db DB`` after its handshake and a first call, limited then to
    ``headroom`` bytes of address space more than it holds (killed after 120 s)."""
    server = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=_environment())
    guard = threading.Timer(120, server.kill)
    guard.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(_HANDSHAKE + _CALL)
        server.stdin.flush()
        answers = [json.loads(server.stdout.readline()) for _ in range(2)]
        assert [a["id"] for a in answers] == [1, 2] and not answers[1]["result"]["isError"]
        limit = _address_space(server.pid) + headroom
        resource.prlimit(server.pid, resource.RLIMIT_AS, (limit, limit))
        yield server
    finally:
        guard.cancel()
        if server.poll() is None:
            server.kill()
            server.wait()


def _ping(server: subprocess.Popen[bytes], chunk: bytes, chunks: int) -> None:
    """A ping whose ``x`` is ``chunk`` times ``chunks``, written a chunk at a time."""
    assert server.stdin is not None
    try:
        server.stdin.write(b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"x": ')
        for _ in range(chunks):
            server.stdin.write(chunk)
        server.stdin.write(b"}}\n")
        server.stdin.flush()
    except BrokenPipeError:  # the server ended while reading it
        pass


def test_a_line_past_the_memory_limit_ends_the_server_in_one_line(db: Path) -> None:
    """The thread reading stdin died of the MemoryError (a traceback on stderr) and the
    server waited for good, its client unanswered; mending there, since lines are mended
    in that thread, did the same. Now the server ends: one line, exit status 1."""
    with limited(db, HEADROOM) as server:
        _ping(server, b"1" * 2**20, LINE // 2**20)
        status = server.wait()
        said = server.stderr.read().decode() if server.stderr else ""
    assert status == 1, said
    assert said.startswith("harkback: out of memory (this process may use ")
    assert len(said.splitlines()) == 1


def test_a_line_of_many_short_numbers_is_mended_in_little_memory(db: Path) -> None:
    """Mending looked for a number too long to parse among all the line's runs of digits
    kept at once: a 30 MB string of "12a" held 700 MB, past a limit 256 MB above the
    server's size. Each run is let go now, and the ping is answered."""
    with limited(db, 256 * 2**20) as server:
        _ping(server, b'"' + b"12a" * 10 * 2**20 + b'"', 1)
        assert server.stdin is not None and server.stdout is not None
        answer = server.stdout.readline()
        server.stdin.close()
        status = server.wait()
        said = server.stderr.read().decode() if server.stderr else ""
    assert (status, said) == (0, "")
    assert json.loads(answer) == {"jsonrpc": "2.0", "id": 3, "result": {}}


async def test_a_line_that_cannot_be_mended_fails_the_read(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """An error while mending a line, in the reading thread, killed that thread: the
    read waited for good. Now the read raises it (the server then ends, as above)."""
    def short(line: str) -> str:
        raise MemoryError

    monkeypatch.setattr(mcp_stdin, "mended", short)
    read, write = os.pipe()
    os.write(write, b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
    lines = StdinLines(os.fdopen(read, encoding="utf-8"))
    try:
        with pytest.raises(MemoryError):
            await asyncio.wait_for(lines.readline(), 60)
    finally:
        os.close(write)
        lines.wrapped.close()

