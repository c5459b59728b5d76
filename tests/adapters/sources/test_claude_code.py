"""Tests of the Claude Code transcript reader, on hand-written fixture files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.sources import claude_code
from harkback.adapters.sources.claude_code import CLAUDE_CODE, parse_lines
from harkback.adapters.sources.transcripts import ParsedFile, parse_file
from harkback.stages.records import Conversation

PROJECTS = Path(__file__).parents[2] / "fixtures" / "claude-code" / "projects"
YOUER = PROJECTS / "-home-mei-code-youer-server"
BUS = PROJECTS / "-home-mei-code-agent-bus"
S1 = "7f3c2a10-5b1e-4c0a-9d8e-1a2b3c4d5e6f"
S2 = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"


def _only(path: Path) -> Conversation:
    parsed = parse_file(CLAUDE_CODE, path, PROJECTS)
    assert len(parsed.conversations) == 1, parsed
    return parsed.conversations[0]


def test_a_session_file_becomes_one_conversation_named_by_its_summary() -> None:
    """The file's stem is the session id; the summary of its own leaf is the title."""
    conversation = _only(YOUER / f"{S1}.jsonl")
    session = conversation.session
    assert (session.id, session.source, session.title) == (
        S1, "claude-code", "Fix youer login token check")
    assert session.model == "claude-sonnet-4-5-20250929"
    assert session.parent_session_id is None
    assert session.started_at is not None and session.ended_at is not None
    assert session.started_at < session.ended_at


def test_the_project_folder_is_added_under_the_first_request() -> None:
    """The cwd and git branch become a line of the first user message."""
    first = _only(YOUER / f"{S1}.jsonl").messages[0]
    assert first.role == "user"
    assert first.content.endswith(
        "\n\n[project: /home/mei/code/youer-server, git branch: fix-login]")


def test_the_project_folder_is_the_session_s_project_and_its_sub_agents() -> None:
    """The cwd is kept as the session's project too, and as its sub-agent's (no line)."""
    assert _only(YOUER / f"{S1}.jsonl").session.project == "/home/mei/code/youer-server"
    agent = _only(YOUER / S1 / "subagents" / "agent-a1b2c3d.jsonl")
    assert agent.session.project == "/home/mei/code/youer-server"
    assert not any("[project:" in m.content for m in agent.messages)


def test_reply_blocks_of_one_message_id_are_merged() -> None:
    """Text and tool use written as separate lines of one reply become one message."""
    messages = _only(YOUER / f"{S1}.jsonl").messages
    reply = messages[1]
    assert reply.role == "assistant"
    assert reply.content == "先看一下登录接口的实现。"
    assert [c.name for c in reply.tool_calls] == ["Bash"]
    assert '"grep -rn verify_token app/"' in reply.tool_calls[0].arguments


def test_tool_results_carry_the_name_of_their_call() -> None:
    """A tool_result block becomes a tool message named after the tool_use it answers."""
    tools = [m for m in _only(YOUER / f"{S1}.jsonl").messages if m.role == "tool"]
    assert [(m.tool_name, m.tool_call_id) for m in tools] == [("Bash", "toolu_01"),
                                                              ("Task", "toolu_02")]
    assert "agentId: a1b2c3d" in tools[1].content


def test_scaffolding_and_unknown_lines_are_counted_not_imported() -> None:
    """Meta, compaction summaries, thinking, bookkeeping and unknown lines are only counted."""
    parsed = parse_file(CLAUDE_CODE, YOUER / f"{S1}.jsonl", PROJECTS)
    left_out = dict(parsed.left_out)
    assert left_out == {"file-history-snapshot line": 1, "meta message": 1,
                        "thinking block": 1, "system line": 1, "compaction summary": 1,
                        "queue-operation line": 1, "unknown line type 'mystery-event'": 1,
                        "unreadable line": 1}
    contents = " ".join(m.content for m in parsed.conversations[0].messages)
    assert "continued from a previous conversation" not in contents
    assert "/clear" not in contents


