"""``harkback mcp`` under hostile calls and a store that goes away, through the SDK's own
client and a real SQLite store: each is a tool error of one line, and the server answers
the next call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.pipeline.test_mcp_server import _environment, _error, _ok, connected, db
from tests.pipeline.test_sync_process import BOUND

__all__ = ["db"]  # the store fixture, shared with the server's own tests

NO_MOMENT = "is not a moment a session can have"


async def test_numeric_times_past_any_date_are_tool_errors(db: Path) -> None:
    """Epoch seconds as JSON numbers are held to years 1-9999 as the command line holds
    them: 10**400 raised OverflowError inside the server (a protocol error, a traceback on
    its stderr), and 1e300 or -1e12 filtered every session out without a word; so did a
    span back from now reaching past the year 1 ("999999999999999999999d")."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("session_search", {"query": "nginx", "since": 10 ** 400}),
        ("recent_sessions", {"until": 10 ** 400}),
        ("session_search", {"query": "nginx", "since": 1e300}),
        ("recent_sessions", {"until": -1e12}),
        ("recent_sessions", {"since": "999999999999999999999d"}),
        ("session_search", {"query": "nginx", "until": "800000d"})]
    async with connected(db) as session:
        answers = [await _error(session, tool, arguments) for tool, arguments in calls]
        still = await _ok(session, "recent_sessions", {"since": 1_700_000_000})
    for (_, arguments), message in zip(calls, answers, strict=True):
        (name,) = set(arguments) - {"query"}
        assert message.startswith(f"{name} ") and NO_MOMENT in message, message
        assert "\n" not in message
    assert still["count"] == 3


async def test_a_store_deleted_under_the_server_is_one_line_until_it_is_back(
        db: Path, tmp_path: Path) -> None:
    """The line names the kind of failure once (it said "session store unavailable" twice),
    and a store put back at the path is read."""
    kept = db.read_bytes()
    async with connected(db) as session:
        await _ok(session, "recent_sessions", {})
        db.unlink()
        message = await _error(session, "recent_sessions", {})
        db.write_bytes(kept)
        back = await _ok(session, "recent_sessions", {})
    assert message.count("session store unavailable") == 1, message
    assert str(db) in message and "\n" not in message
    assert back["count"] == 3


async def test_a_store_in_a_folder_that_cannot_be_entered_is_a_tool_error(
        db: Path, tmp_path: Path) -> None:
    """Opening it raised PermissionError (Path.is_file() does there), which the SDK sent as
    a protocol error; as root the server runs without the capabilities that ignore file
    modes (as test_sync_process does)."""
    folder = db.parent
    server = StdioServerParameters(
        command=BOUND[0] if BOUND else sys.executable,
        args=[*BOUND[1:], *([sys.executable] if BOUND else []), "-m", "harkback.pipeline.cli",
              "mcp", "--db", str(db)],
        env=_environment())
    os.chmod(folder, 0)
    try:
        async with stdio_client(server) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            message = await _error(session, "recent_sessions", {})
            os.chmod(folder, 0o755)
            later = await _ok(session, "recent_sessions", {})
    finally:
        os.chmod(folder, 0o755)
    assert message == f"{db}: Permission denied"
    assert later["count"] == 3


def test_half_a_character_escaped_in_a_call_is_answered(db: Path) -> None:
    """A call whose JSON escapes half a character (``\\ud83d``: an emoji a truncation cut
    in two) is answered, with U+FFFD in its place: the SDK's parser refused the line, and
    the server sent nothing at all, so the client waited for an answer that never came."""
    search = {"query": "nginx \ud83d", "summarizer": "none"}
    calls = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "session_search", "arguments": search}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "read_session", "arguments": {"id": "\udcff"}}}]
    lines = [json.dumps(call) for call in calls]  # ASCII: "\\ud83d" as sent
    assert "\\ud83d" in lines[0]
    answers = _answers(db, lines)
    assert sorted(answers) == [1, 2, 3]
    found = answers[2]["result"]
    assert not found.get("isError") and found["structuredContent"]["query"] == "nginx \ufffd"
    missing = answers[3]["result"]
    assert missing["isError"] and missing["content"][0]["text"] == (
        "not found: no session with id '\ufffd'")


