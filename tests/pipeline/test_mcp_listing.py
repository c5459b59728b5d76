"""What ``harkback mcp`` lists, as an agent's client reads it through the SDK: every
argument described, every tool titled and marked read-only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.pipeline.test_mcp_server import _ok, connected, db
from tests.support.chat_server import ChatServer

__all__ = ["db"]  # the store fixture, shared with the server's own tests


async def test_every_argument_says_what_it_is_for(db: Path) -> None:
    """A model picks arguments by their descriptions: recent_sessions' limit had none."""
    async with connected(db) as session:
        listed = await session.list_tools()
    missing = [(tool.name, name) for tool in listed.tools
               for name, schema in tool.input_schema["properties"].items()
               if not schema.get("description")]
    assert missing == []


async def test_the_tools_are_titled_and_marked_read_only(db: Path) -> None:
    """No tool carried a title or annotations: a client asks before every call of a tool
    not marked read-only, and shows the bare name. None changes what it reads; only a
    search with a model configured reaches beyond the machine's store."""
    async with connected(db) as session:
        plain = (await session.list_tools()).tools
    with ChatServer() as chat:
        async with connected(db, {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": chat.url}
                             ) as session:
            modelled = (await session.list_tools()).tools
    for tool in plain + modelled:
        assert tool.title and tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
    assert [t.annotations.open_world_hint for t in plain if t.annotations] == [False] * 3
    assert [t.annotations.open_world_hint for t in modelled if t.annotations] == [
        True, False, False]


async def test_the_descriptions_say_how_the_tools_chain(db: Path) -> None:
    """recent_sessions' description never named read_session, the tool that opens what it
    lists (session_search's did), and read_session's around and offset did not say they
    exclude each other: an agent giving both, as a page and a centre, was refused."""
    async with connected(db) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        listed = await _ok(session, "recent_sessions", {"limit": 1})
        page = await _ok(session, "read_session", {"id": listed["results"][0]["session_id"]})
    assert "read_session (its session_id)" in str(tools["recent_sessions"].description)
    arguments = tools["read_session"].input_schema["properties"]
    assert arguments["around"]["description"].endswith("Not with offset.")
    assert arguments["offset"]["description"].endswith("Not with around.")
    assert page["messages"], page


def _untimed(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k != "timings"}


async def test_every_argument_is_listed_with_one_type_that_means_what_a_number_did(
        db: Path) -> None:
    """since, until and around were listed with a list of types (``["string", "number"]``),
    which some model APIs refuse (Gemini's function declarations: 400 for the whole
    request). Each is listed as a string now; what a client reading that sends (the digits
    as a string) answers as the number did, and a number still goes."""
    async with connected(db) as session:
        tools = (await session.list_tools()).tools
        as_text = [await _ok(session, "recent_sessions", {"since": "1771000000"}),
                   await _ok(session, "session_search", {"query": "nginx", "until": "1771500000",
                                                         "summarizer": "none"}),
                   await _ok(session, "read_session", {"id": "nginx-long", "around": "3",
                                                       "limit": 2})]
        as_number = [await _ok(session, "recent_sessions", {"since": 1771000000}),
                     await _ok(session, "session_search", {"query": "nginx", "until": 1771500000,
                                                           "summarizer": "none"}),
                     await _ok(session, "read_session", {"id": "nginx-long", "around": 3,
                                                         "limit": 2})]
    unions = [(tool.name, name) for tool in tools
              for name, schema in tool.input_schema["properties"].items()
              if not isinstance(schema["type"], str)]
    assert unions == []
    assert [_untimed(p) for p in as_text] == [_untimed(p) for p in as_number]
    recent, found, page = as_number
    assert "docker-fix" not in str(recent) and "cors" not in str(found), (recent, found)
    assert page["offset"] > 0, page


def test_the_readme_names_the_variables_the_sdks_client_passes_on() -> None:
    """The README said the SDK's stdio client passes on only HOME, PATH, SHELL and TERM;
    it passes LOGNAME and USER too. A user reading which of their variables reach the
    server needs the list the client keeps."""
    from mcp.client import stdio

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    said = " ".join(readme.split("given no `env`, passes only ", 1)[1].split(", and a ", 1)[0]
                    .split())
    named = sorted(word.strip("`") for word in said.replace(" and ", ", ").split(", "))
    assert named == sorted(stdio.DEFAULT_INHERITED_ENV_VARS)


async def test_a_searchs_limit_lists_the_servers_default(db: Path) -> None:
    """recent_sessions and read_session listed their limit's default; session_search's
    was only in prose, naming $HARKBACK_LIMIT, which the agent cannot read. It is listed
    as the server's own (3 unless set), and a search given none returns that many."""
    async with connected(db, env={"HARKBACK_LIMIT": "2"}) as session:
        (search,) = [t for t in (await session.list_tools()).tools if t.name == "session_search"]
        found = await _ok(session, "session_search", {"query": "", "summarizer": "none"})
    assert search.input_schema["properties"]["limit"]["default"] == found["count"] == 2
    async with connected(db) as session:
        (search,) = [t for t in (await session.list_tools()).tools if t.name == "session_search"]
    assert search.input_schema["properties"]["limit"]["default"] == 3
