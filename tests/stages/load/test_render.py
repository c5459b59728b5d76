"""Tests of transcript rendering."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.load.render import (
    CLIP_MARKER,
    clip_middle,
    order_lineage,
    render_lineage,
    render_message,
)
from harkback.stages.records import Message, Session, ToolCall


def _msg(position: int, role: str = "user", content: str = "", session: str = "s",
         **extra: object) -> Message:
    return Message(session_id=session, position=position, role=role,  # type: ignore[arg-type]
                   content=content, **extra)  # type: ignore[arg-type]


def test_user_and_assistant_get_role_prefixes() -> None:
    """User and assistant turns are shown as [USER]: and [ASSISTANT]:."""
    assert render_message(_msg(0, "user", "hello")) == "[USER]: hello"
    assert render_message(_msg(1, "assistant", "hi")) == "[ASSISTANT]: hi"


def test_tool_call_only_turn_lists_the_calls() -> None:
    """An assistant turn with calls and no text shows only the called tools."""
    message = _msg(0, "assistant", "", tool_calls=(ToolCall("1", "read_file"),
                                                   ToolCall("2", "bash")))
    assert render_message(message) == "[ASSISTANT]: [Called: read_file, bash]"


def test_tool_calls_with_text_follow_the_text() -> None:
    """An assistant turn with text and calls shows the text, then the called line."""
    message = _msg(0, "assistant", "Let me look.", tool_calls=(ToolCall("1", "grep"),))
    assert render_message(message) == "[ASSISTANT]: Let me look.\n[Called: grep]"


def test_tool_output_is_labelled_with_its_tool() -> None:
    """Tool output is shown as [TOOL:name]:."""
    assert render_message(_msg(0, "tool", "ok", tool_name="bash")) == "[TOOL:bash]: ok"


def test_long_tool_output_keeps_head_and_tail() -> None:
    """Tool output over 500 characters keeps its first and last 250."""
    output = "H" * 250 + "m" * 1000 + "T" * 250
    block = render_message(_msg(0, "tool", output, tool_name="bash"))
    assert block == "[TOOL:bash]: " + "H" * 250 + CLIP_MARKER + "T" * 250


def test_tool_output_limit_is_configurable() -> None:
    """A smaller tool-output limit cuts shorter."""
    block = render_message(_msg(0, "tool", "abcdefghij", tool_name="t"), tool_output_chars=4)
    assert block == "[TOOL:t]: ab" + CLIP_MARKER + "ij"


def test_user_text_is_never_clipped() -> None:
    """Only tool output is clipped; a long user message stays whole."""
    text = "x" * 2000
    assert render_message(_msg(0, "user", text)) == "[USER]: " + text


@given(st.text(max_size=300), st.integers(min_value=0, max_value=120))
def test_clip_middle_bounds_its_output(text: str, limit: int) -> None:
    """Clipped text holds at most the limit plus the marker, and short text is unchanged."""
    clipped = clip_middle(text, limit)
    if len(text) <= limit:
        assert clipped == text
    else:
        assert len(clipped) == limit + len(CLIP_MARKER)
        assert text.startswith(clipped[:limit // 2])


def test_empty_messages_are_left_out() -> None:
    """A message with nothing to show gets no block and no span."""
    rendered = render_lineage([Session(id="s")], [_msg(0, "user", "a"), _msg(1, "assistant"),
                                                  _msg(2, "user", "b")])
    assert rendered.text == "[USER]: a\n\n[USER]: b"
    assert rendered.span_of("s", 1) is None


def test_spans_point_at_each_message_block() -> None:
    """Every span slices exactly its message's block out of the text."""
    messages = [_msg(2, "user", "second"), _msg(0, "user", "first"),
                _msg(1, "tool", "out", tool_name="ls")]
    rendered = render_lineage([Session(id="s")], messages)
    assert [rendered.text[s.start:s.end] for s in rendered.spans] == [
        "[USER]: first", "[TOOL:ls]: out", "[USER]: second"]


def test_blocks_are_separated_by_blank_lines() -> None:
    """Consecutive messages are separated by one blank line."""
    rendered = render_lineage([Session(id="s")], [_msg(0, "user", "a"),
                                                  _msg(1, "assistant", "b")])
    assert rendered.text == "[USER]: a\n\n[ASSISTANT]: b"