def test_a_subagent_file_is_a_child_of_its_session() -> None:
    """``<session>/subagents/agent-<id>.jsonl`` is session ``<session>/agent-<id>``."""
    session = _only(YOUER / S1 / "subagents" / "agent-a1b2c3d.jsonl").session
    assert (session.id, session.parent_session_id) == (f"{S1}/agent-a1b2c3d", S1)


def test_compaction_agent_files_are_left_out() -> None:
    """Claude Code's own compaction runs are not conversations."""
    parsed = parse_file(CLAUDE_CODE, YOUER / S1 / "subagents" / "agent-acompact-9f8e7d.jsonl",
                        PROJECTS)
    assert parsed.conversations == ()
    assert parsed.left_out == (("compaction agent transcript", 1),)


def test_older_layouts_link_agents_and_inline_sidechains_to_the_session() -> None:
    """An agent file beside the session, and sidechain lines inside it, are its children."""
    agent = _only(BUS / "agent-4e5f6a7b.jsonl").session
    assert (agent.id, agent.parent_session_id) == (f"{S2}/agent-4e5f6a7b", S2)
    parsed = parse_file(CLAUDE_CODE, BUS / f"{S2}.jsonl", PROJECTS)
    by_id = {c.session.id: c for c in parsed.conversations}
    assert set(by_id) == {S2, f"{S2}/agent-sidechain"}
    assert by_id[f"{S2}/agent-sidechain"].session.parent_session_id == S2
    assert "NATS" in by_id[f"{S2}/agent-sidechain"].messages[1].content


def test_a_custom_title_wins() -> None:
    """A ``custom-title`` line names the session."""
    conversation = _only(YOUER / "0b9e8d7c-6a5f-4e3d-8c2b-1a0f9e8d7c6b.jsonl")
    assert conversation.session.title == "登录日志 JSON 化"


def test_a_file_without_messages_gives_no_session() -> None:
    """Only summary lines (an old Claude Code habit) make no conversation."""
    parsed = parse_lines("s", [{"type": "summary", "summary": "x", "leafUuid": "u"}],
                         parent=None, project=True)
    assert parsed.conversations == ()


def test_a_millisecond_timestamp_is_unknown_and_counted() -> None:
    """A time no date can be made of is left unknown and counted, not stored."""
    parsed = parse_lines("s1", [
        {"type": "user", "timestamp": 1.7e12, "message": {"role": "user", "content": "hi"}},
        {"type": "assistant", "timestamp": "2026-03-03T14:15:00Z",
         "message": {"role": "assistant", "content": "hello"}}], parent=None, project=False)
    first, second = parsed.conversations[0].messages
    assert (first.timestamp, second.timestamp) == (None, 1772547300.0)
    assert parsed.conversations[0].session.started_at == 1772547300.0
    assert dict(parsed.left_out) == {"time ignored": 1}


def test_a_line_written_again_under_its_uuid_is_read_once() -> None:
    """Claude Code replays history into the file (compaction, stream-json input): a line
    repeated under its uuid was a second copy of the message; it is read once, counted."""
    ask = {"type": "user", "uuid": "u1", "timestamp": "2026-03-03T14:15:00Z",
           "message": {"role": "user", "content": "rotate the nginx logs"}}
    reply = {"type": "assistant", "uuid": "a1", "timestamp": "2026-03-03T14:15:05Z",
             "message": {"id": "m1", "role": "assistant", "content": "done"}}
    parsed = parse_lines("s1", [ask, reply, ask, {**reply, "gitBranch": "main"}],
                         parent=None, project=False)
    assert [m.content for m in parsed.conversations[0].messages] == [
        "rotate the nginx logs", "done"]
    assert dict(parsed.left_out) == {"repeated line (same uuid)": 2}


def test_an_image_is_a_placeholder_so_the_turn_that_sent_it_stays() -> None:
    """A pasted screenshot (base64: no text, and megabytes) and one a tool returned are
    stored as ``[image]``: a request that was only an image, and the tool result that was,
    disappeared; the bytes still never reach the store."""
    data = "iVBORw0KGgo" * 1000
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": data}}
    parsed = parse_lines("s1", [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": [image]}},
        {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant",
         "content": [{"type": "tool_use", "id": "t1", "name": "Screenshot", "input": {}}]}},
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": [image]}]}}],
        parent=None, project=False)
    messages = parsed.conversations[0].messages
    assert [(m.role, m.content) for m in messages] == [
        ("user", "[image]"), ("assistant", ""), ("tool", "[image]")]
    assert dict(parsed.left_out) == {"image data (a placeholder stored)": 1}


