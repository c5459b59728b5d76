"""``harkback mcp`` answers its client's handshake before loading what only calls need.

An agent's client gives a server little time to answer ``initialize`` (Codex 10 s by
default), and on a loaded 2-core machine the server took 12-16 s: it imported the stages,
the stores, the wiring and, with a model, the ``openai`` SDK before its first answer.
What a process imported is read from ``python -X importtime``, which writes each import
to stderr as it happens: through a real subprocess and the SDK's own client.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.pipeline.test_mcp_server import _environment, _error, _ok, db

__all__ = ["db"]  # the store fixture, shared with the server's own tests

CALLS_ONLY = ("harkback.pipeline.mcp_tools", "harkback.pipeline.wiring",
              "harkback.pipeline.facade", "harkback.adapters.stores.sqlite",
              "harkback.stages.ports", "openai")
"""Modules a tool call needs and the handshake does not (``openai``: with a model)."""


@asynccontextmanager
async def importing(db: Path | str, folder: Path, env: dict[str, str] | None = None
                    ) -> AsyncIterator[tuple[ClientSession, Path]]:
    """A client of ``harkback mcp --db DB`` run under ``-X importtime``, after its
    handshake, and the file its stderr (each import, as it happens) goes to."""
    errors = folder / "server.err"
    server = StdioServerParameters(
        command=sys.executable,
        args=["-X", "importtime", "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
        env={**_environment(), **(env or {})})
    with errors.open("w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session, errors


def loaded(errors: Path) -> set[str]:
    """The modules a ``-X importtime`` log names."""
    return {line.rsplit("|", 1)[1].strip() for line in errors.read_text().splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


async def test_the_handshake_loads_none_of_what_calls_need(db: Path, tmp_path: Path) -> None:
    """``initialize`` and ``tools/list`` are answered with the SDK and the tools' schemas
    alone, a model configured or not; the first call loads the rest, and answers."""
    model = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    async with importing(db, tmp_path, model) as (session, errors):
        listed = await session.list_tools()
        await session.send_ping()
        before = loaded(errors)
        found = await _ok(session, "recent_sessions", {"limit": 1})
        after = loaded(errors)
    assert len(listed.tools) == 3 and listed.tools[0].annotations is not None
    assert listed.tools[0].annotations.open_world_hint  # the model is known without loading
    assert {"mcp", "harkback.pipeline.settings"} <= before  # the log is read as it is written
    assert sorted(set(CALLS_ONLY) & before) == []
    assert set(CALLS_ONLY) <= after
    assert [r["session_id"] for r in found["results"]] == ["cors"]


async def test_a_store_that_cannot_be_opened_is_a_tool_error_and_one_line(
        tmp_path: Path) -> None:
    """A store that cannot be opened still lets the server start; each call is a tool
    error saying why, and the server's log says it once, not once a call."""
    missing = tmp_path / "no-such-folder" / "h.db"
    async with importing(missing, tmp_path) as (session, errors):
        first = await _error(session, "recent_sessions", {})
        second = await _error(session, "session_search", {"query": "docker"})
    said = [line for line in errors.read_text().splitlines()
            if not line.startswith("import time:")]
    assert first == second
    assert first.startswith(f"session store unavailable: no harkback database at {missing}")
    assert said == [f"harkback: {first}"]

