"""A match that straddles where a long tool output is cut (the end of its kept head, the
start of its kept tail) is kept whole: the cut moves past it."""

from __future__ import annotations

import pytest

from harkback.stages.load.render import CLIP_MARKER, TOOL_OUTPUT_CHARS, render_message
from harkback.stages.query import parse_query
from harkback.stages.records import Message

PHRASE = "ECONNREFUSED"
LIMIT = TOOL_OUTPUT_CHARS
HEAD = LIMIT // 2


def _block(output: str) -> str:
    message = Message(session_id="s", position=0, role="tool", content=output, tool_name="curl")
    return render_message(message, units=parse_query(PHRASE).units)


@pytest.mark.parametrize("before_cut", [1, 5, len(PHRASE) - 1])
def test_a_match_running_past_the_head_cut_is_kept_whole(before_cut: int) -> None:
    """The phrase starts ``before_cut`` characters before the head's end."""
    output = "." * (HEAD - before_cut) + PHRASE + "." * 3000 + "z" * 250
    block = _block(output)
    assert PHRASE in block
    assert len(block) <= len("[TOOL:curl]: ") + LIMIT + len(CLIP_MARKER)


@pytest.mark.parametrize("after_cut", [1, 5, len(PHRASE) - 1])
def test_a_match_running_into_the_tail_cut_is_kept_whole(after_cut: int) -> None:
    """The phrase ends ``after_cut`` characters into the kept tail."""
    tail = LIMIT - HEAD
    output = "a" * 250 + "." * 3000 + PHRASE + "." * (tail - after_cut)
    block = _block(output)
    assert PHRASE in block
    assert len(block) <= len("[TOOL:curl]: ") + LIMIT + len(CLIP_MARKER)