def _ingested(tmp_path: Path, session: dict[str, Any]) -> Path:
    """A store holding ``session`` (the ingest format), made by ``harkback ingest``."""
    source = tmp_path / "session.jsonl"
    source.write_text(json.dumps(session) + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    ingest = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "ingest",
                             str(source), "--db", str(db)], capture_output=True, text=True,
                            env=_environment(), timeout=120, check=False)
    assert ingest.returncode == 0, ingest.stderr
    return db


async def test_a_huge_message_is_read_cut_with_a_note_on_how_to_read_it_whole(
        tmp_path: Path) -> None:
    """A 14 MB message gave a 28 MB answer (text and structured content), more than an
    agent's client takes. Now each message's text, and each tool call's arguments, is
    cut to 20,000 characters, head and tail kept; the note between them names the
    command that prints it whole, and that command, pasted, does."""
    huge = "HEAD " + "docker bridge log line\n" * 150_000 + " TAIL"
    write = json.dumps({"path": "/srv/big.txt", "text": "x" * 50_000})
    session = {"id": "big", "messages": [
        {"role": "user", "content": "show me the log"},
        {"role": "tool", "content": huge, "tool_name": "bash"},
        {"role": "assistant", "content": "writing it",
         "tool_calls": [{"id": "c1", "name": "write", "arguments": write}]}]}
    db = _ingested(tmp_path, session)
    async with connected(db) as client:
        answer = await client.call_tool("read_session", {"id": "big"})
    (block,) = answer.content
    assert not answer.is_error and block.type == "text"
    assert len(block.text) < 100_000
    first, cut, called = json.loads(block.text)["messages"]
    assert first["content"] == "show me the log" and "content_left_out" not in first
    assert cut["content_left_out"] == len(huge) - 20_000
    assert cut["content"].startswith(huge[:10_000]) and cut["content"].endswith(huge[-10_000:])
    (call,) = called["tool_calls"]
    assert call["arguments_left_out"] == len(write) - 20_000
    note = cut["content"][10_000:-10_000].strip()
    assert note.startswith(f"...[{len(huge) - 20_000:,} characters left out here: ")
    command = note.split("; ")[-1].removesuffix(" prints it whole]...")
    env = {**_environment(), "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                     f"{os.environ.get('PATH', '')}"}
    whole = subprocess.run(["bash", "-c", f"{command} --json"], capture_output=True,
                           text=True, env=env, timeout=120, check=False)
    assert whole.returncode == 0, whole.stderr
    assert huge in [m["content"] for m in json.loads(whole.stdout)["messages"]]


async def test_a_page_of_long_messages_ends_early_and_goes_on_from_there(
        tmp_path: Path) -> None:
    """Twelve messages of 10,000 characters each fit the per-message bound, but a page of
    them made a 240,000-character answer (doubled); a page now ends when it holds about
    45,000 characters, its next_offset goes on from there, and around a message the
    page keeps that message and the ones before it."""
    texts = [f"message {i} " + "pelican nesting log " * 500 for i in range(12)]
    session = {"id": "long", "messages": [{"role": "user", "content": t} for t in texts]}
    db = _ingested(tmp_path, session)
    read: list[str] = []
    async with connected(db) as client:
        offset: int | None = 0
        while offset is not None:
            answer = await client.call_tool("read_session", {"id": "long", "offset": offset})
            (block,) = answer.content
            assert not answer.is_error and block.type == "text" and len(block.text) < 50_000
            page = json.loads(block.text)
            assert page["offset"] == offset and 0 < len(page["messages"]) < len(texts)
            read += [m["content"] for m in page["messages"]]
            offset = page["next_offset"]
        around = await client.call_tool("read_session", {"id": "long", "around": "long:9"})
    assert read == texts
    (block,) = around.content
    assert block.type == "text"
    page = json.loads(block.text)
    shown = [m["position"] for m in page["messages"]]
    assert 9 in shown and 8 in shown and page["offset"] == shown[0]
    assert page["next_offset"] == shown[-1] + 1


async def test_a_position_of_thousands_of_digits_is_a_tool_error(db: Path) -> None:
    """int() refuses more than 4,300 digits: the ValueError went out as a protocol error,
    with a traceback on the server's stderr (``harkback show --around`` called it an
    internal error). A position no store can hold is refused in one line, and the server
    answers the next call."""
    digits = "9" * 5000
    async with connected(db) as session:
        answers = [await _error(session, "read_session", {"id": "cors", "around": around})
                   for around in (f"cors:{digits}", digits)]
        later = await _ok(session, "read_session", {"id": "cors", "around": "cors:1"})
    for message in answers:
        assert "names a position past any message" in message and "\n" not in message
    assert [m["id"] for m in later["messages"]] == ["cors:0", "cors:1"]


async def test_an_error_echoing_a_megabyte_argument_is_bounded(db: Path) -> None:
    """A tool error's line names the argument it refuses: a megabyte session id or time
    came back as a megabyte error, past what clients take from a tool. The id's head and
    tail are kept, with how much was left out between them; a time is echoed cut to its
    first 60 characters, as the command line echoes it."""
    huge = "x" * 1_000_000
    async with connected(db) as session:
        unknown = await _error(session, "read_session", {"id": huge})
        unread = await _error(session, "recent_sessions", {"since": huge})
    for message in (unknown, unread):
        assert len(message) < 3_000 and "\n" not in message
    assert "characters left out" in unknown
    assert unknown.startswith("not found: no session with id 'xxx")
    assert unread.startswith(f"cannot read since '{'x' * 60}…'")


def test_a_number_of_thousands_of_digits_in_a_call_is_answered(db: Path) -> None:
    """The SDK's JSON parser refuses a number of more than 4,300 digits, and the server
    sent no answer at all to the call holding one: the client waited for good (the SDK's
    client cannot even send one, so the lines are written as a client would). Cut to 4,300
    nines, it is refused as any number out of range is."""
    digits = "1" * 5000
    answers = _answers(db, [
        '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
        f'"recent_sessions", "arguments": {{"limit": {digits}}}}}}}',
        '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": '
        f'"read_session", "arguments": {{"id": "{digits}", "offset": -{digits}}}}}}}'])
    assert sorted(answers) == [1, 2, 3]
    texts = [answers[i]["result"]["content"][0]["text"] for i in (2, 3)]
    assert all(answers[i]["result"]["isError"] for i in (2, 3))
    assert texts[0].startswith("limit must be between 1 and ")
    assert texts[1] == "offset must be at least 0, got a negative number of more than 30 digits"


def _answers(db: Path, calls: list[str], *, unanswered: int = 0) -> dict[int, Any]:
    """The answers, by id, of ``harkback mcp --db DB`` to ``calls`` (JSON lines, ids 2 on),
    written after the handshake (id 1) as a client would write them: the SDK's own client
    cannot send what these tests send. A server that never answers fails, not hangs;
    ``unanswered`` lines are no JSON, which the server answers not at all."""
    handshake = [json.dumps(call) for call in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"})]
    server = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "mcp", "--db", str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_environment())
    guard = threading.Timer(120, server.kill)
    guard.start()
    try:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write("".join(line + "\n" for line in handshake + calls).encode())
        server.stdin.flush()
        answers: dict[int, Any] = {}
        while len(answers) < 1 + len(calls) - unanswered and (line := server.stdout.readline()):
            answer = json.loads(line)
            answers[answer["id"]] = answer
        server.stdin.close()
        server.wait()
    finally:
        guard.cancel()
    return answers


async def test_a_whole_number_written_as_a_float_is_taken_as_an_integer(db: Path) -> None:
    """JSON Schema counts 2.0 an integer: a client writing numbers as floats was told
    "limit must be an integer". A fraction is still refused."""
    async with connected(db) as session:
        listed = await _ok(session, "recent_sessions", {"limit": 2.0})
        page = await _ok(session, "read_session", {"id": "nginx-long", "offset": 3.0,
                                                   "limit": 2.0})
        found = await _ok(session, "session_search", {"query": "nginx", "limit": 1.0})
        message = await _error(session, "recent_sessions", {"limit": 2.5})
    assert listed["count"] == 2
    assert [m["position"] for m in page["messages"]] == [3, 4]
    assert found["count"] == 1
    assert message == "limit must be an integer"


async def test_a_huge_whole_float_is_echoed_in_words(db: Path) -> None:
    """``1e308`` is a whole number to JSON Schema: its refusal echoed all 309 of its digits
    (a client can send 4,300), where every other error line says a number past 30 digits
    in words. The server answers the next call."""
    async with connected(db) as session:
        limits = [await _error(session, tool, {**arguments, "limit": -1e308})
                  for tool, arguments in (("read_session", {"id": "cors"}),
                                          ("session_search", {"query": "nginx"}))]
        offset = await _error(session, "read_session", {"id": "cors", "offset": -1e308})
        later = await _ok(session, "recent_sessions", {"limit": 1})
    assert limits == ["limit must be between 1 and 200, got a negative number of more than "
                      "30 digits", "limit must be between 1 and 10, got a negative number "
                      "of more than 30 digits"]
    assert offset == "offset must be at least 0, got a negative number of more than 30 digits"
    assert later["count"] == 1


def test_a_call_nested_past_the_parsers_depth_is_answered(db: Path) -> None:
    """Arguments nesting arrays or objects 200 levels deep made the SDK's parser refuse
    the line ("recursion limit exceeded") and the server sent nothing: the client waited
    for an answer that never came. What lies below 100 levels is now a string, so each
    call is a one-line tool error and the calls after it are answered."""
    call = '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": %s, ' \
           '"arguments": %s}}'
    calls = [call % (2, '"session_search"', '{"query": ' + "[" * 5_000 + "]" * 5_000 + "}"),
             call % (3, '"session_search"', '{"query": "nginx", "colour": '
                     + '{"a": ' * 300 + "1" + "}" * 300 + "}"),
             call % (4, '"recent_sessions"', "{}")]
    answers = _answers(db, calls)
    assert sorted(answers) == [1, 2, 3, 4]
    refused = [answers[n]["result"] for n in (2, 3)]
    assert all(r["isError"] for r in refused)
    assert [r["content"][0]["text"] for r in refused] == [
        "query must be a string",
        "unknown argument: colour (session_search takes query, limit, since, until, role, "
        "source, project, current_session, summarizer)"]
    assert answers[4]["result"]["structuredContent"]["count"] == 3


def test_a_line_cut_in_a_string_of_escaped_quotes_does_not_stall_the_server(db: Path) -> None:
    """A line cut short inside a string of many ``\\"`` (a client's buffer full), with more
    than 100 brackets or a number of thousands of digits before it, was scanned again from
    each quote for one that closes it: 40 KB took 9 s, 400 KB minutes, and the calls after
    it waited. The cut line is still refused (it is no JSON); the next call is answered."""
    cut = '"' + '\\"' * 200_000
    calls = ['{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"query": '
             + "[" * 150 + cut,
             '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"limit": '
             + "1" * 5_000 + ', "query": ' + cut,
             '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": '
             '"recent_sessions", "arguments": {}}}']
    answers = _answers(db, calls, unanswered=2)
    assert sorted(answers) == [1, 4]
    assert answers[4]["result"]["structuredContent"]["count"] == 3
