"""The MCP tools as clients see them: names, descriptions, schemas, and the argument check.

Apart from the handlers (:mod:`harkback.pipeline.mcp_tools`), and importing nothing of
the stages, the stores or the SDK: ``harkback mcp`` answers a client's ``initialize`` and
``tools/list`` with this alone, before the rest is loaded (an agent's client gives a
server 10 s to start, Codex by default).

>>> check_arguments(TOOLS["recent_sessions"], {"limit": "5"}).failure()
'limit must be an integer'
>>> check_arguments(TOOLS["read_session"], {}).failure()
'missing argument: id'
>>> check_arguments(TOOLS["recent_sessions"], {"since": [7]}).failure()
'since must be a string or a number'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from harkback.stages.defaults import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    MAX_PAGE_LIMIT,
    MESSAGE_CHARS,
    PAGE_CHARS,
    SUMMARIZER_NAMES,
    TOOL_PAGE_LIMIT,
)
from harkback.stages.shown_number import shown_number

_TIME = ["string", "number"]
_WHEN = ("ISO date (2026-11-01), epoch seconds, a span back from now such as 7d or 24h, or "
         "words: yesterday, this week, last week (Monday to Sunday), 3 days ago, or any time "
         "a question names alone (上周, 先週, 지난주, 'the week before last')")
_SOURCE = {"type": "string", "description": "Only sessions of these sources, comma-separated "
                                            "(codex, claude-code, or a Hermes session's "
                                            "platform: cli, telegram, ...)."}
_PROJECT = {"type": "string", "description": "Only sessions that worked in these project "
                                              "folders (a path or a folder name), "
                                              "comma-separated."}
_CURRENT = {"type": "string", "description": "Your own session's id: its whole lineage is "
                                             "left out of the results."}


@attrs.frozen
class ToolSpec:
    """One tool as listed to clients: its name, what it is for, its input schema, and the
    title a client's interface shows."""

    name: str
    description: str
    properties: Mapping[str, Mapping[str, Any]]
    required: tuple[str, ...] = ()
    title: str = ""

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments, one type each (:func:`listed`)."""
        return {"type": "object", "properties": {k: listed(v) for k, v in self.properties.items()},
                "required": list(self.required), "additionalProperties": False}


def listed(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An argument's schema as clients are shown it: one type. Some model APIs refuse a list
    of types (Gemini's function declarations answer 400), so an argument that takes a
    number or text (``since``: epoch seconds or ``7d``; ``around``: a position or an id) is
    listed as a string, whose digits mean what the number does (``"1770000000"``,
    ``"3"``); a number given still passes :func:`check_arguments`, as before.

    >>> listed({"type": ["string", "integer"], "minimum": 0, "description": "d"})
    {'type': 'string', 'description': 'd'}
    """
    kind = schema["type"]
    if isinstance(kind, str):
        return dict(schema)
    # A number's bounds say nothing of a string; the check still applies them to a number.
    return {"type": "string", **{k: v for k, v in schema.items()
                                 if k not in ("type", "minimum", "maximum")}}


_SEARCH = ToolSpec(
    "session_search",
    "Recall the user's past agent sessions about a question: how a problem was fixed, "
    "where a file was saved, what was decided and why. Returns, per matching session, when "
    "it happened, its id and a summary keeping exact commands, paths and errors. Use the "
    "distinctive words of the topic; \"exact phrase\", OR, NOT and prefix* work. History, "
    "not proof of the present state. Open a result with read_session.",
    {"query": {"type": "string", "description": "What to recall; empty lists recent sessions."},
     "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
               "description": f"How many sessions to return (default: $HARKBACK_LIMIT or limit in "
                              f"the config file, else {DEFAULT_LIMIT})."},
     "since": {"type": _TIME, "description": f"Only messages from then on: {_WHEN}."},
     "until": {"type": _TIME, "description": f"Only messages up to then: {_WHEN}."},
     "role": {"type": "string", "default": "user,assistant",
              "description": "Comma-separated roles to search: user, assistant, tool, system."},
     "source": _SOURCE,
     "project": _PROJECT,
     "current_session": _CURRENT,
     "summarizer": {"type": "string", "enum": list(SUMMARIZER_NAMES),
                    "description": "extractive: the passages that matter; raw: the transcript "
                                   "excerpt; none: metadata only (fastest); llm: a model's "
                                   "summary. Default: llm when a model is configured, else "
                                   "extractive."}},
    ("query",), "Search past sessions")

_RECENT = ToolSpec(
    "recent_sessions",
    "List the user's most recent past sessions (root sessions, newest first) with their ids, "
    "titles, message counts and a preview. Open one with read_session (its session_id).",
    {"limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 10,
               "description": "How many sessions to list."},
     "since": {"type": _TIME, "description": f"Sessions started since: {_WHEN}."},
     "until": {"type": _TIME, "description": f"Sessions started until: {_WHEN}."},
     "source": _SOURCE,
     "project": _PROJECT,
     "current_session": _CURRENT}, title="List recent sessions")

