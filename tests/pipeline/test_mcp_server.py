"""``harkback mcp`` end to end: the SDK's own client starts the server as a subprocess over
stdio, lists the tools, calls each one and checks the answers against a real SQLite store."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Conversation, Role
from harkback.stages.stage import as_result
from tests.conftest import conversation
from tests.support.chat_server import ChatServer

LONG_TURNS = 7


def _sessions() -> list[Conversation]:
    long_turns: list[tuple[Role, str]] = [
        ("user" if i % 2 == 0 else "assistant", f"step {i} of the nginx reload")
        for i in range(LONG_TURNS)]
    return [
        conversation("docker-fix", ("user", "containers cannot resolve postgres on the bridge"),
                     ("assistant", "run docker network create backend and attach both"),
                     started_at=1_770_000_000.0, title="Docker DNS"),
        conversation("nginx-long", *long_turns,
                     started_at=1_771_000_000.0, title="nginx reload", project="/srv/web"),
        conversation("cors", ("user", "CORS error from nginx on uploads"),
                     ("assistant", "add_header needs always in the location block"),
                     started_at=1_772_000_000.0, title="CORS", source="codex"),
    ]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A SQLite store holding three sessions, closed again before the server opens it."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        asyncio.run(_ingest(store))
    return path


async def _ingest(store: SqliteStore) -> None:
    await store.ingest(_sessions()).awaitable()


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("HARKBACK_DB", "HARKBACK_MODEL", "HARKBACK_EMBEDDER", "OPENAI_BASE_URL")}


@asynccontextmanager
async def connected(db: Path | str | None, env: dict[str, str] | None = None,
                    more: Sequence[str] = ()) -> AsyncIterator[ClientSession]:
    """A client session with ``harkback mcp --db DB`` started as a subprocess (no
    ``--db`` when ``db`` is None), ``env`` added to its environment, ``more`` flags given."""
    flags = [*(["--db", str(db)] if db is not None else []), *more]
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "harkback.pipeline.cli", "mcp", *flags],
        env={**_environment(), **(env or {})})
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def _text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


async def _ok(session: ClientSession, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, _text(result)
    payload: dict[str, Any] = json.loads(_text(result))
    assert result.structured_content == payload
    return payload


async def _error(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    result = await session.call_tool(tool, arguments)
    assert result.is_error, _text(result)
    return _text(result)


async def test_lists_the_three_tools_with_their_schemas(db: Path) -> None:
    async with connected(db) as session:
        listed = await session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == ["session_search", "recent_sessions", "read_session"]
    assert tools["session_search"].input_schema["required"] == ["query"]
    assert tools["read_session"].input_schema["required"] == ["id"]


async def test_each_tool_answers_from_the_store(db: Path) -> None:
    async with connected(db) as session:
        found = await _ok(session, "session_search",
                          {"query": "docker network", "summarizer": "none", "limit": 2})
        recent = await _ok(session, "recent_sessions", {"limit": 2})
        since = await _ok(session, "recent_sessions", {"since": 1_771_000_000})
        first = await _ok(session, "read_session", {"id": "nginx-long", "limit": 3})
        second = await _ok(session, "read_session",
                           {"id": "nginx-long", "offset": first["next_offset"], "limit": 5})
        around = await _ok(session, "read_session", {"id": "nginx-long", "around": 5,
                                                     "limit": 3})
    assert found["mode"] == "search"
    assert [r["session_id"] for r in found["results"]] == ["docker-fix"]
    assert found["results"][0]["summary_kind"] == "none"
    assert [r["session_id"] for r in recent["results"]] == ["cors", "nginx-long"]
    assert [r["session_id"] for r in since["results"]] == ["cors", "nginx-long"]
    assert since["count"] == 2
    stored = await _stored_messages(db, "nginx-long")
    assert [m["content"] for m in first["messages"] + second["messages"]] == stored
    assert (first["next_offset"], second["next_offset"]) == (3, None)
    assert second["total"] == LONG_TURNS
    assert [m["position"] for m in around["messages"]] == [4, 5, 6]
    assert first["session"]["title"] == "nginx reload"


async def _stored_messages(db: Path, session_id: str) -> list[str]:
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        messages = as_result(await store.messages([session_id]).awaitable()).unwrap()
    return [m.content for m in messages]


async def test_search_payload_is_the_command_lines(db: Path) -> None:
    """The tool's payload is ``harkback search --json``'s, timings aside."""
    async with connected(db) as session:
        payload = await _ok(session, "session_search",
                            {"query": "nginx", "summarizer": "extractive", "limit": 3})
    done = subprocess.run(
        [sys.executable, "-m", "harkback.pipeline.cli", "search", "nginx", "--json",
         "--summarizer", "extractive", "--limit", "3", "--db", str(db)],
        capture_output=True, text=True, env=_environment(), timeout=120, check=True)
    command = json.loads(done.stdout)
    for answer in (payload, command):
        answer.pop("timings")
    assert payload == command
    assert payload["count"] == 2


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("read_session", {"id": "no-such"}, "no session with id 'no-such'"),
    ("read_session", {"id": "NGINX"}, "no session with id 'NGINX'; did you mean 'nginx-long'?"),
    ("read_session", {"id": "nginx-long", "offset": 7},
     "offset 7 is past the end of session 'nginx-long' (7 messages)"),
    ("read_session", {"id": "nginx-long", "offset": -1}, "offset must be at least 0, got -1"),
    ("read_session", {"id": "nginx-long", "offset": "3"}, "offset must be an integer"),
    ("read_session", {"id": "nginx-long", "around": 99},
     "session 'nginx-long' has no message 'nginx-long:99'"),
    ("read_session", {"id": "nginx-long", "around": 2, "offset": 3},
     "give a message to centre on or an offset, not both"),
    ("read_session", {}, "missing argument: id"),
    ("session_search", {"query": 42}, "query must be a string"),
    ("session_search", {"query": "x", "limit": True}, "limit must be an integer"),
    ("session_search", {"query": "x", "limit": 11}, "limit must be between 1 and 10, got 11"),
    ("session_search", {"query": "x", "role": "robot"},
     "unknown role(s) robot; choose from user, assistant, tool, system"),
    ("session_search", {"query": "x", "since": "soonish"}, "cannot read"),
    ("session_search", {"query": "x", "summarizer": "llm"}, "no model configured"),
    ("session_search", {"query": "x", "summarizer": "fancy"}, "summarizer must be one of"),
    ("session_search", {"query": "x", "source": ["codex"]}, "source must be a string"),
    ("session_search", {"query": "x", "source": ""}, "no source named by ''"),
    ("recent_sessions", {"project": "/"}, "no project folder named by '/'"),
    ("session_search", {"query": "x", "since": "the other day"}, "3 days ago"),
    ("recent_sessions", {"colour": "red"}, "unknown argument: colour"),
    ("recent_sessions", {"since": [1]}, "since must be a string or a number"),
    ("no_such_tool", {}, "unknown tool 'no_such_tool'"),
]
"""Calls that must fail: the tool, its arguments, and what the one line says."""


async def test_bad_calls_are_one_line_tool_errors(db: Path) -> None:
    """Each bad call is a tool error of one line, and the server answers the next call
    (one server for all of them: starting one takes seconds)."""
    async with connected(db) as session:
        answers = [await _error(session, tool, arguments) for tool, arguments, _ in BAD_CALLS]
        still = await _ok(session, "recent_sessions", {"limit": 1})
    for (tool, arguments, reason), message in zip(BAD_CALLS, answers, strict=True):
        assert reason in message, (tool, arguments, message)
        assert "\n" not in message, message
    assert still["count"] == 1


SAME_AS_THE_COMMAND_LINE: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("session_search", {"query": "x", "role": "robot"}, ("search", "x", "--role", "robot")),
    ("session_search", {"query": "x", "since": "soonish"}, ("search", "x", "--since", "soonish")),
    ("session_search", {"query": "x", "until": "2020-01-01", "since": "2021-01-01"},
     ("search", "x", "--until", "2020-01-01", "--since", "2021-01-01")),
    ("recent_sessions", {"since": "soonish"}, ("recent", "--since", "soonish")),
    ("read_session", {"id": "no-such"}, ("show", "no-such")),
    ("read_session", {"id": "nginx-long", "offset": 7}, ("show", "nginx-long", "--offset", "7")),
    ("read_session", {"id": "nginx-long", "around": "cors:0"},
     ("show", "nginx-long", "--around", "cors:0")),
]
"""Tool calls and the command lines asking the same: the tool error is the command's line."""


