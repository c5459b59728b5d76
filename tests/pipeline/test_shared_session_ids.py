"""Two transcript files naming one session id lose nothing, store nothing twice, and repeated
syncs leave the store as it is: run as commands on a SQLite file in an empty home.

A copy holding nothing new (a backed-up rollout, a session copied into another project
folder) adds nothing (one going on past the session continues it:
``test_copied_sessions_carry_on``); a copy with other messages is kept aside as ``ID@NAME``
and named,
whether the file the id came from is still there, deleted (kept, as sync keeps what agents
delete) or in another folder imported as a source of its own."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from subprocess import CompletedProcess
from typing import Any

from tests.pipeline.test_import_cli import harkback

DAY = "2026/11/20"
ORIGINAL = f"{DAY}/rollout-2026-11-20T10-00-00-aaaa.jsonl"
COPY = f"{DAY}/rollout-2026-11-20T10-00-00-bbbb.jsonl"
ASIDE = "cx1@rollout-2026-11-20T10-00-00-bbbb"
SID = "0f0e0d0c-0000-4000-8000-0000000000e1"


def rollout(path: Path, *runs: tuple[str, int]) -> None:
    """A Codex rollout of session ``cx1``: ``runs`` of requests ``(tag, count)``, request
    ``n`` of a run saying ``TAG n``, each run stamped apart from every other."""
    lines = [{"timestamp": "2026-11-20T10:00:00Z", "type": "session_meta",
              "payload": {"id": "cx1", "cwd": "/w"}}]
    lines += [{"timestamp": f"2026-11-20T{10 + hour:02d}:00:{n:02d}Z", "type": "response_item",
               "payload": {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": f"{tag} {n}"}]}}
              for hour, (tag, count) in enumerate(runs) for n in range(count)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def transcript(path: Path, *runs: tuple[str, int]) -> None:
    """A Claude Code transcript of session :data:`SID`, as :func:`rollout` makes one."""
    lines = [{"type": "user", "sessionId": SID, "uuid": f"{tag}{n}", "cwd": "/w",
              "timestamp": f"2026-11-20T{10 + hour:02d}:00:{n:02d}Z",
              "message": {"role": "user", "content": f"{tag} {n}"}}
             for hour, (tag, count) in enumerate(runs) for n in range(count)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def run(home: Path, *args: str) -> CompletedProcess[str]:
    """``harkback ARGS`` with ``home`` as the home folder and its store."""
    return harkback(*args, "--db", str(home / "h.db"),
                    env={"HOME": str(home), "PATH": os.environ["PATH"]})


def sync(home: Path, *args: str, kind: str = "codex") -> tuple[int, dict[str, Any], str]:
    """``harkback sync --json``: its exit status, the ``kind`` source's report and what it
    said on stderr."""
    done = run(home, "sync", "--json", *args)
    [source] = [s for s in json.loads(done.stdout)["sources"] if s["kind"] == kind]
    return done.returncode, source, done.stderr


def stored(home: Path) -> dict[str, list[str]]:
    """Every stored session's messages (as ``show`` gives them), by session id."""
    ids = json.loads(run(home, "recent", "--json", "--limit", "10").stdout)["results"]
    shown = {}
    for sid in sorted(r["session_id"] for r in ids):
        page = json.loads(run(home, "show", sid, "--json", "--limit", "200").stdout)
        shown[sid] = [m["content"].split("\n")[0] for m in page["messages"]]
    return shown


def requests(tag: str, count: int) -> list[str]:
    return [f"{tag} {n}" for n in range(count)]


def test_a_copy_holding_the_first_messages_of_a_session_adds_nothing(tmp_path: Path) -> None:
    """A backup of a rollout, taken when it held 2 of its 4 requests, saved beside it under
    another name: stored once (it was stored again whole as ``cx1@NAME``), counted, nothing
    named; syncs after it change nothing. The original deleted and pruned, the copy is read
    again and its 2 requests stored under the id."""
    sessions = tmp_path / ".codex" / "sessions"
    rollout(sessions / ORIGINAL, ("alpha", 4))
    assert sync(tmp_path)[0] == 0
    rollout(sessions / COPY, ("alpha", 2))
    status, report, said = sync(tmp_path)
    assert (status, said) == (0, "")
    assert report["left_out"] == {"session copied from another file (stored there)": 1}
    assert stored(tmp_path) == {"cx1": requests("alpha", 4)}
    again = sync(tmp_path)[1]["sessions"]
    assert (again["new"], again["updated"], again["unchanged"]) == (0, 0, 1)
    assert stored(tmp_path) == {"cx1": requests("alpha", 4)}
    (sessions / ORIGINAL).unlink()
    assert sync(tmp_path, "--prune")[0] == 0
    assert stored(tmp_path) == {"cx1": requests("alpha", 2)}


