"""Tests of the ingest format: one session per JSON line into a Conversation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.result import Failure, Success

from harkback.stages.errors import BadRecord
from harkback.stages.ingest_format import (
    conversation_from_json,
    conversation_to_json,
    parse_line,
    parse_lines,
    read_line,
)
from harkback.stages.records import (
    EARLIEST_EPOCH,
    LATEST_EPOCH,
    ROLES,
    Conversation,
    Message,
    Session,
    ToolCall,
)


def _read(obj: object) -> Conversation:
    result = conversation_from_json(obj)
    assert isinstance(result, Success), result
    conversation: Conversation = result.unwrap()
    return conversation


def _reason(obj: object) -> str:
    result = conversation_from_json(obj)
    assert isinstance(result, Failure), result
    reason: str = result.failure().reason
    return reason


def _line_failure(line: str, number: int = 5) -> BadRecord:
    result = parse_line(line, number)
    assert isinstance(result, Failure), result
    error: BadRecord = result.failure()
    return error


def test_reads_every_session_field() -> None:
    """All documented session keys land in the Session record."""
    conv = _read({"id": "s1", "source": "telegram", "model": "m", "title": "T",
                  "started_at": 100, "ended_at": 200.5, "parent_session_id": "p",
                  "end_reason": "compression", "project": "/home/me/code/api"})
    assert conv.session == Session(id="s1", source="telegram", model="m", title="T",
                                   started_at=100.0, ended_at=200.5, parent_session_id="p",
                                   end_reason="compression", project="/home/me/code/api")


def test_missing_optional_fields_take_defaults() -> None:
    """A session with only an id is valid and empty."""
    assert _read({"id": "s1"}) == Conversation(Session(id="s1"), ())


def test_unknown_keys_are_ignored() -> None:
    """Extra keys at session, message and tool-call level do not matter."""
    conv = _read({"id": "s", "extra": [1, 2], "messages": [
        {"role": "assistant", "content": "x", "usage": {"tokens": 3},
         "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}, "x": 1}]}]})
    assert conv.messages[0].tool_calls == (ToolCall(id="c", name="f", arguments="{}"),)


def test_naive_iso_time_is_utc() -> None:
    """An ISO time without an offset is read as UTC."""
    conv = _read({"id": "s", "started_at": "2026-03-03T14:15:00"})
    assert conv.session.started_at == 1772547300.0


def test_iso_time_offset_is_honoured() -> None:
    """An ISO time with an offset is converted to the same instant in epoch seconds."""
    conv = _read({"id": "s", "started_at": "2026-03-03T16:15:00+02:00",
                  "ended_at": "2026-03-03T14:15:00Z"})
    assert conv.session.started_at == conv.session.ended_at == 1772547300.0


def test_message_timestamp_accepts_iso_and_epoch() -> None:
    """Message timestamps use the same time rules as session times."""
    conv = _read({"id": "s", "messages": [
        {"role": "user", "timestamp": "2026-01-01"},
        {"role": "user", "timestamp": 12.5}]})
    assert [m.timestamp for m in conv.messages] == [1767225600.0, 12.5]


def test_positions_follow_list_order() -> None:
    """Messages are numbered 0, 1, 2 ... in the order given."""
    conv = _read({"id": "s", "messages": [{"role": r} for r in ("system", "user", "assistant")]})
    assert [(m.position, m.role) for m in conv.messages] == [
        (0, "system"), (1, "user"), (2, "assistant")]


def test_null_content_becomes_empty_text() -> None:
    """A tool-call-only assistant turn with content null has empty content."""
    conv = _read({"id": "s", "messages": [{"role": "assistant", "content": None}]})
    assert conv.messages[0].content == ""


def test_content_parts_are_joined() -> None:
    """OpenAI-style content parts keep their text and drop non-text parts."""
    conv = _read({"id": "s", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "first"}, {"type": "image_url", "image_url": {"url": "u"}},
        "second"]}]})
    assert conv.messages[0].content == "first\nsecond"


def test_object_arguments_are_stored_as_json_text() -> None:
    """Tool-call arguments given as an object are kept as an equivalent JSON string."""
    args = {"command": "docker network ls", "timeout": 30, "路径": "~/bin"}
    conv = _read({"id": "s", "messages": [{"role": "assistant", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": args}}]}]})
    call = conv.messages[0].tool_calls[0]
    assert (call.name, json.loads(call.arguments)) == ("terminal", args)


def test_string_arguments_are_kept_verbatim() -> None:
    """Tool-call arguments given as a string are not re-encoded."""
    raw = '{"cmd":  "ls"}'
    conv = _read({"id": "s", "messages": [{"role": "assistant", "tool_calls": [
        {"id": "c1", "function": {"name": "terminal", "arguments": raw}}]}]})
    assert conv.messages[0].tool_calls[0].arguments == raw


def test_flat_tool_calls_are_accepted() -> None:
    """A tool call without the ``function`` wrapper is read the same way."""
    conv = _read({"id": "s", "messages": [{"role": "assistant", "tool_calls": [
        {"id": "c1", "name": "read_file", "arguments": {"path": "/etc/hosts"}}]}]})
    assert conv.messages[0].tool_calls[0] == ToolCall(
        id="c1", name="read_file", arguments='{"path": "/etc/hosts"}')


def test_tool_message_fields_are_read() -> None:
    """A tool output keeps its tool name and the id of the call it answers."""
    conv = _read({"id": "s", "messages": [
        {"role": "tool", "content": "ok", "tool_name": "terminal", "tool_call_id": "c1"}]})
    message = conv.messages[0]
    assert (message.tool_name, message.tool_call_id) == ("terminal", "c1")


def test_empty_parent_means_root() -> None:
    """An empty parent_session_id is the same as none."""
    assert _read({"id": "s", "parent_session_id": ""}).session.is_root


def test_missing_id_is_rejected() -> None:
    """A session without an id is a bad record."""
    assert _reason({"messages": []}).startswith("id: expected a non-empty string")


def test_blank_id_is_rejected() -> None:
    """A whitespace-only id is a bad record."""
    assert _reason({"id": "  "}).startswith("id: expected a non-empty string")


def test_numeric_id_is_rejected() -> None:
    """Ids are strings; a number is a bad record rather than silently converted."""
    assert _reason({"id": 42}) == "id: expected a non-empty string, got 42"


def test_own_parent_is_rejected() -> None:
    """A session naming itself as parent is a bad record."""
    assert _reason({"id": "s", "parent_session_id": "s"}).startswith("parent_session_id")


def test_a_nul_in_a_source_project_or_tool_call_id_is_a_bad_line() -> None:
    """Such a line was read, then the store refused its whole batch (storable): it is a
    bad line naming the field, as a NUL in a session id is."""
    call = {"role": "assistant", "tool_calls": [{"id": "c\x001", "name": "bash"}]}
    name, call_id = "a source or project name", "a tool call id"
    for fields, said in (({"source": "cli\x00x"}, f"source: {name}"),
                         ({"project": "/w\x00"}, f"project: {name}"),
                         ({"messages": [{"role": "tool", "tool_call_id": "c\x001"}]},
                          f"messages[0].tool_call_id: {call_id}"),
                         ({"messages": [{"role": "user"}, call]},
                          f"messages[1].tool_calls[0].id: {call_id}")):
        assert _line_failure(json.dumps({"id": "s", **fields})).message() == (
            f"line 5: {said} cannot hold a NUL character"), fields


def test_unknown_role_is_rejected_with_its_position() -> None:
    """A role outside user/assistant/tool/system names the message and the value."""
    reason = _reason({"id": "s", "messages": [{"role": "user"}, {"role": "bot"}]})
    assert reason == "messages[1].role: expected one of user, assistant, tool, system, got 'bot'"


@pytest.mark.parametrize(("record", "field", "end"), [
    ({"id": "s", "messages": [{"role": "r" * 5000}]}, "messages[0].role",
     "got '" + "r" * 60 + "…'"),
    ({"id": "s", "messages": [{"role": {"parts": list(range(2000))}}]}, "messages[0].role",
     "got {'parts': [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,…"),
    ({"id": list(range(3000))}, "id",
     "got [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 1…"),
    ({"id": "s", "started_at": 10**300}, "started_at", "got a number of more than 30 digits"),
    ({"id": "s", "started_at": "y" * 5000}, "started_at", "time: '" + "y" * 60 + "…'"),
    ({"id": "s", "messages": [{"role": "caf\udce9"}]}, "messages[0].role", "got 'caf\ufffd'")])
def test_a_long_bad_value_is_named_cut_short(record: dict[str, Any], field: str,
                                             end: str) -> None:
    """A file's role, id or time that is no such thing is named in one short line, its value
    cut by the rule of every echo of what someone gave (60 characters and "…", a long
    number in words): a 5,000-character role was echoed whole, then cut to 57 and "..."."""
    reason = _reason(record)
    assert reason.startswith(f"{field}: ") and reason.endswith(end), (len(reason), reason[-80:])


def test_missing_role_is_rejected() -> None:
    """Every message needs a role."""
    assert _reason({"id": "s", "messages": [{"content": "hi"}]}).startswith("messages[0].role")


def test_wrong_content_type_is_rejected() -> None:
    """Content that is a number is a bad record naming the field."""
    reason = _reason({"id": "s", "messages": [{"role": "user", "content": 3}]})
    assert reason == "messages[0].content: expected a string, a list of parts or null, got a number"


def test_messages_must_be_a_list() -> None:
    """An object in place of the message list is a bad record."""
    assert _reason({"id": "s", "messages": {"role": "user"}}) == (
        "messages: expected a list, got an object")


def test_wrong_string_field_type_is_rejected() -> None:
    """A title that is a list is a bad record."""
    assert _reason({"id": "s", "title": ["a"]}) == "title: expected a string, got a list"
    assert _reason({"id": "s", "project": 3}) == "project: expected a string, got a number"


def test_tool_call_must_be_an_object() -> None:
    """A tool call given as a string names its index."""
    reason = _reason({"id": "s", "messages": [{"role": "assistant", "tool_calls": ["ls"]}]})
    assert reason == "messages[0].tool_calls[0]: expected an object, got a string"


def test_unreadable_time_is_rejected() -> None:
    """A time that is neither epoch seconds nor ISO 8601 is a bad record."""
    assert _reason({"id": "s", "started_at": "last tuesday"}) == (
        "started_at: not an ISO 8601 time: 'last tuesday'")


def test_boolean_time_is_rejected() -> None:
    """true is not a time, although Python counts it as an int."""
    assert _reason({"id": "s", "ended_at": True}).startswith("ended_at: expected epoch seconds")


def test_overflowing_time_is_rejected() -> None:
    """An integer too large for a float is a bad record, not an OverflowError."""
    assert _reason({"id": "s", "started_at": 10**400}) == "started_at: epoch seconds out of range"


def test_top_level_must_be_an_object() -> None:
    """A JSON array on a line is a bad record."""
    assert _line_failure("[1, 2]").reason == "session: expected a JSON object, got a list"


def test_invalid_json_reports_the_line_number() -> None:
    """Broken JSON gives a BadRecord carrying the line number."""
    bad = _line_failure('{"id": "s", ', 12)
    assert (bad.line, bad.reason.startswith("invalid JSON")) == (12, True)


def test_field_errors_carry_the_line_number() -> None:
    """A well-formed line with a bad field also carries its line number."""
    message = _line_failure('{"id": 1}', 9).message()
    assert message == "line 9: id: expected a non-empty string, got 1"


def test_nan_and_infinity_are_rejected() -> None:
    """Python's json accepts NaN and Infinity; the ingest format does not."""
    reasons = [_line_failure(f'{{"id": "s", "started_at": {c}}}').reason
               for c in ("NaN", "Infinity", "-Infinity")]
    assert all(r.startswith("invalid JSON") for r in reasons)