def test_lineage_renders_root_first_then_by_start() -> None:
    """The root comes first, other sessions follow in start order."""
    root = Session(id="r", started_at=50.0)
    later = Session(id="late", parent_session_id="r", started_at=30.0)
    early = Session(id="early", parent_session_id="r", started_at=10.0)
    assert [s.id for s in order_lineage(root, [later, root, early])] == ["r", "early", "late"]


def test_child_never_comes_before_its_parent() -> None:
    """A sub-agent whose clock says it started before its parent still follows it."""
    root = Session(id="r", started_at=1.0)
    cont = Session(id="c", parent_session_id="r", started_at=30.0)
    sub = Session(id="s", parent_session_id="c", started_at=20.0)
    assert [s.id for s in order_lineage(root, [sub, cont])] == ["r", "c", "s"]


def test_continuation_gets_a_continued_header() -> None:
    """A child of a session that ended by compression is announced as a continuation."""
    root = Session(id="r", end_reason="compression")
    cont = Session(id="c", parent_session_id="r")
    rendered = render_lineage([root, cont], [_msg(0, "user", "a", session="r"),
                                             _msg(0, "user", "b", session="c")])
    assert rendered.text == "[USER]: a\n\n--- continued in session c ---\n\n[USER]: b"


def test_delegated_child_gets_a_sub_agent_header() -> None:
    """A child of a session that did not end by compression is a sub-agent, with its source."""
    root = Session(id="r", end_reason="user_exit")
    sub = Session(id="k", parent_session_id="r", source="delegate")
    rendered = render_lineage([root, sub], [_msg(0, "user", "a", session="r"),
                                            _msg(0, "assistant", "b", session="k")])
    assert "--- sub-agent session k (delegate) ---" in rendered.text


def test_child_started_before_compression_is_a_sub_agent() -> None:
    """A compressed session's child that started before the compression was delegated to."""
    root = Session(id="r", end_reason="compression", started_at=0.0, ended_at=100.0)
    sub = Session(id="k", parent_session_id="r", started_at=50.0)
    cont = Session(id="c", parent_session_id="r", started_at=100.0)
    rendered = render_lineage([root, sub, cont], [_msg(0, "user", "a", session="r"),
                                                  _msg(0, "user", "b", session="k"),
                                                  _msg(0, "user", "c", session="c")])
    assert "--- sub-agent session k ---" in rendered.text
    assert "--- continued in session c ---" in rendered.text


def test_spans_of_later_sessions_follow_their_header() -> None:
    """Messages of a second session are found at their span after the header."""
    root = Session(id="r", end_reason="compression")
    cont = Session(id="c", parent_session_id="r")
    rendered = render_lineage([root, cont], [_msg(0, "user", "a", session="r"),
                                             _msg(0, "user", "needle", session="c")])
    span = rendered.span_of("c", 0)
    assert span is not None
    assert rendered.text[span.start:span.end] == "[USER]: needle"


@st.composite
def _lineages(draw: st.DrawFn) -> tuple[Session, list[Session]]:
    """A root and up to 25 sessions with any parents (loops too) and any start times."""
    count = draw(st.integers(0, 25))
    ids = [f"s{i}" for i in range(count)]
    parents = st.sampled_from([None, "r", "elsewhere", *ids])
    starts = st.one_of(st.none(), st.integers(0, 6).map(float))
    sessions = [Session(id=sid, parent_session_id=draw(parents), started_at=draw(starts))
                for sid in ids]
    return Session(id="r", started_at=draw(starts)), sessions


@given(_lineages())
def test_lineage_order_takes_the_earliest_session_ready_each_time(
        lineage: tuple[Session, list[Session]]) -> None:
    """Each next session is the earliest (start, then unknown last, then id) of those whose
    parent is placed or outside the lineage; in a loop none is, and the earliest left goes
    (the order a heap now keeps: scanning every waiting session took 24 s for a chain of
    10,000 whose clocks ran backwards)."""
    root, sessions = lineage
    order = order_lineage(root, sessions)
    assert order[0] == root
    assert sorted(s.id for s in order[1:]) == sorted(s.id for s in sessions)
    inside = {s.id for s in sessions}
    placed = {root.id}
    for session in order[1:]:
        left = [s for s in sessions if s.id not in placed]
        ready = [s for s in left if s.parent_session_id in placed
                 or s.parent_session_id not in inside]
        key = lambda s: (s.started_at is None, s.started_at or 0.0, s.id)  # noqa: E731
        assert session == min(ready or left, key=key)
        placed.add(session.id)