def test_a_copy_going_on_otherwise_keeps_the_original_once_it_is_deleted(
        tmp_path: Path) -> None:
    """A copy of a rollout written on (2 requests of its own): kept aside while the original
    is there. The original deleted (the sync keeps its session), the copy written on again:
    it took the id back and overwrote the original's 4 requests with its own; now the
    original keeps them, the copy stays aside, named once per change, and syncs between
    change nothing."""
    sessions = tmp_path / ".codex" / "sessions"
    rollout(sessions / ORIGINAL, ("alpha", 4))
    rollout(sessions / COPY, ("alpha", 2), ("pear", 2))
    assert sync(tmp_path)[0] == 3
    (sessions / ORIGINAL).unlink()
    assert sync(tmp_path)[1]["sessions"]["kept_gone"] == 1
    rollout(sessions / COPY, ("alpha", 2), ("pear", 3))
    status, report, said = sync(tmp_path)
    assert status == 3
    assert [line["outcome"] for line in report["skipped_lines"]] == ["renamed"]
    assert f"stored as '{ASIDE}'" in said
    mine = [*requests("alpha", 2), *requests("pear", 3)]
    assert stored(tmp_path) == {"cx1": requests("alpha", 4), ASIDE: mine}
    assert sync(tmp_path)[0] == 0
    rollout(sessions / COPY, ("alpha", 2), ("pear", 4))
    assert sync(tmp_path)[0] == 3
    assert stored(tmp_path) == {"cx1": requests("alpha", 4), ASIDE: [*mine, "pear 3"]}


def test_two_folders_holding_one_session_otherwise_do_not_take_turns(tmp_path: Path) -> None:
    """A rollout synced from ~/.codex, and a backup folder holding another conversation under
    its id imported on its own: each import replaced the other's messages (the last read
    won, and a change of either flipped it back, without a word). The backup's is kept
    aside under ``cx1@NAME``, named; each folder grows its own."""
    sessions, backup = tmp_path / ".codex" / "sessions", tmp_path / "backup"
    rollout(sessions / ORIGINAL, ("apple", 2))
    assert sync(tmp_path)[0] == 0
    rollout(backup / ORIGINAL, ("pear", 3))
    imported = run(tmp_path, "import", "codex", str(backup))
    assert imported.returncode == 3, imported.stderr
    assert "is stored with other messages (from another file); stored as " in imported.stderr
    aside = "cx1@rollout-2026-11-20T10-00-00-aaaa"
    assert stored(tmp_path) == {"cx1": requests("apple", 2), aside: requests("pear", 3)}
    rollout(sessions / ORIGINAL, ("apple", 3))
    assert sync(tmp_path)[0] == 0
    rollout(backup / ORIGINAL, ("pear", 4))
    assert run(tmp_path, "import", "codex", str(backup)).returncode == 3
    assert sync(tmp_path)[1]["sessions"]["unchanged"] == 1
    assert stored(tmp_path) == {"cx1": requests("apple", 3), aside: requests("pear", 4)}


def test_a_claude_code_session_copied_into_another_project_is_stored_once(
        tmp_path: Path) -> None:
    """A session file copied into a second project folder: stored once while the copy holds
    nothing new (it was stored twice, as ``SID@SID``). Written on there, it continues the
    session: ``test_copied_sessions_carry_on``."""
    projects = tmp_path / ".claude" / "projects"
    transcript(projects / "-w-a" / f"{SID}.jsonl", ("alpha", 3))
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 3))
    status, report, _ = sync(tmp_path, kind="claude-code")
    assert (status, report["sessions"]["new"]) == (0, 1)
    assert stored(tmp_path) == {SID: requests("alpha", 3)}
    assert sync(tmp_path, kind="claude-code")[0] == 0


