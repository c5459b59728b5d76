"""``harkback show``: read a session back by page, through a real subprocess and SQLite file."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harkback.pipeline import Harkback, open_store
from harkback.pipeline.terminal import line_of
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run

TURNS = 45
NEEDLE = 31
"""The one message of the long session that mentions the keycloak realm."""


def _turn(i: int) -> str:
    if i == NEEDLE:
        return "the keycloak realm export failed: use kc.sh export --realm staging"
    return f"step {i}: checking the deploy logs again"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store with a long session, its sub-agent child, and an unrelated session."""
    sessions = [
        conversation("deploy", *[("user" if i % 2 == 0 else "assistant", _turn(i))
                                 for i in range(TURNS)],
                     started_at=1_771_000_000.0, title="Staging deploy",
                     timestamps=[1_771_000_000.0 + 60 * i for i in range(TURNS)]),
        conversation("deploy-sub", ("user", "grep the pod logs for OOMKilled"),
                     ("assistant", "found OOMKilled in the worker pod"),
                     started_at=1_771_000_500.0, source="subagent", parent="deploy"),
        conversation("other", ("user", "rename the css classes"), started_at=1_772_000_000.0),
    ]
    return ingested(tmp_path, sessions)


def show(db: Path, *args: str) -> dict[str, Any]:
    """``harkback show ARGS --json``, which must succeed; its payload."""
    done = run("show", *args, "--json", db=db)
    assert done.returncode == 0, done.stderr
    payload: dict[str, Any] = json.loads(done.stdout)
    return payload


def test_first_page_has_ids_roles_times_and_a_next_offset(db: Path) -> None:
    """The default page is the first 20 messages, each with its id, role and time."""
    page = show(db, "deploy")
    assert [m["id"] for m in page["messages"]] == [f"deploy:{i}" for i in range(20)]
    assert [m["role"] for m in page["messages"][:2]] == ["user", "assistant"]
    assert page["messages"][3]["timestamp"] == 1_771_000_180.0
    assert (page["total"], page["offset"], page["next_offset"]) == (TURNS, 0, 20)


def test_offsets_walk_to_the_end_and_stop(db: Path) -> None:
    """Following next_offset reads every message once; the last page says null."""
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = show(db, "deploy", "--offset", str(offset), "--limit", "16")
        seen += [m["content"] for m in page["messages"]]
        offset = page["next_offset"]
    assert seen == [_turn(i) for i in range(TURNS)]


def test_around_centres_the_page_on_the_message(db: Path) -> None:
    """``--around deploy:31 --limit 5`` holds messages 29-33."""
    page = show(db, "deploy", "--around", f"deploy:{NEEDLE}", "--limit", "5")
    assert [m["position"] for m in page["messages"]] == [29, 30, 31, 32, 33]
    assert page["next_offset"] == 34


def test_header_lists_parent_and_children(db: Path) -> None:
    """The parent names its children; the child names its parent, in JSON and in text."""
    parent = show(db, "deploy")["lineage"]
    child = show(db, "deploy-sub")["lineage"]
    assert parent["parent"] is None
    assert [c["session_id"] for c in parent["children"]] == ["deploy-sub"]
    assert child["parent"]["session_id"] == "deploy" and child["children"] == []
    text = run("show", "deploy-sub", db=db)
    assert text.returncode == 0
    assert "parent: deploy  Staging deploy" in text.stdout
    assert "[deploy-sub:1] assistant" in text.stdout


def test_unknown_session_is_one_line_and_exit_1(db: Path) -> None:
    """An id that is not stored fails with one clear line, no traceback."""
    done = run("show", "no-such-session", db=db)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "harkback: not found: no session with id 'no-such-session'"]
    failed = run("show", "no-such-session", "--json", db=db)
    assert json.loads(failed.stdout)["success"] is False


def test_the_start_of_stored_ids_names_them_and_shows_none(db: Path) -> None:
    """An id that is only the start of stored ones, or one in another case, names them in
    the one line ("did you mean"), and shows no session: a prefix could be the wrong one."""
    for asked, named in (("dep", "'deploy' or 'deploy-sub'"), ("DEPLOY-SUB", "'deploy-sub'")):
        done = run("show", asked, db=db)
        assert (done.returncode, done.stdout) == (1, "")
        assert done.stderr.strip().splitlines() == [
            f"harkback: not found: no session with id {asked!r}; did you mean {named}?"]


@pytest.mark.parametrize("around", ["deploy:x", "other:3", "-"])
def test_bad_around_is_a_usage_error(db: Path, around: str) -> None:
    """A malformed id or another session's id: exit 2."""
    done = run("show", "deploy", f"--around={around}", db=db)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("flags", [["--around", f"deploy:{TURNS}"], ["--around", "999"],
                                   ["--offset", str(TURNS)]])
