"""``harkback mcp``: the tools of :mod:`harkback.pipeline.mcp_tools` as an MCP server on stdio.

Built on the official ``mcp`` SDK (the ``mcp`` extra), which only this module imports;
the ``mcp`` command imports this module only once it knows the SDK is there. A result is
the command's JSON payload, as text and as structured content; a failure is a tool error
(``isError``) whose text is the one line the command would print.

The store is opened at the first call that needs it and kept
(:class:`~harkback.pipeline.mcp_store.LazyStore`): a missing database is a tool error, not
a failed start, and the next call tries again.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import attrs
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from returns.result import Failure

from harkback.pipeline import wiring
from harkback.pipeline.answer_bounds import bounded_error
from harkback.pipeline.mcp_stdin import StdinLines
from harkback.pipeline.mcp_store import LazyStore
from harkback.pipeline.mcp_tools import TOOLS, call_tool, recall_settings
from harkback.pipeline.settings import Settings
from harkback.stages.ports import ChatModel

_INSTRUCTIONS = ("Recall of the user's past AI-agent sessions: session_search finds sessions "
                 "about a question, recent_sessions lists the latest, read_session pages "
                 "through one session's messages by id.")


def _text(text: str, *, error: bool, structured: dict[str, Any] | None = None
          ) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=structured, is_error=error)


def _error(line: str) -> types.CallToolResult:
    return _text(bounded_error(line), error=True)


def _version() -> str:
    try:
        return version("harkback")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0"


def build_server(store: LazyStore, settings: Settings | None = None,
                 model: ChatModel | None = None) -> Server[Any]:
    """The MCP server answering ``tools/list`` and ``tools/call`` over ``store``, searching
    with the model and embedder of ``settings`` (the command line's), through ``model``
    when given (one for all calls, see :func:`serve`)."""

    async def list_tools(_ctx: ServerRequestContext[Any],
                         _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=spec.name, title=spec.title, description=spec.description,
                       input_schema=_schema(spec.name, spec.input_schema),
                       annotations=_annotations(spec.name))
            for spec in TOOLS.values()])

    def _schema(name: str, schema: dict[str, Any]) -> dict[str, Any]:
        # A search's limit defaults to the server's setting ($HARKBACK_LIMIT, the file's
        # limit): listed as a default, as the other tools' are, not only in the prose,
        # which names a variable the agent cannot read.
        if name == "session_search" and settings is not None:
            schema["properties"]["limit"]["default"] = settings.limit
        return schema

    def _annotations(name: str) -> types.ToolAnnotations:
        # Read-only: clients may run them without asking each time, and side by side (the
        # summaries a model writes are a cache). Only a search with a model reaches out, to
        # the model's endpoint, and that may be another machine.
        return types.ToolAnnotations(read_only_hint=True, destructive_hint=False,
                                     idempotent_hint=True,
                                     open_world_hint=name == "session_search" and model is not None)

    async def call(_ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                   ) -> types.CallToolResult:
        async with store.lease() as opened:
            if isinstance(opened, Failure):
                return _error(opened.failure())
            outcome = await call_tool(opened.unwrap(), params.name, params.arguments, settings,
                                      model)
        if isinstance(outcome, Failure):
            return _error(outcome.failure())
        payload = outcome.unwrap()
        return _text(json.dumps(payload, ensure_ascii=False), error=False, structured=payload)

    return Server("harkback", version=_version(), instructions=_INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call)


def anchored(settings: Settings) -> Settings:
    """``settings`` with a relative store path made absolute, from the folder the server
    was started in: an agent's client chooses that folder (Claude Desktop starts servers
    in ``/``), and the agent's own shell is elsewhere, so a read note's ``harkback show
    ... --db h.db`` opened another store, or none, and "no harkback database at h.db"
    named no place the user could find.

    >>> from pathlib import Path
    >>> from harkback.pipeline.settings import effective
    >>> given = effective({"db": "h.db"}, {}, path=Path("/nonexistent")).unwrap()
    >>> anchored(given).db == os.path.join(os.getcwd(), "h.db")
    True
    >>> url = effective({"db": "postgresql://host/h"}, {}, path=Path("/nonexistent")).unwrap()
    >>> anchored(url).db
    'postgresql://host/h'
    """
    chosen = settings.chosen_db
    if chosen is None or wiring.store_kind(chosen) != "sqlite":
        return settings
    path = os.path.expanduser(chosen)
    if os.path.isabs(path):
        return attrs.evolve(settings, chosen_db=path)
    try:
        here = os.getcwd()
    except OSError:  # started in a folder since deleted: the store cannot be opened anyway
        return settings
    # Joined, not normalised: "link/../h.db" is h.db beside the folder link points to, as
    # the system reads it; abspath dropped "link/.." and named a file in this folder.
    return attrs.evolve(settings, chosen_db=os.path.join(here, path))


def reader_gone(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """What the SDK's task group raised, as the command line takes it: a
    :class:`BrokenPipeError` when every error in it is one (the client stopped reading
    stdout: the command ends quietly, status 141, as a reader of any command's output
    going away ends it), else the group. The group itself was an internal error,
    "ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)", status 70.

    >>> reader_gone(ExceptionGroup("g", [BrokenPipeError(32, "Broken pipe")]))
    BrokenPipeError(32, 'Broken pipe')
    >>> type(reader_gone(ExceptionGroup("g", [BrokenPipeError(), ValueError()]))).__name__
    'ExceptionGroup'
    """
    pipes, others = group.split(BrokenPipeError)
    if pipes is None or others is not None:
        return group
    pipe: BaseException = pipes
    while isinstance(pipe, BaseExceptionGroup):  # nested groups around one broken pipe
        pipe = pipe.exceptions[0]
    return pipe


async def serve(settings: Settings, limits: Mapping[str, Any] | None = None) -> None:
    """Serve the tools over stdin and stdout until the client closes the connection, with
    the command line's effective settings (db, model, embedder, limit), a relative store
    path taken from the folder it started in (:func:`anchored`)."""
    settings = anchored(settings)
    recall = recall_settings(settings, None, limits)
    store = LazyStore(settings.db, recall)
    # The configured model, one for all calls: its limits (max_concurrency, rate) hold for
    # the server, and its connection is kept.
    model = None if recall.chat is None else wiring.chat_model(recall.chat)
    server = build_server(store, settings, model)
    try:
        # A duplicate of fd 0, so closing this reader never closes sys.stdin.
        stdin = StdinLines(io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8",
                                            errors="replace"))
        async with stdio_server(stdin=stdin) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    except BaseExceptionGroup as group:
        raise reader_gone(group) from None
    finally:
        if model is not None:
            await model.aclose()
        store.close()