def test_long_tool_call_arguments_are_clipped_like_tool_output() -> None:
    """A ``Write`` of a 200 KB file was stored, and indexed, whole: its arguments keep head
    and tail now, as a tool's output does, and the clip is counted."""
    parsed = parse_lines("s1", [
        {"type": "assistant", "uuid": "a1", "message": {"id": "m1", "role": "assistant",
         "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {
             "file_path": "/w/app.py", "content": "w" * 200_000 + "END"}}]}}],
        parent=None, project=False)
    call, = parsed.conversations[0].messages[0].tool_calls
    assert call.arguments.startswith('{"file_path": "/w/app.py"')
    assert call.arguments.endswith('END"}') and len(call.arguments) < 33_000
    assert dict(parsed.left_out) == {"tool call arguments clipped": 1}


def test_claude_code_s_own_title_names_the_session_after_a_rename() -> None:
    """Claude Code writes the title it makes as ``ai-title`` lines (the last one current):
    they were counted as an unknown line type and the session stayed untitled; a
    ``/rename`` (``custom-title``) still wins."""
    titled: list[dict[str, object]] = [
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "hi"}},
        {"type": "ai-title", "aiTitle": "Nginx log rotation", "sessionId": "s1"},
        {"type": "ai-title", "aiTitle": "Nginx log rotation by day", "sessionId": "s1"}]
    parsed = parse_lines("s1", titled, parent=None, project=False)
    assert parsed.conversations[0].session.title == "Nginx log rotation by day"
    assert parsed.left_out == ()
    renamed = parse_lines("s1", [*titled, {"type": "custom-title", "customTitle": "logs"}],
                          parent=None, project=False)
    assert renamed.conversations[0].session.title == "logs"


def test_two_task_runs_inside_an_old_session_file_are_two_sub_agents() -> None:
    """Claude Code 1.0 wrote Task runs into the session's file as sidechain lines naming no
    agent: two runs (here in parallel, their lines mixed) were one sub-agent session."""
    def side(uuid: str, parent: str | None, role: str, text: str) -> dict[str, object]:
        return {"type": role, "isSidechain": True, "uuid": uuid, "parentUuid": parent,
                "message": {"id": f"m-{uuid}", "role": role, "content": text}}

    parsed = parse_lines("s2", [
        {"type": "user", "uuid": "v1", "message": {"role": "user", "content": "survey"}},
        side("r1", None, "user", "list the brokers"),
        side("q1", None, "user", "list the codecs"),
        side("r2", "r1", "assistant", "NATS and Kafka"),
        side("q2", "q1", "assistant", "protobuf and JSON")], parent=None, project=False)
    runs = {c.session.id: [m.content for m in c.messages] for c in parsed.conversations[1:]}
    assert runs == {"s2/agent-sidechain": ["list the brokers", "NATS and Kafka"],
                    "s2/agent-sidechain-2": ["list the codecs", "protobuf and JSON"]}
    assert {c.session.parent_session_id for c in parsed.conversations[1:]} == {"s2"}


