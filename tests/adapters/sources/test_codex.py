"""Tests of the Codex rollout reader, on hand-written fixture files."""

from __future__ import annotations

import json
from pathlib import Path

from harkback.adapters.sources.codex import CODEX, output_text, parse_rollout_lines
from harkback.adapters.sources.transcript_walk import find_files
from harkback.adapters.sources.transcripts import parse_file
from harkback.stages.records import Conversation

SESSIONS = Path(__file__).parents[2] / "fixtures" / "codex" / "sessions"
T1 = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
MAIN = SESSIONS / "2026/03/03" / f"rollout-2026-03-03T09-30-00-{T1}.jsonl"


def _only(path: Path) -> Conversation:
    parsed = parse_file(CODEX, path, SESSIONS)
    assert len(parsed.conversations) == 1, parsed
    return parsed.conversations[0]


def test_a_rollout_becomes_a_conversation_with_its_meta() -> None:
    """Id from session_meta, model from turn_context, start from the meta time."""
    session = _only(MAIN).session
    assert (session.id, session.source, session.model) == (T1, "codex", "gpt-5-codex")
    assert session.parent_session_id is None
    assert session.started_at == 1772530200.0
    assert session.project == "/home/mei/code/api-gateway"


def test_messages_and_tool_calls_come_in_order() -> None:
    """User request, the call and its output, the answer with the patch call, its output."""
    messages = _only(MAIN).messages
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert messages[0].content.startswith("The browser says CORS preflight fails")
    assert messages[0].content.endswith("[project: /home/mei/code/api-gateway, git branch: main]")
    assert [c.name for c in messages[1].tool_calls] == ["shell"]
    assert (messages[2].tool_name, messages[2].content) == (
        "shell", "31:    limit_except GET POST { deny all; }\n")
    assert messages[3].content.startswith("nginx rejects OPTIONS")
    assert [c.name for c in messages[3].tool_calls] == ["apply_patch"]
    assert messages[4].tool_name == "apply_patch"


def test_injected_and_repeated_lines_are_counted_not_imported() -> None:
    """Environment context, reasoning, events, compaction and unknown lines are counted."""
    left_out = dict(parse_file(CODEX, MAIN, SESSIONS).left_out)
    assert left_out == {"injected instructions": 1, "event_msg line": 2, "turn_context line": 1,
                        "reasoning": 1, "compaction summary": 1,
                        "unknown line type 'world_state'": 1, "unreadable line": 1}


def test_a_spawned_subagent_is_a_child_of_its_parent_thread() -> None:
    """``source.subagent.thread_spawn.parent_thread_id`` becomes the parent session."""
    path = next(SESSIONS.glob("2026/03/03/rollout-*-0199a1b2-d4e5-*.jsonl"))
    conversation = _only(path)
    assert conversation.session.parent_session_id == T1
    assert [m.role for m in conversation.messages] == ["user", "assistant"]


def test_internal_compaction_sessions_are_left_out() -> None:
    """A ``subagent: compact`` rollout is Codex's own bookkeeping."""
    parsed = parse_file(CODEX, next(SESSIONS.glob("2026/03/03/rollout-*-0199a1b3-*.jsonl")),
                        SESSIONS)
    assert parsed.conversations == ()
    assert ("internal Codex session", 1) in parsed.left_out


def test_a_fork_is_a_conversation_of_its_own() -> None:
    """A fork that copies nothing of its parent (no parent meta line) stays its own."""
    session = _only(next(SESSIONS.glob("2026/03/04/rollout-*.jsonl"))).session
    assert session.parent_session_id is None


def test_the_2025_format_without_wrappers_is_read() -> None:
    """A bare meta line and bare response items still make a conversation."""
    conversation = _only(next(SESSIONS.glob("2025/07/14/rollout-*.jsonl")))
    assert conversation.session.id == "6f1e2d3c-4b5a-4978-8a1b-2c3d4e5f6a7b"
    assert [m.role for m in conversation.messages] == ["user", "assistant", "assistant"]
    assert conversation.messages[1].tool_calls[0].name == "local_shell"
    assert "rotate_nginx.sh" in conversation.messages[2].content


def test_tool_output_shapes_all_give_text() -> None:
    """Output as a string, a JSON string with ``output``, parts or ``{"content"}``."""
    assert output_text([{"type": "input_text", "text": "a"}]) == "a"
    assert output_text({"content": "b", "success": True}) == "b"
    assert output_text('{"other": 1}') == '{"other": 1}'


def test_a_rollout_without_meta_is_named_by_its_file() -> None:
    """With no session_meta line the id comes from the file name."""
    parsed = parse_rollout_lines("from-file", [
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text",
                                                           "text": "hi"}]}}])
    assert parsed.conversations[0].session.id == "from-file"