def test_an_integer_past_python_s_digit_limit_keeps_its_session() -> None:
    """A 5,000-digit start time is valid JSON: the session and its message are kept, the
    time ignored and named (the line was refused as invalid JSON)."""
    huge = "9" * 5000
    read = read_line(f'{{"id": "s", "started_at": {huge}, "messages": '
                     f'[{{"role": "user", "content": "hi", "tokens": {huge}}}]}}', 4).unwrap()
    assert read.conversation.session.started_at is None
    assert [m.content for m in read.conversation.messages] == ["hi"]
    assert [(d.line, d.reason.split(":")[0]) for d in read.dropped] == [(4, "started_at")]


def test_deep_nesting_does_not_raise() -> None:
    """Pathologically nested JSON is a bad record, not a RecursionError."""
    assert _line_failure("[" * 100_000 + "]" * 100_000).reason.startswith("invalid JSON")


def test_empty_line_is_a_bad_record() -> None:
    """parse_line on a blank line says so."""
    assert _line_failure("   \n").reason == "empty line"


def test_lone_surrogates_are_replaced() -> None:
    """Escaped lone surrogates cannot be stored as UTF-8, so they become U+FFFD."""
    result = parse_line('{"id": "s", "messages": [{"role": "user", "content": "a\\ud800b"}]}', 1)
    assert result.unwrap().messages[0].content == "a\ufffdb"


