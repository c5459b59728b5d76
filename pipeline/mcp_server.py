"""``harkback mcp``: the tools of :mod:`harkback.pipeline.mcp_tools` as an MCP server on stdio.

Built on the official ``mcp`` SDK (the ``mcp`` extra), which only this module imports;
the ``mcp`` command imports this module only once it knows the SDK is there. A result is
the command's JSON payload, as text and as structured content; a failure is a tool error
(``isError``) whose text is the one line the command would print.

The client's ``initialize`` and ``tools/list`` are answered with the SDK and
:mod:`~harkback.pipeline.mcp_specs` alone: an agent's client gives a server 10 s to start
(Codex by default), and on a loaded 2-core machine the stages, stores and model client,
loaded before the first answer, took several of them. The rest
(:mod:`~harkback.pipeline.mcp_calls`) loads at the first tool call, in a worker thread
(:class:`Deferred`), and the store is opened then
(:class:`~harkback.pipeline.mcp_store.LazyStore`): a missing database, or a part that
cannot be loaded, is a tool error and a line on stderr, not a failed start, and the next
call tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import sys
import threading
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

import attrs
import mcp.types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from returns.result import Failure, Result

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.pipeline.answer_bounds import bounded_error
from harkback.pipeline.command_loop import short_of
from harkback.pipeline.config import store_kind
from harkback.pipeline.mcp_specs import TOOLS
from harkback.pipeline.mcp_stdin import StdinLines
from harkback.pipeline.settings import Settings
from harkback.pipeline.terminal import line_of

if TYPE_CHECKING:
    from harkback.pipeline.mcp_calls import ToolCalls

_INSTRUCTIONS = ("Recall of the user's past AI-agent sessions: session_search finds sessions "
                 "about a question, recent_sessions lists the latest, read_session pages "
                 "through one session's messages by id.")


def _text(text: str, *, error: bool, structured: dict[str, Any] | None = None
          ) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=structured, is_error=error)


def _error(line: str) -> types.CallToolResult:
    # bounded_error is imported with this module (a few small modules, 6 ms of CPU), not
    # here: the reply to a failed load of the stages imported them on the event loop
    # (0.09 s), and raised again when one of them was the broken part.
    return _text(bounded_error(line), error=True)


def _said(line: str) -> None:
    # The server's log: stdout carries only the protocol.
    print(line_of(f"harkback: {line}"), file=sys.stderr, flush=True)


class Deferred:
    """The tool calls of :mod:`~harkback.pipeline.mcp_calls` over the store of
    ``settings``, loaded at the first call: imported in a daemon thread (about 0.15 s of
    CPU on a 2-core machine, 0.4 s with a model's ``openai`` SDK; on the event loop it
    would hold up every other message), then made. A part that cannot be loaded is one
    line, said on stderr, and tried again at the next call.

    >>> from pathlib import Path
    >>> from harkback.pipeline.settings import effective
    >>> given = effective({"db": "h.db"}, {}, path=Path("/nonexistent")).unwrap()
    >>> asyncio.run(Deferred(given).call("x", {}, modules=("no_such_module_here",)))
    <Failure: cannot load the server's tools (No module named 'no_such_module_here')>
    """

    def __init__(self, settings: Settings, limits: Mapping[str, Any] | None = None) -> None:
        self._settings, self._limits = settings, limits
        self._calls: ToolCalls | None = None
        self._loading = asyncio.Lock()

    async def call(self, name: str, arguments: Mapping[str, Any] | None,
                   modules: tuple[str, ...] = ()) -> Result[dict[str, Any], str]:
        """The tool's payload, or the one line saying why not (``modules``: imported
        before the calls, as a model's client is)."""
        async with self._loading:  # calls arriving together load it once
            if self._calls is None:
                try:
                    await _in_daemon_thread(modules + self._modules())
                # Any error a module's code raised (a broken install: a SyntaxError, a
                # ValueError) too: it reached the SDK, a traceback on stderr, no tool error.
                except Exception as error:
                    line = f"cannot load the server's tools ({_why(error)})"
                    _said(line)
                    return Failure(line)
                from harkback.pipeline.mcp_calls import ToolCalls  # imported just now

                self._calls = ToolCalls(self._settings, self._limits, said=_said)
        return await self._calls.call(name, arguments)

    def _modules(self) -> tuple[str, ...]:
        model = _chat(self._settings, self._limits) is not None
        return ("harkback.pipeline.mcp_calls",
                *(("harkback.adapters.models.openai_chat",) if model else ()))

    async def aclose(self) -> None:
        """Close what the calls opened (the store, the model's connection)."""
        if self._calls is not None:
            await self._calls.aclose()