def test_out_of_range_times_are_unknown_and_counted() -> None:
    """A millisecond epoch in a meta or line time is left unknown and counted."""
    parsed = parse_rollout_lines("x", [
        {"type": "session_meta", "timestamp": 1.7e12, "payload": {"id": "t1", "timestamp": 1e20}},
        {"type": "response_item", "timestamp": "2026-03-03T14:15:00Z",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "fix it"}]}}])
    session = parsed.conversations[0].session
    assert (session.started_at, session.ended_at) == (1772547300.0, 1772547300.0)
    assert dict(parsed.left_out) == {"time ignored": 2}


def test_a_tool_output_nested_past_the_recursion_limit_is_kept_as_text() -> None:
    """A tool's output that looks like JSON nested deeper than Python decodes (it failed the
    whole import as an internal error) is the output as written, as unreadable JSON is."""
    deep = '{"output": ' + "[" * 100_000 + "]" * 100_000 + "}"
    assert output_text(deep) == deep


def test_an_image_is_a_placeholder_so_the_request_that_sent_it_stays() -> None:
    """A request that was only a pasted image (a base64 ``data:`` URL) was left out as an
    empty message; it is ``[image]`` now, and so is an image a tool returned."""
    data = "data:image/png;base64," + "iVBORw0KGgo" * 1000
    parsed = parse_rollout_lines("x", [
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_image", "image_url": data}]}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "view_image",
                                              "arguments": "{}", "call_id": "c1"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                              "output": [{"type": "input_image",
                                                          "image_url": data}]}}])
    messages = parsed.conversations[0].messages
    assert [(m.role, m.content) for m in messages] == [
        ("user", "[image]"), ("assistant", ""), ("tool", "[image]")]
    assert parsed.left_out == ()


def test_long_tool_call_arguments_are_clipped_like_tool_output() -> None:
    """An ``apply_patch`` of a 200 KB file was stored, and indexed, whole: its input keeps
    head and tail now, as a tool's output does, and the clip is counted."""
    patch = "*** Begin Patch\n" + "+w\n" * 70_000 + "*** End Patch"
    parsed = parse_rollout_lines("x", [
        {"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch",
                                              "call_id": "c1", "input": patch}}])
    call, = parsed.conversations[0].messages[0].tool_calls
    assert call.arguments.startswith("*** Begin Patch") and call.arguments.endswith("End Patch")
    assert len(call.arguments) < 33_000
    assert dict(parsed.left_out) == {"tool call arguments clipped": 1}


def test_a_rollout_the_typescript_codex_wrote_as_one_json_document_is_read(
        tmp_path: Path) -> None:
    """The first Codex CLI (TypeScript, 2025) saved each session as one JSON document,
    ``sessions/rollout-<date>-<uuid>.json``: those were never found (the earliest Codex
    sessions missing, unsaid). They are read as the bare items of their time."""
    sid = "1f2e3d4c-0000-4000-8000-000000000001"
    (tmp_path / f"rollout-2025-04-17-{sid}.json").write_text(json.dumps({
        "session": {"timestamp": "2025-04-17T10:00:00.000Z", "id": sid, "instructions": ""},
        "items": [
            {"id": "msg_1", "type": "message", "role": "user",
             "content": [{"type": "input_text", "text": "why does the ferret cache miss?"}]},
            {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}',
             "call_id": "call_1"},
            {"type": "function_call_output", "call_id": "call_1",
             "output": '{"output": "a.py\\n", "metadata": {"exit_code": 0}}'},
            {"id": "msg_2", "type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "the key is hashed twice"}]}]},
        indent=2), encoding="utf-8")
    (tmp_path / "rollout-2025-04-18-broken.json").write_text('{"session": {', encoding="utf-8")
    found = find_files(tmp_path, CODEX.patterns)
    assert found == [f"rollout-2025-04-17-{sid}.json", "rollout-2025-04-18-broken.json"]
    parsed = parse_file(CODEX, tmp_path / found[0], tmp_path)
    conversation, = parsed.conversations
    assert (conversation.session.id, conversation.session.started_at) == (sid, 1744884000.0)
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", "why does the ferret cache miss?"), ("assistant", ""), ("tool", "a.py\n"),
        ("assistant", "the key is hashed twice")]
    broken = parse_file(CODEX, tmp_path / found[1], tmp_path)
    assert broken.conversations == ()
    assert [s.describe() for s in broken.skipped] == [
        f"{tmp_path / found[1]}: unreadable file: not JSON"]
