"""What an agent's answer holds, bounded: the lists that grow with the sub-agents a session
started (a search result's ``lineage``, a page's ``lineage.children``), and an error's line.

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

from typing import Any

from harkback.stages.load.render import clip_middle

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


def bounded_error(line: str, chars: int = ERROR_CHARS) -> str:
    """``line`` with its middle left out past ``chars`` characters, saying how many.

    >>> bounded_error("unknown role(s) " + "w" * 50, chars=20)
    'unknown ro…[46 characters left out]…wwwwwwwwww'
    """
    return clip_middle(line, chars, "…[{left_out:,} characters left out]…")