def test_parse_lines_skips_blanks_and_numbers_from_one() -> None:
    """Blank lines are skipped but still counted, so reported numbers match the file."""
    results = list(parse_lines(['{"id": "a"}', "", "not json", '{"id": "b"}']))
    assert [r.unwrap().session.id if isinstance(r, Success) else r.failure().line
            for r in results] == ["a", 3, "b"]


# --- properties -----------------------------------------------------------------------

_keys = st.text().filter(lambda s: "\x00" not in s)  # ids, sources, projects: no NUL
_ids = _keys.filter(lambda s: s.strip() != "")
_times = st.none() | st.floats(min_value=EARLIEST_EPOCH, max_value=LATEST_EPOCH)
_tool_calls = st.builds(ToolCall, id=_keys, name=st.text(), arguments=st.text())


@st.composite
def _conversations(draw: st.DrawFn) -> Conversation:
    session_id = draw(_ids)
    parent = draw(st.none() | _ids.filter(lambda p: p != session_id))
    session = Session(id=session_id, source=draw(_keys), model=draw(st.text()),
                      title=draw(st.text()), started_at=draw(_times), ended_at=draw(_times),
                      parent_session_id=parent, end_reason=draw(st.text()),
                      project=draw(_keys))
    count = draw(st.integers(min_value=0, max_value=6))
    messages = tuple(
        Message(session_id=session_id, position=i, role=draw(st.sampled_from(ROLES)),
                content=draw(st.text()), tool_name=draw(st.text()),
                tool_call_id=draw(_keys),
                tool_calls=tuple(draw(st.lists(_tool_calls, max_size=3))),
                timestamp=draw(_times))
        for i in range(count))
    return Conversation(session, messages)


