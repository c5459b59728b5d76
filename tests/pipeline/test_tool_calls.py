"""The agent tool (``handle_session_search``) called as models call it, on a real SQLite
store: what its schema declares is what it reads, and nothing else passes silently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.tool import SESSION_SEARCH_TOOL, handle_session_search
from tests.pipeline.test_mcp_server import db

__all__ = ["db"]  # the store fixture: docker-fix, nginx-long and cors


async def _called(db: Path, arguments: str | dict[str, Any]) -> dict[str, Any]:
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        text = await handle_session_search(Harkback(store=store), arguments)
    payload: dict[str, Any] = json.loads(text)
    return payload


@pytest.mark.parametrize("arguments", [
    '{"query": "nginx", "since": "7d"}',
    '{"query": "nginx", "role": "tool"}',
    {"query": "nginx", "source": "codex"},
    {"query": "nginx", 1: 2, None: 3},
])
async def test_an_argument_the_schema_does_not_declare_is_refused(db: Path,
                                                                   arguments: Any) -> None:
    """The schema says additionalProperties: false, yet a model's "since" (or "role" for
    role_filter) was dropped without a word: the answer, unfiltered, passed for a
    filtered one. It is refused, naming what the tool takes (a Python caller's name that
    is no string too: sorting and joining them raised TypeError)."""
    payload = await _called(db, arguments)
    takes = ", ".join(SESSION_SEARCH_TOOL["function"]["parameters"]["properties"])
    assert payload["success"] is False
    assert payload["error"].startswith("unknown argument: ")
    assert payload["error"].endswith(f"(session_search takes {takes})")


async def test_null_is_an_argument_left_out(db: Path) -> None:
    """Models write null for what they leave out (OpenAI's strict mode must): a null limit
    was "limit must be an integer", where the MCP tools read it as not given."""
    given = await _called(db, '{"query": "nginx", "limit": null, "role_filter": null}')
    left_out = await _called(db, '{"query": "nginx"}')
    assert given["success"] is True and given["count"] > 0
    assert given["results"] == left_out["results"]


@pytest.mark.parametrize("arguments", [
    {"query": "nginx", "role_filter": "wizard" * 200_000},
    {"query": "nginx", "x" * 1_000_000: 1},
])
async def test_an_error_echoing_a_megabyte_argument_is_bounded(db: Path,
                                                               arguments: Any) -> None:
    """The error echoed the argument it refused whole: a megabyte role gave a megabyte
    answer into the model's context. It keeps the line's head and tail, as the MCP
    server's tool errors do."""
    payload = await _called(db, arguments)
    assert payload["success"] is False and len(payload["error"]) < 2_100
    assert "characters left out]" in payload["error"]
    assert payload["error"].startswith(("query rejected: unknown role(s) wizard",
                                        "unknown argument: xxx"))


async def test_a_limit_past_what_str_can_write_is_refused(db: Path) -> None:
    """A runner hands the tool its arguments parsed: a limit of 5,001 digits raised
    ValueError (str() refuses past 4,300) from the line that was to refuse it, a traceback
    out of the handler where a {"success": false} was due."""
    payload = await _called(db, {"query": "nginx", "limit": 10 ** 5000})
    assert payload == {"success": False, "error": "query rejected: limit must be between 1 "
                                                  "and 10, got a number of more than 30 digits"}