async def test_tool_errors_are_the_lines_the_command_line_prints(db: Path) -> None:
    """The README promises a tool error is "the line the command line would print": the same
    text as the command's stderr line, without its ``harkback: `` (it began "query rejected:
    " where the command line says only the reason), naming an argument as the tool does
    (``since``, the flag ``--since``; ``until``, ``--until``)."""
    async with connected(db) as session:
        answers = [await _error(session, tool, arguments)
                   for tool, arguments, _ in SAME_AS_THE_COMMAND_LINE]
    for (_, _, command), message in zip(SAME_AS_THE_COMMAND_LINE, answers, strict=True):
        done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *command,
                               "--db", str(db)], capture_output=True, text=True,
                              env=_environment(), timeout=120, check=False)
        assert done.returncode in (1, 2), done.stderr
        line = done.stderr.splitlines()[-1].removeprefix("harkback: ")
        assert message == line.replace("--since", "since").replace("--until", "until"), command


async def test_filters_by_source_and_project_and_leaves_out_the_callers_session(db: Path) -> None:
    """``source`` and ``project`` keep those sessions; ``current_session`` drops the
    caller's."""
    async with connected(db) as session:
        codex = await _ok(session, "session_search",
                          {"query": "nginx", "source": "codex", "summarizer": "none"})
        others = await _ok(session, "session_search",
                           {"query": "nginx", "current_session": "cors", "summarizer": "none"})
        listed = await _ok(session, "recent_sessions", {"source": "cli,hermes"})
        mine_left_out = await _ok(session, "recent_sessions", {"current_session": "cors"})
        web = await _ok(session, "session_search",
                        {"query": "nginx", "project": "web", "summarizer": "none"})
        listed_web = await _ok(session, "recent_sessions", {"project": "/srv/web"})
    assert [r["session_id"] for r in codex["results"]] == ["cors"]
    assert [r["session_id"] for r in others["results"]] == ["nginx-long"]
    assert [r["session_id"] for r in listed["results"]] == ["nginx-long", "docker-fix"]
    assert "cors" not in [r["session_id"] for r in mine_left_out["results"]]
    assert [r["session_id"] for r in web["results"]] == ["nginx-long"]
    assert [r["session_id"] for r in listed_web["results"]] == ["nginx-long"]


