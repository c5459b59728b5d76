"""Tests of the ``session_search`` agent tool schema and handler."""

from __future__ import annotations

import json

import pytest

from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.tool import SESSION_SEARCH_TOOL, handle_session_search
from tests.conftest import conversation


@pytest.fixture
async def harkback() -> Harkback:
    """A facade over two sessions, one of them the caller's own."""
    store = MemoryStore()
    await store.ingest([
        conversation("old", ("user", "where did you save the backup script"),
                     ("assistant", "saved it to ~/bin/pg-backup.sh"), started_at=1.0),
        conversation("live", ("user", "backup script again please"), started_at=2.0)])
    return Harkback(store=store)


def test_schema_is_an_openai_function_with_required_query() -> None:
    """The schema names the tool, requires ``query`` and bounds ``limit``."""
    function = SESSION_SEARCH_TOOL["function"]
    assert function["name"] == "session_search"
    assert function["parameters"]["required"] == ["query"]
    assert function["parameters"]["properties"]["limit"]["maximum"] == 10
    assert "when" in function["description"].lower()


async def test_handler_runs_the_call_and_leaves_out_the_live_session(harkback: Harkback
                                                                     ) -> None:
    """The handler returns the payload as JSON text, without the caller's session."""
    text = await handle_session_search(harkback, '{"query": "backup script"}',
                                       current_session_id="live")
    payload = json.loads(text)
    assert [r["session_id"] for r in payload["results"]] == ["old"]


@pytest.mark.parametrize(("arguments", "message"), [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"query": 5}', "query must be a string"),
    ('{"query": "x", "limit": "3"}', "limit must be an integer"),
    ('{"query": "x", "limit": 99}', "limit must be between"),
    ('{"query": "x", "role_filter": "robot"}', "unknown role"),
])
async def test_bad_arguments_give_a_clear_error_payload(harkback: Harkback, arguments: str,
                                                        message: str) -> None:
    """Malformed tool arguments produce ``success: false`` naming the problem."""
    payload = json.loads(await handle_session_search(harkback, arguments))
    assert payload["success"] is False
    assert message in payload["error"]


@pytest.mark.parametrize(("arguments", "key"), [
    ('{"query": "backup \\ud83d"}', "query"),
    ('{"query": "backup", "role_filter": "\\ud800"}', "error"),
])
async def test_half_a_character_in_the_arguments_gives_utf8_json(
        harkback: Harkback, arguments: str, key: str) -> None:
    """Arguments escaping half a character (``\\ud83d``: an emoji a model's output cut in
    two) give text that is UTF-8 and strict JSON, with U+FFFD in its place: the payload
    echoed it raw, and the agent's runtime failed to encode the tool's answer."""
    text = await handle_session_search(harkback, arguments)
    text.encode("utf-8")
    assert "\ufffd" in json.loads(text)[key]
