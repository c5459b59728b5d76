"""The MCP server's tools without the SDK: their handlers (their schemas and argument
check are :mod:`harkback.pipeline.mcp_specs`).

``harkback mcp`` (:mod:`harkback.pipeline.mcp_server`) only relays these over stdio, so
everything here runs, and is tested, without the ``mcp`` package. A handler returns the
JSON payload of the matching command (``search --json``, ``recent --json``) or one line
saying what went wrong, which the server sends as a tool error.

>>> import asyncio
>>> from harkback.adapters.stores.memory import MemoryStore
>>> asyncio.run(call_tool(MemoryStore(), "read_session", {})).failure()
'missing argument: id'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from harkback.pipeline import wiring
from harkback.pipeline.answer_bounds import (
    PAGE_CHARS,
    bounded,
    bounded_children,
    bounded_fields,
    bounded_results,
    within_page,
)
from harkback.pipeline.cli_edges import name_list
from harkback.pipeline.command_basics import error_line
from harkback.pipeline.facade import Harkback, Response
from harkback.pipeline.mcp_specs import TOOLS, check_arguments
from harkback.pipeline.settings import Settings
from harkback.stages.defaults import DEFAULT_LIMIT
from harkback.stages.ports import ChatModel, SessionStore

MODEL_DEADLINE_S = 40.0
"""Seconds for all model calls of one ``session_search`` (the command line's recall has
60): a slow or hung model must leave time for the answer, the words' ranking with a note,
to reach the agent before its client gives up on the call, at 60 s in Codex
(``tool_timeout_sec``) and in clients on MCP's TypeScript SDK. At 60 s it came after."""

NO_MODEL = ("no model configured for summarizer llm: this server was started without one "
            "(harkback mcp reads HARKBACK_MODEL, and OPENAI_BASE_URL for a local server, from "
            "its environment, or model from the config file); extractive needs none")
"""The tool error for ``summarizer: llm`` without a model: the command line's line says
``pass --model NAME``, a flag ``harkback mcp`` does not take."""

def _payload(response: Response) -> Result[dict[str, Any], str]:
    # A failure is the line the command line prints (error_line), not the payload's.
    return response.outcome.map(lambda _: bounded_fields(response.to_payload())).alt(error_line)


def _names(text: str | None) -> tuple[str, ...]:
    # As the command line reads --source: "" stays one empty name, which is refused.
    return () if text is None else tuple(name_list(text))


def recall_settings(settings: Settings | None, summarizer: str | None,
                    limits: Mapping[str, Any] | None = None) -> wiring.RecallSettings:
    """What a search is wired from: the model and embedder the command line would use
    (config file, environment), or none without ``settings``; ``limits`` are the model's
    (``max_concurrency``, ``rate`` ... as ``harkback mcp``'s flags give them)."""
    if settings is None:
        return wiring.RecallSettings(summarizer=summarizer)
    from harkback.adapters.models.chat_settings import ChatSettings  # only for a search

    return wiring.RecallSettings(
        db=settings.db, summarizer=summarizer, embedder=settings.embedder,
        chat=ChatSettings.from_env(settings.model_environment(), **(limits or {})),
        environ=settings.model_environment(os.environ), deadline_s=MODEL_DEADLINE_S)


async def session_search(store: SessionStore, args: Mapping[str, Any],
                         settings: Settings | None = None, model: ChatModel | None = None
                         ) -> Result[dict[str, Any], str]:
    """The ``harkback search --json`` payload for checked ``args``, wired by ``settings``
    (the command line's effective settings) when given, asking ``model`` when given (the
    server's, shared by its calls and left open) for what the wiring would ask a model
    of its own."""
    recall = recall_settings(settings, args["summarizer"])
    if args["summarizer"] == "llm" and recall.chat is None:
        return Failure(NO_MODEL)
    wired = wiring.recall(recall, store)
    if isinstance(wired, Failure):
        return Failure(error_line(wired.failure()))
    harkback = wired.unwrap()
    if model is not None and harkback.model is not None:
        # One client, limiter and semaphore for all calls: each call's own let concurrent
        # searches send max_concurrency requests each, past the rate, a new connection each.
        harkback = attrs.evolve(harkback, model=model)
    limit = args["limit"] or (settings.limit if settings is not None else DEFAULT_LIMIT)
    try:
        response = await harkback.search(
            args["query"], limit=limit, roles=_names(args["role"]), since=args["since"],
            until=args["until"], sources=_names(args["source"]),
            projects=_names(args["project"]), current_session_id=args["current_session"])
    finally:
        await (harkback if model is None else attrs.evolve(harkback, model=None)).aclose()
    return _payload(response).map(bounded_results)


async def recent_sessions(store: SessionStore, args: Mapping[str, Any]
                          ) -> Result[dict[str, Any], str]:
    """The ``harkback recent --json`` payload for checked ``args``."""
    return _payload(await Harkback(store=store).recent(
        limit=args["limit"], since=args["since"], until=args["until"],
        sources=_names(args["source"]), projects=_names(args["project"]),
        current_session_id=args["current_session"]))


async def read_session_page(store: SessionStore, session_id: str, *, around: str | int | None,
                            offset: int | None, limit: int, db: str | None = None
                            ) -> Result[dict[str, Any], str]:
    """The ``harkback show --json`` payload: a page of a session's messages, from
    ``offset`` or centred on the message ``around`` names (an id or a position), each
    message :func:`bounded` (its note naming ``db`` when given)."""
    # The tool's offset defaults to 0; beside ``around`` a 0 means "not given".
    start = offset if around is None else (offset or None)
    page = await Harkback(store=store).read_session(session_id, around=around, offset=start,
                                                    limit=limit)
    if isinstance(page, Failure):
        return Failure(error_line(page.failure()))
    payload = bounded_fields(bounded_children(page.unwrap().to_payload()))
    messages = [bounded(m, db=db) for m in payload["messages"]]
    centre = next((i for i, m in enumerate(messages) if around in (m["id"], m["position"])), 0)
    first, kept = within_page(messages, centre)
    if len(kept) == len(messages):
        return Success({**payload, "messages": messages})
    offset = payload["offset"] + first
    stop = offset + len(kept)
    return Success({**payload, "messages": kept, "offset": offset, "page_chars": PAGE_CHARS,
                    "next_offset": stop if stop < payload["total"] else None})


async def call_tool(store: SessionStore, name: str, arguments: Mapping[str, Any] | None,
                    settings: Settings | None = None, model: ChatModel | None = None
                    ) -> Result[dict[str, Any], str]:
    """Check ``arguments`` for the tool ``name`` and run it on ``store`` (searches wired
    by ``settings`` and asking ``model``, see :func:`session_search`)."""
    spec = TOOLS.get(name)
    if spec is None:
        return Failure(f"unknown tool {name!r}; one of {', '.join(TOOLS)}")
    checked = check_arguments(spec, arguments)
    if isinstance(checked, Failure):
        return Failure(checked.failure())
    args = checked.unwrap()
    if name == "session_search":
        return await session_search(store, args, settings, model)
    if name == "recent_sessions":
        return await recent_sessions(store, args)
    # The note on a cut message names the store when the server was given one: the
    # agent's own shell may lack the server's --db or $HARKBACK_DB.
    db = None if settings is None or settings.origin("db") == "default" else settings.db
    return await read_session_page(store, args["id"], around=args["around"],
                                   offset=args["offset"], limit=args["limit"], db=db)