_READ = ToolSpec(
    "read_session",
    "Read one past session's messages by session id, a page at a time: from an offset, or "
    "around a message (its id as search results cite it in matched_message_ids, or its "
    "position). The reply's next_offset is the offset of the next page, null at the end. "
    f"A message's text (or a tool call's arguments) longer than {MESSAGE_CHARS:,} characters "
    "comes with its middle left out: content_left_out (arguments_left_out) counts the "
    "characters, and a note in the text names the command that prints the message whole. "
    f"A page of long messages ends early (page_chars: about {PAGE_CHARS:,} characters a "
    "page); next_offset goes on from there.",
    {"id": {"type": "string", "description": "The session id (session_id of a result)."},
     "around": {"type": ["string", "integer"], "minimum": 0,
                "description": "Centre the page on this message: SESSION_ID:POSITION (as "
                               "matched_message_ids cite it; one in a sub-agent of id reads "
                               "the sub-agent's page) or a position. Not with offset."},
     "offset": {"type": "integer", "minimum": 0, "default": 0,
                "description": "Index of the first message of the page (next_offset). Not "
                               "with around."},
     "limit": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_LIMIT,
               "default": TOOL_PAGE_LIMIT, "description": "Messages per page."}},
    ("id",), "Read a past session")

TOOLS: Mapping[str, ToolSpec] = {t.name: t for t in (_SEARCH, _RECENT, _READ)}
"""The tools by name, in the order they are listed."""


_KINDS: Mapping[str, tuple[str, tuple[type, ...]]] = {
    "string": ("a string", (str,)), "integer": ("an integer", (int,)),
    "number": ("a number", (int, float))}


def _kind_error(name: str, kind: str | list[str], value: object) -> str | None:
    kinds = [kind] if isinstance(kind, str) else kind
    if isinstance(value, bool) or not any(isinstance(value, _KINDS[k][1]) for k in kinds):
        return f"{name} must be {' or '.join(_KINDS[k][0] for k in kinds)}"
    return None


def _whole(kind: str | list[str], value: object) -> object:
    """``value`` as an int where the schema asks for an integer (:func:`whole_number`).

    >>> _whole("integer", 3.0), _whole("integer", 2.5), _whole(["string", "number"], 3.0)
    (3, 2.5, 3.0)
    """
    kinds = [kind] if isinstance(kind, str) else kind
    return whole_number(value) if "integer" in kinds else value


def _check(name: str, schema: Mapping[str, Any], value: object) -> str | None:
    wrong = _kind_error(name, schema["type"], value)
    if wrong is not None:
        return wrong
    if "enum" in schema and value not in schema["enum"]:
        return f"{name} must be one of {', '.join(schema['enum'])}, got {value!r}"
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(value, int) and ((low is not None and value < low)
                                   or (high is not None and value > high)):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        return f"{name} must be {bounds}, got {shown_number(value)}"
    return None


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any] | None
                    ) -> Result[dict[str, Any], str]:
    """The arguments checked against the tool's schema, defaults filled in, or why not.

    >>> check_arguments(TOOLS["session_search"], {"query": "x", "limit": 0}).failure()
    'limit must be between 1 and 10, got 0'
    >>> check_arguments(TOOLS["recent_sessions"], {"colour": 1}).failure()
    'unknown argument: colour (recent_sessions takes limit, since, until, source, project, \
current_session)'
    """
    given = dict(arguments or {})
    unknown = sorted(set(given) - set(spec.properties))
    if unknown:
        return Failure(f"unknown argument: {', '.join(unknown)} "
                       f"({spec.name} takes {', '.join(spec.properties)})")
    missing = [name for name in spec.required if given.get(name) is None]
    if missing:
        return Failure(f"missing argument: {', '.join(missing)}")
    checked: dict[str, Any] = {}
    for name, schema in spec.properties.items():
        value = given.get(name)
        if value is None:
            checked[name] = schema.get("default")
            continue
        value = _whole(schema["type"], value)
        wrong = _check(name, schema, value)
        if wrong is not None:
            return Failure(wrong)
        checked[name] = value
    return Success(checked)


def whole_number(value: object) -> object:
    """``value`` as an int when it is a float with nothing after the point: JSON Schema
    counts ``3.0`` an integer, and a client or model that writes numbers as floats
    (``json.dumps(3.0)``) was told "limit must be an integer". Anything else as given.

    >>> whole_number(3.0), whole_number(2.5), whole_number("3")
    (3, 2.5, '3')
    """
    return int(value) if isinstance(value, float) and value.is_integer() else value
