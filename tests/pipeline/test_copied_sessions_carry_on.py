"""A Claude Code session copied into another project folder and resumed there carries on:
its new messages are stored once, as a continuation of the session, and syncs while the
person works there say nothing is damaged (exit 0). Run as commands on a SQLite file in an
empty home; the store, read back through ``show``, is the judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harkback.pipeline.import_carry import continued
from harkback.stages.records import Conversation, Message, Session
from tests.pipeline.test_shared_session_ids import SID, requests, run, sync, transcript

ASIDE = f"{SID}@{SID}"


def shown(home: Path, session_id: str) -> tuple[str | None, list[str]]:
    """A stored session's parent (None: a root) and its messages' first lines."""
    page: dict[str, Any] = json.loads(run(home, "show", session_id, "--json",
                                          "--limit", "200").stdout)
    parent = page["lineage"]["parent"]
    return (parent["session_id"] if parent else None,
            [m["content"].split("\n")[0] for m in page["messages"]])


def test_a_session_resumed_in_another_project_folder_continues_it(tmp_path: Path) -> None:
    """A session of ``-w-a`` copied to ``-w-b`` and written on there: it was stored again
    whole as ``SID@SID`` (its 3 shared messages twice) and each sync while the person worked
    there exited 3, naming it. Now ``SID@SID`` holds only its own messages, as a
    continuation of the session, every sync exits 0 and says nothing; the original written
    on too (both went on from where they met) leaves both as they are."""
    projects = tmp_path / ".claude" / "projects"
    transcript(projects / "-w-a" / f"{SID}.jsonl", ("alpha", 3))
    assert sync(tmp_path, kind="claude-code")[0] == 0
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 3), ("moved", 1))
    status, report, said = sync(tmp_path, kind="claude-code")
    assert (status, said) == (0, "")
    assert report["left_out"] == {"message copied from another file (stored there)": 3}
    assert shown(tmp_path, SID) == (None, requests("alpha", 3))
    assert shown(tmp_path, ASIDE) == (SID, ["moved 0"])
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 3), ("moved", 3))
    assert sync(tmp_path, kind="claude-code")[:3:2] == (0, "")
    transcript(projects / "-w-a" / f"{SID}.jsonl", ("alpha", 3), ("stayed", 1))
    assert sync(tmp_path, kind="claude-code")[:3:2] == (0, "")
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 3), ("moved", 4))
    assert sync(tmp_path, kind="claude-code")[:3:2] == (0, "")
    assert shown(tmp_path, SID) == (None, [*requests("alpha", 3), "stayed 0"])
    assert shown(tmp_path, ASIDE) == (SID, requests("moved", 4))
    again = sync(tmp_path, kind="claude-code")[1]["sessions"]
    assert (again["new"], again["updated"]) == (0, 0)


def test_a_continuation_is_stored_whole_once_its_session_is_pruned(tmp_path: Path) -> None:
    """The original file deleted (its session kept, as sync keeps what agents delete), the
    copy written on stays its continuation; once ``sync --prune`` removed the session, the
    copy holds the shared messages again: stored whole, a root, nothing lost."""
    projects = tmp_path / ".claude" / "projects"
    transcript(projects / "-w-a" / f"{SID}.jsonl", ("alpha", 3))
    assert sync(tmp_path, kind="claude-code")[0] == 0
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 3), ("moved", 1))
    assert sync(tmp_path, kind="claude-code")[0] == 0
    (projects / "-w-a" / f"{SID}.jsonl").unlink()
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 3), ("moved", 2))
    assert sync(tmp_path, kind="claude-code")[:3:2] == (0, "")
    assert shown(tmp_path, ASIDE) == (SID, requests("moved", 2))
    assert sync(tmp_path, "--prune", kind="claude-code")[0] == 0
    assert sync(tmp_path, kind="claude-code")[0] == 0
    assert shown(tmp_path, ASIDE) == (None, [*requests("alpha", 3), *requests("moved", 2)])


def test_a_copy_listed_a_batch_before_its_original_is_continued_by_it(tmp_path: Path) -> None:
    """A copy of a session taken when it held 2 messages, in a folder listed 100 files
    before the original's (another batch): the copy takes the id; the original, going on
    past it, was kept aside whole (2 messages twice) and named at every change of the file
    the agent writes. Now it continues the copy's session, holding its own messages."""
    projects = tmp_path / ".claude" / "projects"
    for n in range(100):  # sorted after the copy, before the original
        path = projects / "-w-a" / f"1{n:07d}-0000-4000-8000-000000000000.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"type": "user", "sessionId": path.stem, "uuid": "u",
                                    "timestamp": "2026-11-20T09:00:00Z",
                                    "message": {"role": "user", "content": "filler"}}) + "\n",
                        encoding="utf-8")
    transcript(projects / "-w-a" / f"{SID}.jsonl", ("alpha", 2))
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 4))
    status, _, said = sync(tmp_path, kind="claude-code")
    assert (status, said) == (0, "")
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 4), ("beta", 1))
    assert sync(tmp_path, kind="claude-code")[:3:2] == (0, "")
    assert shown(tmp_path, SID) == (None, requests("alpha", 2))
    assert shown(tmp_path, ASIDE) == (SID, [*requests("alpha", 4)[2:], "beta 0"])


