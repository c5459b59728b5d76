"""The ``session_search`` agent tool: an OpenAI function-calling schema and its handler.

>>> SESSION_SEARCH_TOOL["function"]["name"]
'session_search'
"""

from __future__ import annotations

import json
from typing import Any

from harkback.pipeline.answer_bounds import bounded_error, bounded_fields, bounded_results
from harkback.pipeline.facade import Harkback
from harkback.pipeline.mcp_specs import whole_number
from harkback.pipeline.terminal import json_text
from harkback.stages.defaults import DEFAULT_LIMIT, MAX_LIMIT

_DESCRIPTION = """\
Recall what happened in the user's past sessions with you: how a problem was fixed, \
where a file or script was saved, which option was chosen and why. Returns, per matching \
past session, when it happened and a summary that keeps exact commands, paths and error \
messages.

Call it when the user refers to earlier work ("like last time", "the script you wrote", \
"how did we fix ...", "what did we decide about ..."), or before redoing something that \
was probably done before. Do not call it for facts about the world or for the current \
session (its own content is left out). It is history, not proof of the present state: \
check files and systems directly before acting on what it says, and don't conclude that \
something never happened only because this found nothing.

Query tips: use the distinctive words of the topic (error text, tool, file or project \
names); a natural question works too. Syntax for precision: "exact phrase", OR, NOT, \
prefix*. An empty query lists recent sessions. Use a larger limit (5-10) when a topic \
spans several sessions."""

SESSION_SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "session_search",
        "description": _DESCRIPTION,
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string",
                          "description": "What to recall; empty to list recent sessions."},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                          "default": DEFAULT_LIMIT,
                          "description": "How many past sessions to return."},
                "role_filter": {"type": "string",
                                "description": "Comma-separated roles to search: user, "
                                               "assistant, tool, system (default user,assistant)."},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    },
}


def _error(message: str) -> str:
    return json_text({"success": False, "error": bounded_error(message)})


def _arguments(raw: str | dict[str, Any]) -> dict[str, Any] | str:
    """The call's arguments as a dict, or why they cannot be.

    >>> _arguments(None)
    'tool arguments must be a JSON object, got NoneType'
    >>> _arguments('{"limit": ' + "9" * 5000 + "}")[:39]
    'tool arguments are not valid JSON: Exce'
    """
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str | bytes):  # None from a runner whose model sent no arguments
        return f"tool arguments must be a JSON object, got {type(raw).__name__}"
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as error:
        return f"tool arguments are not valid JSON: {error.msg}"
    except (ValueError, RecursionError) as error:
        # A number of more than 4,300 digits, or arrays nested thousands deep: json's own
        # limits, which it raises as other errors than JSONDecodeError.
        return f"tool arguments are not valid JSON: {str(error).split(';')[0]}"[:200]
    return parsed if isinstance(parsed, dict) else "tool arguments must be a JSON object"


def _a_facade(harkback: object, name: str) -> None:
    """Refuse a store (or anything else) given where the facade is taken: it failed as
    "'SqliteStore' object has no attribute 'call_sync'" (or 'search')."""
    if not isinstance(harkback, Harkback):
        raise TypeError(f"{name} takes a Harkback facade, got {type(harkback).__name__}: "
                        f"{name}(Harkback(store=store), arguments)")


async def handle_session_search(harkback: Harkback, arguments: str | dict[str, Any], *,
                                current_session_id: str | None = None) -> str:
    """Run the tool for one call's arguments and return the JSON payload as text."""
    _a_facade(harkback, "handle_session_search")
    given = _arguments(arguments)
    if isinstance(given, str):
        return _error(given)
    takes = SESSION_SEARCH_TOOL["function"]["parameters"]["properties"]
    unknown = sorted(str(name) for name in set(given) - set(takes))  # a caller's 1 or None
    if unknown:  # a "since" the model believed filtered, or a misspelt "role"
        return _error(f"unknown argument: {', '.join(unknown)} (session_search takes "
                      f"{', '.join(takes)})")
    # null is "not given", as the MCP tools read it: models write it for what they leave out.
    args = {name: value for name, value in given.items() if value is not None}
    query = args.get("query", "")
    limit = args.get("limit", DEFAULT_LIMIT)
    roles = args.get("role_filter") or "user,assistant"
    if not isinstance(query, str):
        return _error("query must be a string")
    limit = whole_number(limit)
    if not isinstance(limit, int) or isinstance(limit, bool):
        return _error("limit must be an integer")
    if not isinstance(roles, str):
        return _error("role_filter must be a comma-separated string")
    response = await harkback.search(
        query, limit=limit, current_session_id=current_session_id,
        roles=tuple(r.strip() for r in roles.split(",") if r.strip()))
    payload = response.to_payload()
    if not payload["success"]:  # the line echoes what it refuses: a megabyte role, say
        return _error(payload["error"])
    # UTF-8 whatever the arguments held: half a character escaped in them is U+FFFD.
    return json_text(bounded_fields(bounded_results(payload)))


def handle_session_search_sync(harkback: Harkback, arguments: str | dict[str, Any], *,
                               current_session_id: str | None = None) -> str:
    """:func:`handle_session_search` for synchronous tool runners.

    Works from plain code, from worker threads and from code already running inside an
    event loop (an agent gateway calling a sync handler); see :meth:`Harkback.call_sync`.
    """
    _a_facade(harkback, "handle_session_search_sync")
    return harkback.call_sync(lambda: handle_session_search(
        harkback, arguments, current_session_id=current_session_id))
