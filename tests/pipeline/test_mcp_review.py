"""What an agent does next with an answer of ``harkback mcp``: open the page around a match
with what the search cited (``SESSION_ID:POSITION``), as ``harkback show --around`` does,
or follow what an error line says; through the SDK's own client and a real SQLite store."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harkback.adapters.stores.sqlite import SqliteStore
from tests.conftest import conversation
from tests.pipeline.test_mcp_server import _environment, _error, _ok, connected, db
from tests.support.chat_server import ChatServer

__all__ = ["db"]  # the store fixture, shared with the server's own tests


async def test_read_session_opens_around_a_cited_message_id(db: Path) -> None:
    async with connected(db) as session:
        found = await _ok(session, "session_search",
                          {"query": "nginx reload step 5", "summarizer": "none", "limit": 1})
        (result,) = found["results"]
        cited = result["matched_message_ids"][0]
        page = await _ok(session, "read_session",
                         {"id": result["session_id"], "around": cited, "limit": 3})
        wrong = await _error(session, "read_session", {"id": "cors", "around": cited})
    assert result["session_id"] == "nginx-long"
    position = int(cited.rpartition(":")[2])
    assert [m["position"] for m in page["messages"]] == [position - 1, position, position + 1]
    assert wrong.endswith(f"message id {cited!r} is of session 'nginx-long', not 'cors' "
                          "(show that session)")


async def test_a_hit_in_a_sub_agent_opens_with_the_results_own_id(tmp_path: Path) -> None:
    """A result is its lineage's root, and a hit in its sub-agent is cited under the
    sub-agent's id: the agent that passed the result's session_id with that cited id, as
    the tool's description invites, was told the message is of another session. The page
    is the sub-agent's, around the hit; a session outside the lineage is still refused."""
    db = tmp_path / "h.db"
    with SqliteStore.open(db).unwrap() as store:
        await store.ingest([
            conversation("deploy", ("user", "ship the release"), started_at=1_770_000_000.0),
            conversation("deploy/agent-1", ("user", "check the pelican migration"),
                         ("assistant", "the migration pelican_0042 is applied"),
                         ("user", "and the rollback?"), started_at=1_770_000_100.0,
                         parent="deploy"),
            conversation("other", ("user", "unrelated"), started_at=1_770_000_200.0),
        ]).awaitable()
    async with connected(db) as session:
        found = await _ok(session, "session_search",
                          {"query": "pelican migration applied", "summarizer": "none"})
        (result,) = found["results"]
        cited = result["matched_message_ids"][0]
        page = await _ok(session, "read_session",
                         {"id": result["session_id"], "around": cited, "limit": 3})
        wrong = await _error(session, "read_session", {"id": "other", "around": cited})
    assert result["session_id"] == "deploy" and cited.startswith("deploy/agent-1:")
    assert page["session"]["session_id"] == "deploy/agent-1"
    assert cited in [m["id"] for m in page["messages"]]
    assert wrong.startswith(f"message id {cited!r} is of session 'deploy/agent-1', not 'other'")


async def test_llm_without_a_model_says_what_this_server_reads(db: Path) -> None:
    """The tool error was the command line's line, "pass --model NAME or set
    HARKBACK_MODEL": harkback mcp takes no --model (started with one, it exits on a usage
    error). The line names what the server does read, and that works."""
    async with connected(db) as session:
        message = await _error(session, "session_search", {"query": "nginx",
                                                           "summarizer": "llm"})
    assert "--model" not in message and "HARKBACK_MODEL" in message
    started = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "mcp",
                              "--db", str(db), "--model", "m"], capture_output=True,
                             text=True, env=_environment(), timeout=60, check=False,
                             stdin=subprocess.DEVNULL)
    assert started.returncode == 2 and "--model" in started.stderr
    with ChatServer() as chat:
        env = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": chat.url}
        async with connected(db, env) as session:
            found = await _ok(session, "session_search", {"query": "nginx",
                                                          "summarizer": "llm", "limit": 1})
    assert found["results"][0]["summary_kind"] == "llm"


async def test_epoch_milliseconds_are_told_apart(db: Path) -> None:
    """A model copying JavaScript's Date.now() sends milliseconds: the error said only that
    the moment was past the year 9999. It says what to do, as ingest does, and done so
    the call answers."""
    async with connected(db) as session:
        messages = [await _error(session, "recent_sessions", {"since": since})
                    for since in (1_771_000_000_000, "1771000000000")]
        divided = await _ok(session, "recent_sessions", {"since": 1_771_000_000_000 // 1000})
    assert all("milliseconds? divide by 1000" in message for message in messages)
    assert [r["session_id"] for r in divided["results"]] == ["cors", "nginx-long"]