def test_a_copy_disagreeing_on_a_shared_message_is_kept_aside_whole(tmp_path: Path) -> None:
    """A copy whose second message is not the session's: a true divergence, kept aside
    whole as ``SID@SID`` and named (exit 3), the original untouched."""
    projects = tmp_path / ".claude" / "projects"
    transcript(projects / "-w-a" / f"{SID}.jsonl", ("alpha", 3))
    assert sync(tmp_path, kind="claude-code")[0] == 0
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 1), ("pear", 3))
    status, _, said = sync(tmp_path, kind="claude-code")
    assert status == 3
    assert f"stored as '{ASIDE}'" in said
    assert shown(tmp_path, SID) == (None, requests("alpha", 3))
    assert shown(tmp_path, ASIDE) == (None, ["alpha 0", *requests("pear", 3)])


def test_the_file_a_copy_took_the_id_from_written_on_continues_it(tmp_path: Path) -> None:
    """Both files new to the store, the one resumed in another project folder listed first
    (it takes the id: the other holds nothing new, left out). The person goes back to the
    first folder and writes on there: that file was kept aside whole (its 3 shared messages
    twice) and named at each sync (exit 3). Now it continues the session from where they
    parted, holding its own message; exit 0, and again 0 with nothing more."""
    projects = tmp_path / ".claude" / "projects"
    transcript(projects / "-w-a" / f"{SID}.jsonl", ("alpha", 3), ("moved", 1))
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 3))
    assert sync(tmp_path, kind="claude-code")[:3:2] == (0, "")
    transcript(projects / "-w-b" / f"{SID}.jsonl", ("alpha", 3), ("stayed", 1))
    status, report, said = sync(tmp_path, kind="claude-code")
    assert (status, said) == (0, "")
    assert shown(tmp_path, SID) == (None, [*requests("alpha", 3), "moved 0"])
    assert shown(tmp_path, ASIDE) == (SID, ["stayed 0"])
    assert report["left_out"] == {"message copied from another file (stored there)": 3}
    assert sync(tmp_path, kind="claude-code")[:3:2] == (0, "")


def test_continued_is_told_how_a_read_message_matches_a_stored_one() -> None:
    """``continued`` compared messages by role, time and text unless told otherwise, a
    default only its example used: the sync compares as its claims do (a text redacted
    in the store still the same message), and a caller left to the default would keep a
    copy of a redacted session aside whole, its shared messages stored twice. It must be
    told."""
    copy = Conversation(Session(id="s@b"), (Message(session_id="s@b", position=0,
                                                     role="user", content="a"),))
    with pytest.raises(TypeError, match="same"):
        continued(copy, {}, "s")  # type: ignore[call-arg]
