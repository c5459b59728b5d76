"""``harkback mcp --db h.db``: a relative store path, through the SDK's own client and a
real SQLite store. The client picks the folder the server starts in (Claude Desktop starts
it in ``/``) and the agent's shell is elsewhere, so what the server says of its store
names the file wherever it is read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.pipeline.test_mcp_hostile import _ingested
from tests.pipeline.test_mcp_server import _environment, _error, _text


def _server(folder: Path, db: str) -> StdioServerParameters:
    """``harkback mcp --db DB`` started in ``folder``."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "harkback.pipeline.cli", "mcp", "--db", db],
        env=_environment(), cwd=folder)


async def test_a_missing_relative_store_is_named_where_it_was_looked_for(
        tmp_path: Path) -> None:
    """The line said "no harkback database at gone.db; ... harkback sync --db gone.db":
    run from the user's shell, that sync filled another file than the server reads."""
    started_in = tmp_path / "server"
    started_in.mkdir()
    async with stdio_client(_server(started_in, "gone.db")) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        message = await _error(session, "recent_sessions", {})
    expected = started_in / "gone.db"
    assert f"no harkback database at {expected};" in message, message
    assert f"harkback sync --db {expected} " in message, message


async def test_a_cut_messages_note_reads_it_whole_from_another_folder(tmp_path: Path) -> None:
    """The note on a cut message named ``--db h.db`` as given: pasted in the agent's
    shell, in another folder, it found no store there. It names the file the server read,
    and pasted elsewhere it prints the message whole."""
    huge = "HEAD " + "relative store log line\n" * 2_000 + " TAIL"
    db = _ingested(tmp_path, {"id": "big", "messages": [{"role": "tool", "content": huge}]})
    async with stdio_client(_server(db.parent, db.name)) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        answer = await session.call_tool("read_session", {"id": "big"})
    assert not answer.is_error, _text(answer)
    (cut,) = json.loads(_text(answer))["messages"]
    note = cut["content"][10_000:-10_000].strip()
    command = note.split("; ")[-1].removesuffix(" prints it whole]...")
    elsewhere = tmp_path / "agent"
    elsewhere.mkdir()
    env = {**_environment(), "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                     f"{os.environ.get('PATH', '')}"}
    whole = subprocess.run(["bash", "-c", f"{command} --json"], capture_output=True,
                           text=True, env=env, cwd=elsewhere, timeout=120, check=False)
    assert whole.returncode == 0, (command, whole.stderr)
    assert [m["content"] for m in json.loads(whole.stdout)["messages"]] == [huge]


async def test_a_relative_store_through_a_link_is_the_file_the_system_opens(
        tmp_path: Path) -> None:
    """``--db link/../h.db``, ``link`` a folder's link: the system reads ``..`` from where
    the link points, so the store is the h.db beside that folder. Made absolute by
    dropping ``link/..``, it named a file in the server's folder: "no harkback database"."""
    db = _ingested(tmp_path, {"id": "linked", "messages": [{"role": "user", "content": "x"}]})
    (tmp_path / "deep").mkdir()
    started_in = tmp_path / "server"
    started_in.mkdir()
    (started_in / "link").symlink_to(tmp_path / "deep", target_is_directory=True)
    async with stdio_client(_server(started_in, f"link/../{db.name}")) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        answer = await session.call_tool("recent_sessions", {})
    assert not answer.is_error, _text(answer)
    assert [r["session_id"] for r in json.loads(_text(answer))["results"]] == ["linked"]


async def test_a_server_whose_folder_was_deleted_still_answers(tmp_path: Path) -> None:
    """Started in a folder deleted under it, the server asked the system for that folder
    to anchor --db and ended at once: "harkback: internal error: FileNotFoundError",
    status 70, whether --db was relative or whole. A whole path is read; a relative one
    names no file any more, and is a tool error."""
    db = _ingested(tmp_path, {"id": "kept", "messages": [{"role": "user", "content": "x"}]})
    answers = []
    for given in (str(db), "h.db"):
        gone = tmp_path / "gone"
        gone.mkdir()
        started = StdioServerParameters(command="bash", args=[
            "-c", f'cd "{gone}" && rmdir "{gone}" && exec "$0" -m harkback.pipeline.cli mcp '
                  f'--db "{given}"', sys.executable], env=_environment())
        async with stdio_client(started) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            answers.append(await session.call_tool("recent_sessions", {}))
    whole, relative = answers
    assert not whole.is_error, _text(whole)
    assert [r["session_id"] for r in json.loads(_text(whole))["results"]] == ["kept"]
    assert relative.is_error and "h.db" in _text(relative), _text(relative)
