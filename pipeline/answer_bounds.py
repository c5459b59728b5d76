"""What an agent's answer holds, bounded: a ``read_session`` message (:func:`bounded`) and
page (:func:`within_page`), the lists that grow with the sub-agents a session started (a
search result's ``lineage``, a page's ``lineage.children``), and an error's line.

A Claude Code session that delegated to 2,000 sub-agents made one search result of 126,000
characters (its ``lineage`` named every one) and a ``read_session`` page of 483,000 (its
``children`` did), sent twice (text and structured content) to a client that takes about
100,000 (Claude Code's 25,000 tokens). The MCP tools and the agent tool keep the first
:data:`LIST_ITEMS` of each and count the rest (``lineage_left_out``,
``children_left_out``); the command line's ``--json`` lists them all.

>>> page = {"lineage": {"parent": None, "children": [{"session_id": f"k{i}"} for i in range(3)]}}
>>> bounded_children(page, items=2)["lineage"]
{'parent': None, 'children': [{'session_id': 'k0'}, {'session_id': 'k1'}], 'children_left_out': 1}
"""

from __future__ import annotations

import json
from typing import Any

from harkback.pipeline.output import show_command

# Defined with the defaults, where the MCP tools' descriptions (mcp_specs, which imports
# none of the pipeline) read them too; the server loads this module at its start.
from harkback.stages.defaults import MESSAGE_CHARS as MESSAGE_CHARS
from harkback.stages.defaults import PAGE_CHARS as PAGE_CHARS
from harkback.stages.long_text import clip_middle

ERROR_CHARS = 2_000
"""The most of an error's line an agent is sent (the MCP server's tool errors, the agent
tool's ``error``): the line echoes the argument it refuses, and a megabyte session id,
time or role made a megabyte error, past what clients take from a tool."""
LIST_ITEMS = 20
"""The most ids a search result's ``lineage`` lists, and children a page's lineage
does: its root and first sub-agents or continuations, in the order the payload gives
them. The sessions a result matched are in its ``matched_sessions`` whatever is cut."""


def bounded_results(payload: dict[str, Any], items: int = LIST_ITEMS) -> dict[str, Any]:
    """A ``search`` payload whose results each list at most ``items`` lineage ids, with
    ``lineage_left_out`` counting the rest (a ``recent`` payload, without lineages, as given).

    >>> found = {"mode": "search", "results": [{"lineage": ["r", "a", "b"]}, {"lineage": ["s"]}]}
    >>> bounded_results(found, items=2)["results"]
    [{'lineage': ['r', 'a'], 'lineage_left_out': 1}, {'lineage': ['s']}]
    """
    results = payload.get("results", [])
    if all(len(r.get("lineage", ())) <= items for r in results):
        return payload
    return {**payload, "results": [
        r if len(r.get("lineage", ())) <= items else
        {**r, "lineage": r["lineage"][:items], "lineage_left_out": len(r["lineage"]) - items}
        for r in results]}


def bounded_children(page: dict[str, Any], items: int = LIST_ITEMS) -> dict[str, Any]:
    """A ``show`` payload whose lineage lists at most ``items`` children, with
    ``children_left_out`` counting the rest."""
    lineage = page["lineage"]
    children = lineage["children"]
    if len(children) <= items:
        return page
    return {**page, "lineage": {**lineage, "children": children[:items],
                                "children_left_out": len(children) - items}}


FIELD_CHARS = 500
"""The most characters of a session's title, project, model or source, and of a tool's
name, that an answer holds: a store ingested by a converter that titled each session by
its first message (a pasted log) made a listing of ten sessions half a megabyte. Ids are
never cut: they are what the agent passes back."""
_FIELDS = frozenset({"title", "project", "model", "source", "tool_name", "name"})
_CUT = "…[{left_out:,} characters left out]…"