def test_lines_copied_from_a_stored_session_are_left_out_and_the_session_continues_it(
        ) -> None:
    """A resume that starts a new file copies the earlier session's lines (their
    ``sessionId`` kept), a fork re-stamps them with ``forkedFrom``: copies of a known
    session are left out and the session is its continuation; copies of a session not
    known are kept; the summary of the copied part still titles the session."""
    def said(uuid: str, session: str, text: str, **more: object) -> dict[str, object]:
        return {"type": "user", "uuid": uuid, "sessionId": session, "cwd": "/w/shop",
                "message": {"role": "user", "content": text}, **more}

    resumed: list[dict[str, object]] = [
        {"type": "summary", "summary": "Cart rounding", "leafUuid": "u2"},
        said("u1", "old", "why does the total drift"), said("u2", "old", "use Decimal"),
        said("u3", "new", "now the refund path")]
    kept = parse_lines("new", resumed, parent=None, project=False)
    left = parse_lines("new", resumed, parent=None, project=False, known={"old"})
    assert [len(p.conversations[0].messages) for p in (kept, left)] == [3, 1]
    session = left.conversations[0].session
    assert (session.parent_session_id, session.title) == ("old", "Cart rounding")
    assert kept.conversations[0].session.parent_session_id is None
    assert dict(left.left_out)["line copied from an earlier session (stored there)"] == 2
    forked = parse_lines("fork", [
        said("u1", "fork", "why does the total drift",
             forkedFrom={"sessionId": "old", "messageUuid": "u1"}),
        said("u9", "fork", "try banker's rounding")], parent=None, project=False,
        known={"old"})
    assert [m.content for m in forked.conversations[0].messages] == ["try banker's rounding"]
    assert forked.conversations[0].session.parent_session_id == "old"


def test_an_old_agent_file_naming_its_session_is_no_copy_of_it() -> None:
    """An agent file beside its session (older layout) names that session in every line:
    it is the agent's own transcript, read whole even though the session is known."""
    whole = parse_file(CLAUDE_CODE, BUS / "agent-4e5f6a7b.jsonl", PROJECTS)
    known = parse_file(CLAUDE_CODE, BUS / "agent-4e5f6a7b.jsonl", PROJECTS, known={S2})
    assert known.conversations == whole.conversations
    assert known.conversations[0].messages


def test_a_line_naming_another_session_after_the_session_s_own_is_kept() -> None:
    """A resume's copy opens the file; a line naming another session after the session's
    own lines is no such copy (the earlier session is known, yet nothing is left out)."""
    lines: list[dict[str, object]] = [
        {"type": "user", "uuid": "u1", "sessionId": "new",
         "message": {"role": "user", "content": "first of the new session"}},
        {"type": "user", "uuid": "u2", "sessionId": "old",
         "message": {"role": "user", "content": "written under the earlier id"}}]
    parsed = parse_lines("new", lines, parent=None, project=False, known={"old"})
    assert [m.content for m in parsed.conversations[0].messages] == [
        "first of the new session", "written under the earlier id"]
    assert parsed.conversations[0].session.parent_session_id is None


def test_a_resumed_file_is_read_once_with_its_copy_and_without(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file copying a known session's lines yields the session without them and, for the
    import to compare, with them (as read when nothing is known): it was parsed twice for
    that, every resumed file's lines read again. Now one pass gives both."""
    from tests.pipeline.test_transcript_replays import (
        PARENT,
        PROJECT,
        _forked_lines,
        _resumed_lines,
    )
    calls: list[str] = []
    real = claude_code.parse_lines

    def counted(session_id: str, *args: Any, **kwargs: Any) -> ParsedFile:
        calls.append(session_id)
        return real(session_id, *args, **kwargs)

    monkeypatch.setattr(claude_code, "parse_lines", counted)
    side = {"type": "user", "uuid": "side1", "isSidechain": True, "agentId": "x",
            "sessionId": PARENT, "cwd": "/w", "message": {"role": "user", "content": "look"}}
    for name, lines in (("resumed", _resumed_lines()), ("forked", _forked_lines())):
        path = tmp_path / PROJECT / f"{name}.jsonl"
        path.parent.mkdir(exist_ok=True)
        lines = [*lines[:2], side, *lines[2:]]
        path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
        calls.clear()
        left = parse_file(CLAUDE_CODE, path, tmp_path, known={PARENT})
        assert calls == [name]
        [whole] = [c for c in parse_file(CLAUDE_CODE, path, tmp_path).conversations
                   if c.session.id == name]
        [replay] = left.replays
        copied = dict(left.left_out)["line copied from an earlier session (stored there)"]
        assert (replay.sources, replay.whole, replay.lines) == ((PARENT,), whole, copied)
        assert len(left.conversations[0].messages) == 2