async def test_the_server_uses_the_command_lines_settings(db: Path, tmp_path: Path) -> None:
    """With no --db, the config file's db, limit and model are the server's: the
    default summarizer is then the model's, asked at the file's base_url."""
    config = tmp_path / "config.toml"
    with ChatServer() as chat:
        config.write_text(f'db = "{db.name}"\nlimit = 1\nmodel = "file-model"\n'
                          f'base_url = "{chat.url}"\n', encoding="utf-8")
        async with connected(None, env={"HARKBACK_CONFIG": str(config)}) as session:
            found = await _ok(session, "session_search", {"query": "nginx"})
            wider = await _ok(session, "session_search", {"query": "nginx", "limit": 2,
                                                          "summarizer": "none"})
        asked = [r.body["model"] for r in chat.received]
    assert found["count"] == 1 and wider["count"] == 2
    assert found["results"][0]["summary_kind"] == "llm"
    assert asked == ["file-model"]


async def test_with_a_model_the_summaries_are_cached_in_the_store(db: Path) -> None:
    """An agent asking the same question again, in this server or the next one, pays for
    no summary: the server keeps them in the store, as ``harkback search`` does. Without
    a model it never writes the file."""
    untouched = db.read_bytes()
    async with connected(db) as session:
        await _ok(session, "session_search", {"query": "nginx"})
    assert db.read_bytes() == untouched
    with ChatServer() as chat:
        env = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": chat.url}
        async with connected(db, env) as session:
            first = await _ok(session, "session_search", {"query": "nginx", "limit": 1})
            again = await _ok(session, "session_search", {"query": "nginx", "limit": 1})
        async with connected(db, env) as session:
            later = await _ok(session, "session_search", {"query": "nginx", "limit": 1})
        asked = len(chat.received)
    summaries = [p["results"][0]["summary"] for p in (first, again, later)]
    assert first["results"][0]["summary_kind"] == "llm"
    assert summaries == [summaries[0]] * 3
    assert asked == 1


async def test_a_missing_store_is_a_tool_error_and_the_server_lives_on(tmp_path: Path) -> None:
    db = tmp_path / "later.db"
    async with connected(db) as session:
        message = await _error(session, "recent_sessions", {})
        assert not db.exists()  # read-only: asking created nothing
        with SqliteStore.open(db).unwrap() as store:
            await _ingest(store)
        later = await _ok(session, "recent_sessions", {})
    assert str(db) in message and "\n" not in message
    assert later["count"] == 3


def _cli_without_mcp(*args: str) -> subprocess.CompletedProcess[str]:
    """``harkback ARGS`` in an interpreter where ``import mcp`` fails, as without the extra."""
    code = ("import sys; sys.modules['mcp'] = None; "
            "from harkback.pipeline.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=_environment(), timeout=120, check=False)


def test_without_the_extra_one_line_names_it(db: Path) -> None:
    done = _cli_without_mcp("mcp", "--db", str(db))
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "harkback: the MCP server needs the mcp extra: pip install 'harkback[mcp]'"]


def test_other_commands_never_import_the_sdk(db: Path) -> None:
    code = ("import sys; from harkback.pipeline.cli import main; "
            "status = main(['recent', '--json', '--db', sys.argv[1]]); "
            "print([m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')]); "
            "sys.exit(status)")
    done = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True,
                          text=True, env=_environment(), timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"
    assert _cli_without_mcp("recent", "--db", str(db)).returncode == 0


@pytest.mark.parametrize("named", [["--db", ":memory:"], []])
def test_an_in_memory_store_is_noted_on_stderr_never_stdout(named: list[str]) -> None:
    """``--db :memory:`` (or ``$HARKBACK_DB``) served an always empty store without a word,
    while ``recent`` notes it: the server says it once on stderr; stdout, the protocol's
    channel, gets nothing but the protocol."""
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "mcp", *named],
                          input="", capture_output=True, text=True, timeout=120, check=False,
                          env={**_environment(), **({} if named else {"HARKBACK_DB": ":memory:"})})
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert done.stderr == ("harkback: note: :memory: is an in-memory store, empty and gone when "
                           "the command ends: every call of this server finds nothing\n")


async def test_a_server_of_an_in_memory_store_still_speaks_the_protocol() -> None:
    """The note leaves the protocol whole: a client lists the tools and a call answers."""
    async with connected(":memory:") as session:
        assert (await _ok(session, "recent_sessions", {}))["results"] == []