def test_a_secret_in_a_copy_kept_aside_is_counted(tmp_path: Path) -> None:
    """A backup folder's copy kept aside holding a token: redacted and counted in the
    import's report (it was redacted and counted under the id it was read as, which the
    store never held: ``secrets_redacted`` said nothing)."""
    sessions, backup = tmp_path / ".codex" / "sessions", tmp_path / "backup"
    rollout(sessions / ORIGINAL, ("apple", 2))
    assert sync(tmp_path)[0] == 0
    rollout(backup / ORIGINAL, ("token=ghp_" + "a" * 36, 1))
    imported = run(tmp_path, "import", "codex", str(backup), "--json")
    [source] = json.loads(imported.stdout)["sources"]
    assert source["secrets_redacted"] == {"github-token": 1}, source
    aside = "cx1@rollout-2026-11-20T10-00-00-aaaa"
    assert "ghp_" not in json.dumps(stored(tmp_path)[aside])


def test_a_copy_listed_before_its_original_does_not_take_the_id(tmp_path: Path) -> None:
    """A session copied into another project folder (``-w-a``) when it held 2 of its
    messages, both files new to the store, the copy listed first: the copy took the id and
    the original was kept aside whole (``SID@SID``: 2 messages twice), named at every change
    of the file the agent writes. Now the original holds the id, the copy adds nothing,
    and the original written on grows it, unnamed."""
    projects = tmp_path / ".claude" / "projects"
    transcript(projects / "-w-a" / f"{SID}.jsonl", ("alpha", 2))
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 4))
    status, report, said = sync(tmp_path, kind="claude-code")
    assert (status, said, report["left_out"]) == (
        0, "", {"session copied from another file (stored there)": 1})
    assert stored(tmp_path) == {SID: requests("alpha", 4)}
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 4), ("beta", 1))
    assert sync(tmp_path, kind="claude-code")[0] == 0
    assert sync(tmp_path, kind="claude-code")[0] == 0
    assert stored(tmp_path) == {SID: [*requests("alpha", 4), "beta 0"]}


def test_a_rollout_archived_after_its_text_was_stored_unredacted_keeps_its_id(
        tmp_path: Path) -> None:
    """A rollout stored with its token (``--keep-secrets``; or before a rule found it),
    then moved by Codex to ``archived_sessions``: the same messages, the token redacted as
    it is read now. It was taken for other messages and stored again whole, aside as
    ``cx1@NAME`` (exit 3); now it is read as the moved file it is: the id keeps it, its
    text redacted."""
    sessions = tmp_path / ".codex" / "sessions"
    token = "token=ghp_" + "a" * 36
    rollout(sessions / ORIGINAL, (token, 2))
    assert sync(tmp_path, "--keep-secrets")[0] == 0
    archived = tmp_path / ".codex" / "archived_sessions" / PurePath(ORIGINAL).name
    archived.parent.mkdir()
    (sessions / ORIGINAL).rename(archived)
    status, _, said = sync(tmp_path)
    assert (status, said) == (0, "")
    assert stored(tmp_path) == {"cx1": requests("token=[secret:github-token]", 2)}


def test_a_copy_kept_aside_stays_aside_once_the_original_is_pruned(tmp_path: Path) -> None:
    """A copy kept aside (``cx1@NAME``), the original deleted and its session pruned, the
    copy written on: it took the freed id and was stored there whole, its messages twice
    (``cx1@NAME`` kept the old ones). Now it goes on under ``cx1@NAME``, unnamed."""
    sessions = tmp_path / ".codex" / "sessions"
    rollout(sessions / ORIGINAL, ("alpha", 4))
    rollout(sessions / COPY, ("alpha", 2), ("pear", 2))
    assert sync(tmp_path)[0] == 3
    (sessions / ORIGINAL).unlink()
    assert sync(tmp_path, "--prune")[0] == 0
    rollout(sessions / COPY, ("alpha", 2), ("pear", 3))
    status, _, said = sync(tmp_path)
    assert (status, said) == (0, "")
    assert stored(tmp_path) == {ASIDE: [*requests("alpha", 2), *requests("pear", 3)]}
    again = sync(tmp_path, "--prune")[1]["sessions"]
    assert (again["removed"], again["unchanged"]) == (0, 1)


