"""``harkback mcp``: the tools of :mod:`harkback.pipeline.mcp_tools` as an MCP server on stdio.

Built on the official ``mcp`` SDK (the ``mcp`` extra), which only this module imports;
the ``mcp`` command imports this module only once it knows the SDK is there. A result is
the command's JSON payload, as text and as structured content; a failure is a tool error
(``isError``) whose text is the one line the command would print.

The store is opened once, at the first call that needs it, and kept for the server's
life: a missing database is a tool error, not a failed start, and the next call tries
again. It is opened as ``harkback search`` opens it: read-only, or writable when a model
is configured, so its summaries are cached and an agent asking again pays nothing (a file
that cannot be written, or of an older schema, stays read-only). Either connection sees
what later imports commit.
"""

from __future__ import annotations

import io
import json
import os
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from returns.result import Failure, Result, Success

from harkback.pipeline import wiring
from harkback.pipeline.command_basics import error_line
from harkback.pipeline.mcp_stdin import StdinLines
from harkback.pipeline.mcp_tools import TOOLS, call_tool, recall_settings
from harkback.pipeline.settings import Settings
from harkback.stages.ports import SessionStore

_INSTRUCTIONS = ("Recall of the user's past AI-agent sessions: session_search finds sessions "
                 "about a question, recent_sessions lists the latest, read_session pages "
                 "through one session's messages by id.")


class LazyStore:
    """The store of ``db``, opened at first use and kept until :meth:`close`: read-only,
    or as a recall wired by ``recall`` (whose ``db`` is ``db``) opens it, writable to cache
    model summaries."""

    def __init__(self, db: str, recall: wiring.RecallSettings | None = None) -> None:
        self.db = db
        self.recall = recall
        self._store: SessionStore | None = None

    def get(self) -> Result[SessionStore, str]:
        """The open store, or why it cannot be opened (tried again next time)."""
        if self._store is None:
            try:
                opened = (wiring.open_store(self.db, readonly=True) if self.recall is None
                          else wiring.open_for_recall(self.recall))
            except OSError as error:  # in a folder that cannot be entered: is_file() raises
                return Failure(f"{error.filename or self.db}: {error.strerror or error}")
            if isinstance(opened, Failure):
                return Failure(error_line(opened.failure()))
            self._store = opened.unwrap()
        return Success(self._store)

    def close(self) -> None:
        """Close the store if it was opened."""
        if self._store is not None:
            self._store.close()
            self._store = None


def _text(text: str, *, error: bool, structured: dict[str, Any] | None = None
          ) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=structured, is_error=error)


def _version() -> str:
    try:
        return version("harkback")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0"


def build_server(store: LazyStore, settings: Settings | None = None) -> Server[Any]:
    """The MCP server answering ``tools/list`` and ``tools/call`` over ``store``, searching
    with the model and embedder of ``settings`` (the command line's)."""

    async def list_tools(_ctx: ServerRequestContext[Any],
                         _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=spec.name, description=spec.description,
                       input_schema=spec.input_schema) for spec in TOOLS.values()])

    async def call(_ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                   ) -> types.CallToolResult:
        opened = store.get()
        if isinstance(opened, Failure):
            return _text(opened.failure(), error=True)
        outcome = await call_tool(opened.unwrap(), params.name, params.arguments, settings)
        if isinstance(outcome, Failure):
            return _text(outcome.failure(), error=True)
        payload = outcome.unwrap()
        return _text(json.dumps(payload, ensure_ascii=False), error=False, structured=payload)

    return Server("harkback", version=_version(), instructions=_INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call)


async def serve(settings: Settings) -> None:
    """Serve the tools over stdin and stdout until the client closes the connection, with
    the command line's effective settings (db, model, embedder, limit)."""
    store = LazyStore(settings.db, recall_settings(settings, None))
    server = build_server(store, settings)
    try:
        # A duplicate of fd 0, so closing this reader never closes sys.stdin.
        stdin = StdinLines(io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8",
                                            errors="replace"))
        async with stdio_server(stdin=stdin) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        store.close()
