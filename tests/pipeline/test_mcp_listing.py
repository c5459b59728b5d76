"""What ``harkback mcp`` lists, as an agent's client reads it through the SDK: every
argument described, every tool titled and marked read-only."""

from __future__ import annotations

from pathlib import Path

from tests.pipeline.test_mcp_server import connected, db
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