def reply_in_parts(path: Path, parts: int) -> None:
    """A Claude Code transcript of :data:`SID`: a request, then the first ``parts`` lines of
    one reply written in three (text, a tool call, more text: one message)."""
    def line(kind: str, uuid: str, second: int, content: Any) -> str:
        message = {"role": kind, "content": content, **({"id": "m1"} if kind == "assistant"
                                                         else {})}
        return json.dumps({"type": kind, "sessionId": SID, "uuid": uuid, "cwd": "/w",
                           "timestamp": f"2026-11-20T10:00:{second:02d}Z",
                           "message": message}) + "\n"
    lines = [line("user", "u1", 1, "the bridge is down"),
             line("assistant", "a1", 2, [{"type": "text", "text": "checking nginx"}]),
             line("assistant", "a2", 3, [{"type": "tool_use", "id": "c1", "name": "Bash",
                                          "input": {"command": "ls"}}]),
             line("assistant", "a3", 4, [{"type": "text", "text": "found it"}])]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines[:1 + parts]), encoding="utf-8")


def test_a_copy_taken_while_a_reply_was_written_adds_nothing(tmp_path: Path) -> None:
    """A session copied into another project folder while its last reply was written (its
    text, not yet its tool call and the text after): that reply holds the first part of the
    stored one. It was taken for other messages and stored again whole, aside (exit 3)."""
    projects = tmp_path / ".claude" / "projects"
    reply_in_parts(projects / "-w-a" / f"{SID}.jsonl", 3)
    assert sync(tmp_path, kind="claude-code")[0] == 0
    before = stored(tmp_path)
    reply_in_parts(projects / "-w-b" / f"{SID}.jsonl", 1)
    status, report, said = sync(tmp_path, kind="claude-code")
    assert (status, said, report["left_out"]) == (
        0, "", {"session copied from another file (stored there)": 1})
    assert stored(tmp_path) == before


def test_a_file_moved_once_its_reply_was_finished_keeps_its_id(tmp_path: Path) -> None:
    """A project folder renamed, its session's last reply stored while it was written and
    finished since: the moved file goes on past the stored reply, and is read as the moved
    file it is, the reply whole (it was stored again whole, aside, named with exit 3)."""
    projects = tmp_path / ".claude" / "projects"
    reply_in_parts(projects / "-w-a" / f"{SID}.jsonl", 1)
    assert sync(tmp_path, kind="claude-code")[0] == 0
    (projects / "-w-a" / f"{SID}.jsonl").unlink()
    reply_in_parts(projects / "-w-b" / f"{SID}.jsonl", 3)
    status, _, said = sync(tmp_path, kind="claude-code")
    assert (status, said) == (0, "")
    page = json.loads(run(tmp_path, "show", SID, "--json").stdout)["messages"]
    assert "found it" in page[-1]["content"]
    assert list(stored(tmp_path)) == [SID]


def test_an_older_copy_imported_from_a_backup_leaves_the_session_as_it_was(
        tmp_path: Path) -> None:
    """A backup of a rollout taken when it held 2 of its 4 requests, its folder imported on
    its own: every stored message is kept, and the session still ends where it did (it
    ended at the copy's last request, moved back in ``recent``: counted updated)."""
    sessions, backup = tmp_path / ".codex" / "sessions", tmp_path / "backup"
    rollout(sessions / ORIGINAL, ("alpha", 4))
    assert sync(tmp_path)[0] == 0
    shown = json.loads(run(tmp_path, "show", "cx1", "--json").stdout)
    rollout(backup / ORIGINAL, ("alpha", 2))
    imported = run(tmp_path, "import", "codex", str(backup), "--json")
    [source] = json.loads(imported.stdout)["sources"]
    assert (imported.returncode, source["sessions"]["updated"]) == (0, 0), imported.stderr
    assert json.loads(run(tmp_path, "show", "cx1", "--json").stdout) == shown