def bounded_fields(payload: dict[str, Any], chars: int = FIELD_CHARS) -> dict[str, Any]:
    """``payload`` (of ``search``, ``recent`` or ``show``) with each title, project, model,
    source and tool name longer than ``chars`` cut in the middle, saying how much.

    >>> bounded_fields({"results": [{"title": "t" * 30, "session_id": "s" * 12}]}, chars=10)
    {'results': [{'title': 'ttttt…[20 characters left out]…ttttt', 'session_id': 'ssssssssssss'}]}
    """
    def walk(value: Any, key: str | None = None) -> Any:
        if isinstance(value, str):
            return clip_middle(value, chars, _CUT) if key in _FIELDS else value
        if isinstance(value, dict):
            return {k: walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value
    bounded: dict[str, Any] = walk(payload)
    return bounded


def bounded_error(line: str, chars: int = ERROR_CHARS) -> str:
    """``line`` with its middle left out past ``chars`` characters, saying how many.

    >>> bounded_error("unknown role(s) " + "w" * 50, chars=20)
    'unknown ro…[46 characters left out]…wwwwwwwwww'
    """
    return clip_middle(line, chars, _CUT)


def within_page(messages: list[dict[str, Any]], centre: int, bound: int = PAGE_CHARS
                ) -> tuple[int, list[dict[str, Any]]]:
    """The messages around ``centre`` that fit in ``bound`` characters of JSON, taken
    outwards from it, the one before then the one after (``centre`` always), and the
    index of the first one kept.

    >>> page = [{"t": "a" * 10}, {"t": "b" * 10}, {"t": "c" * 10}, {"t": "d" * 10}]
    >>> within_page(page, 0, bound=40)
    (0, [{'t': 'aaaaaaaaaa'}, {'t': 'bbbbbbbbbb'}])
    >>> [m["t"][0] for m in within_page(page, 2, bound=40)[1]]
    ['b', 'c']
    """
    sizes = [len(json.dumps(m, ensure_ascii=False)) for m in messages]
    low, high, used = centre, centre + 1, sizes[centre] if messages else 0
    grew = True
    while grew:
        grew = False
        if low > 0 and used + sizes[low - 1] <= bound:  # what led to it first
            used, low, grew = used + sizes[low - 1], low - 1, True
        if high < len(messages) and used + sizes[high] <= bound:
            used, high, grew = used + sizes[high], high + 1, True
    return low, messages[low:high]


_LEFT_OUT = ("\n...[{{left_out:,}} characters left out here: read_session returns at most "
             "{bound:,} characters of a message; {command} prints it whole]...\n")


def bounded(message: dict[str, Any], bound: int = MESSAGE_CHARS, db: str | None = None
            ) -> dict[str, Any]:
    """A message of a ``show`` payload with its content, and each tool call's arguments,
    cut to ``bound`` characters: head and tail kept, a note of what was left out between
    them, counted in ``content_left_out`` (``arguments_left_out``).

    >>> cut = bounded({"id": "s:4", "content": "a" * 30 + "z" * 30}, bound=20)
    >>> cut["content_left_out"], cut["content"].splitlines()[::2]
    (40, ['aaaaaaaaaa', 'zzzzzzzzzz'])
    >>> note = cut["content"].splitlines()[1]
    >>> note[:43], note.endswith("; harkback show s --around s:4 prints it whole]...")
    ('...[40 characters left out here: read_sessi', True)
    """
    command = show_command(message["id"], db).replace("{", "{{").replace("}", "}}")
    marker = _LEFT_OUT.format(bound=bound, command=command)
    out = dict(message)
    if len(message["content"]) > bound:
        out["content"] = clip_middle(message["content"], bound, marker)
        out["content_left_out"] = len(message["content"]) - bound
    if any(len(call["arguments"]) > bound for call in message.get("tool_calls", ())):
        out["tool_calls"] = [
            call if len(call["arguments"]) <= bound else
            {**call, "arguments": clip_middle(call["arguments"], bound, marker),
             "arguments_left_out": len(call["arguments"]) - bound}
            for call in message["tool_calls"]]
    return out