@given(_conversations())
def test_round_trip_through_json_object(conv: Conversation) -> None:
    """Writing a conversation and reading it back gives the same conversation."""
    assert conversation_from_json(conversation_to_json(conv)) == Success(conv)


@given(_conversations())
def test_round_trip_through_a_line(conv: Conversation) -> None:
    """A written conversation survives serialisation to one JSON line and parse_line."""
    line = json.dumps(conversation_to_json(conv), ensure_ascii=False, allow_nan=False)
    assert "\n" not in line
    assert parse_line(line, 1) == Success(conv)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=12)
_message_keys = st.sampled_from(["role", "content", "timestamp", "tool_name", "tool_call_id",
                                 "tool_calls"])
_session_keys = st.sampled_from(["id", "source", "title", "started_at", "ended_at",
                                 "parent_session_id", "messages"])


def _near_miss_message() -> st.SearchStrategy[dict[str, Any]]:
    base = st.fixed_dictionaries({"role": st.sampled_from([*ROLES, "bot"])})
    return st.tuples(base, st.dictionaries(_message_keys, _json, max_size=3)).map(
        lambda pair: {**pair[0], **pair[1]})


_near_miss_sessions = st.tuples(
    st.fixed_dictionaries({"id": st.sampled_from(["s", ""]),
                           "messages": st.lists(_near_miss_message(), max_size=3)}),
    st.dictionaries(_session_keys, _json, max_size=2),
).map(lambda pair: {**pair[0], **pair[1]})


@given(_json | _near_miss_sessions)
def test_any_json_value_gives_a_result(value: object) -> None:
    """Whatever JSON value arrives, the reader returns Success or a BadRecord, never raises."""
    result = conversation_from_json(value)
    assert isinstance(result, Success) or isinstance(result.failure(), BadRecord)


@given(st.text())
def test_any_text_line_gives_a_result(line: str) -> None:
    """Whatever text a line holds, parse_line returns a result carrying its line number."""
    result = parse_line(line, 4)
    assert isinstance(result, Success) or result.failure().line == 4


def test_out_of_range_epoch_is_a_bad_record_that_hints_at_milliseconds() -> None:
    """A millisecond or absurd epoch is reported on its line instead of breaking later reads."""
    for value in ("1700000000000", "99999999999999999999", "-1e11"):
        result = parse_line('{"id": "s", "started_at": ' + value + "}", 4)
        assert isinstance(result, Failure)
        assert result.failure().line == 4
        assert "milliseconds" in result.failure().reason