async def _in_daemon_thread(modules: tuple[str, ...]) -> None:
    """Import ``modules`` in a daemon thread, awaited: an executor's thread
    (:func:`asyncio.to_thread`) is joined at exit, and SIGTERM or the client's closing of
    stdin during a slow load waited for the load to end (an import held 60 s: 60 s)."""
    import importlib

    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: Exception | None) -> None:
        if done.done():  # its wait was cancelled
            return
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)

    def load() -> None:
        error: Exception | None = None
        try:
            for module in modules:
                importlib.import_module(module)
        except Exception as raised:
            error = raised
        with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped
            loop.call_soon_threadsafe(settle, error)

    threading.Thread(target=load, daemon=True, name="harkback-mcp-load").start()
    await done


def _why(error: Exception) -> str:
    """An import's error as a tool error says it (its kind where the text may not)."""
    if isinstance(error, (ImportError, OSError, MemoryError, RuntimeError)):
        return short_of(error) or str(error)
    return f"{type(error).__name__}: {error}"


def _chat(settings: Settings, limits: Mapping[str, Any] | None) -> ChatSettings | None:
    # The configured model, as the calls will find it (no client is made here).
    return ChatSettings.from_env(settings.model_environment(), **(limits or {}))


def _version() -> str:
    try:
        return version("harkback")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0"


def build_server(calls: Deferred, settings: Settings | None = None, *,
                 model_named: bool = False) -> Server[Any]:
    """The MCP server answering ``tools/list`` and ``tools/call`` with ``calls``, listing a
    search's default limit from ``settings`` (the command line's) and, when
    ``model_named``, a search as reaching out to the model's endpoint."""

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
                                     open_world_hint=name == "session_search" and model_named)

    async def call(_ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
                   ) -> types.CallToolResult:
        outcome = await calls.call(params.name, params.arguments)
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
    if chosen is None or store_kind(chosen) != "sqlite":
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


def unwrapped_broken_pipe(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """What the SDK's task group raised, as the command line takes it: the
    :class:`BrokenPipeError` inside the group when every error in it is one (the client
    stopped reading stdout: the command ends quietly, status 141, as a reader of any
    command's output going away ends it: :func:`~harkback.pipeline.cli_stdout.reader_gone`
    does that), else the group. The group itself was an internal error,
    "ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)", status 70.

    >>> unwrapped_broken_pipe(ExceptionGroup("g", [BrokenPipeError(32, "Broken pipe")]))
    BrokenPipeError(32, 'Broken pipe')
    >>> mixed = ExceptionGroup("g", [BrokenPipeError(), ValueError()])
    >>> unwrapped_broken_pipe(mixed) is mixed
    True
    """
    pipes, others = group.split(BrokenPipeError)
    if pipes is None or others is not None:
        return group
    pipe: BaseException = pipes
    while isinstance(pipe, BaseExceptionGroup):  # nested groups around one broken pipe
        pipe = pipe.exceptions[0]
    return pipe


def short_inside(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The error inside the SDK's task group when every error in it is the process
    running short of a limit (:func:`~harkback.pipeline.command_loop.short_of`: a line on
    stdin longer than ``ulimit -v`` lets the reader hold), which the command line says in
    one line, exit status 1; else None. The group was an internal error, status 70.

    >>> short_inside(ExceptionGroup("g", [MemoryError()]))
    MemoryError()
    >>> short_inside(ExceptionGroup("g", [MemoryError(), ValueError()])) is None
    True
    """
    short, others = group.split(lambda error: short_of(error) is not None)
    if short is None or others is not None:
        return None
    error: BaseException = short
    while isinstance(error, BaseExceptionGroup):  # nested groups around one error
        error = error.exceptions[0]
    return error


async def serve(settings: Settings, limits: Mapping[str, Any] | None = None) -> None:
    """Serve the tools over stdin and stdout until the client closes the connection, with
    the command line's effective settings (db, model, embedder, limit), a relative store
    path taken from the folder it started in (:func:`anchored`)."""
    settings = anchored(settings)
    calls = Deferred(settings, limits)
    server = build_server(calls, settings, model_named=_chat(settings, limits) is not None)
    try:
        # A duplicate of fd 0, so closing this reader never closes sys.stdin.
        stdin = StdinLines(io.TextIOWrapper(os.fdopen(os.dup(0), "rb"), encoding="utf-8",
                                            errors="replace"))
        async with stdio_server(stdin=stdin) as (read, write):
            await server.run(read, write, server.create_initialization_options())
    except BaseExceptionGroup as group:
        raise (short_inside(group) or unwrapped_broken_pipe(group)) from None
    finally:
        await calls.aclose()
