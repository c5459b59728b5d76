"""The bulk write's shortcuts write what the plain forms wrote: tool calls laid out as
``json.dumps`` lays them out."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.sql.rows import encode_tool_calls
from harkback.stages.records import ToolCall

TEXT = st.text(st.characters(codec="utf-8"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, TEXT), max_size=3))
def test_tool_calls_are_the_text_json_dumps_gives(calls: list[tuple[str, str, str]]) -> None:
    """Quotes, backslashes, control characters and any Unicode come out as ``json.dumps``
    (``ensure_ascii=False``, compact) writes them, which older harkback stored."""
    records = tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls)
    expected = json.dumps(
        [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
         for c in records], ensure_ascii=False, separators=(",", ":")) if records else None
    assert encode_tool_calls(records) == expected