def test_a_message_the_session_lacks_is_not_found(db: Path, flags: list[str]) -> None:
    """``--around`` a message past the session's end fails as ``--offset`` past it does:
    one line, exit status 1 (not found), and the same in the JSON payload."""
    done = run("show", "deploy", *flags, db=db)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("harkback: not found: ")
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    failed = run("show", "deploy", *flags, "--json", db=db)
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["success"] is False
    assert "usage" not in json.loads(failed.stdout)


def test_offset_past_the_end_fails_clearly(db: Path) -> None:
    """Past the end is a failure naming the session's size (exit 1), not an empty page."""
    done = run("show", "deploy", "--offset", str(TURNS), db=db)
    assert done.returncode == 1
    assert f"past the end of session 'deploy' ({TURNS} messages)" in done.stderr


def test_offset_past_the_end_of_an_empty_session_fails_too(tmp_path: Path) -> None:
    """An empty session is one empty page at offset 0; any later offset is past its end,
    as for any session (``--offset 100`` answered an empty page, exit 0)."""
    db = ingested(tmp_path, [conversation("empty")])
    assert run("show", "empty", db=db).returncode == 0
    done = run("show", "empty", "--offset", "1", db=db)
    assert done.returncode == 1
    assert "past the end of session 'empty' (0 messages)" in done.stderr


def test_around_and_offset_together_are_a_usage_error(db: Path) -> None:
    """Two ways of placing one page cannot both be given."""
    assert run("show", "deploy", "--around", "3", "--offset", "2", db=db).returncode == 2


def test_show_leaves_the_store_unchanged(db: Path) -> None:
    """Reading back opens the store read-only: the file's bytes are the same after."""
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    show(db, "deploy", "--around", "deploy:10")
    assert run("show", "missing", db=db).returncode == 1
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["h.db", "sessions.jsonl"]


def test_search_ids_lead_to_the_matched_messages(db: Path) -> None:
    """Each matched id of a search result opens, with ``show --around``, a page that
    holds that message, and the message says what was searched for."""
    done = run("search", "keycloak realm OOMKilled", "--json", "--limit", "5", db=db)
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    ids = result["matched_message_ids"]
    assert set(ids) >= {f"deploy:{NEEDLE}", "deploy-sub:0", "deploy-sub:1"}
    for found in ids:
        session = found.rpartition(":")[0]
        page = show(db, session, "--around", found, "--limit", "3")
        (message,) = [m for m in page["messages"] if m["id"] == found]
        assert {"keycloak", "OOMKilled"} & set(message["content"].split())


def test_the_facade_reads_the_same_page_by_position(db: Path) -> None:
    """``Harkback.read_session`` (what the MCP server calls) takes a bare position too."""
    store = open_store(str(db), readonly=True).unwrap()
    try:
        read = asyncio.run(Harkback(store=store).read_session("deploy", around=NEEDLE, limit=5))
    finally:
        store.close()
    assert read.unwrap().to_payload() == show(db, "deploy", "--around", f"deploy:{NEEDLE}",
                                              "--limit", "5")


def test_search_text_output_names_the_matched_ids(db: Path) -> None:
    """The human search output lists the matched ids under each result."""
    done = run("search", "keycloak realm", db=db)
    assert done.returncode == 0, done.stderr
    assert f"matched: deploy:{NEEDLE}" in done.stdout


def _open_hint(text: str) -> str:
    """The command a human search result prints to open its best match."""
    (line,) = [line for line in text.splitlines() if line.startswith("    matched: ")]
    return line.split("  (open: ", 1)[1].removesuffix(")")


def _pasted(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` run by a shell as a person pasting it would, with this harkback first
    on the PATH and no store named in the environment."""
    env = {k: v for k, v in os.environ.items() if k != "HARKBACK_DB"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120, check=False)


@pytest.mark.parametrize("session_id", ["-x", "it's -- odd", "deploy", "tab\there",
                                        "it's\u202eodd\x1b"])
def test_the_search_hint_opens_the_match_when_pasted(tmp_path: Path, session_id: str) -> None:
    """The hint under a search result is a command that works pasted into a shell: an id
    starting with ``-`` or holding quotes, a store in a folder whose name has a space,
    and a match in a sub-agent's session, which the hint opens. An id holding a character
    that output shows as a sign (a tab as ``␉``, ESC as ``␛``) was pasted as that sign, and
    the command found no such session."""
    folder = tmp_path / "my store"
    folder.mkdir()
    db = ingested(folder, [
        conversation(session_id, ("user", "rotate the keycloak realm keys"),
                     started_at=1_771_000_000.0),
        conversation(f"{session_id}-sub", ("user", "ignore this"),
                     ("assistant", "the OOMKilled worker pod needed more memory"),
                     started_at=1_771_000_100.0, parent=session_id)])
    for query, position in (("keycloak realm", f"{session_id}:0"),
                            ("OOMKilled", f"{session_id}-sub:1")):
        found = run("search", query, db=db)
        assert found.returncode == 0, found.stderr
        opened = _pasted(_open_hint(found.stdout), cwd=tmp_path)
        assert opened.returncode == 0, opened.stderr
        assert f"[{line_of(position)}] " in opened.stdout  # the id as output shows it
