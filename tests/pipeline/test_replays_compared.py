"""A Claude Code resume's copy of the earlier session is compared with what the store holds
of it: left out when the same, and never lost when not. Run as ``harkback sync`` commands
on a SQLite file in an empty home; the store, read back through ``show``, is the judge."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.pipeline.test_copied_sessions_carry_on import shown
from tests.pipeline.test_shared_session_ids import sync
from tests.pipeline.test_transcript_replays import (
    EARLY,
    LATER,
    PARENT,
    PROJECT,
    RESUMED,
    _line,
    _parent_lines,
)


def write(home: Path, session: str, lines: list[dict[str, Any]]) -> Path:
    """A Claude Code transcript of ``session`` in ``home``'s projects folder."""
    path = home / ".claude" / "projects" / PROJECT / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def resumed(copied: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``claude --resume PARENT`` (a version that starts a new file) having copied
    ``copied``, then one request of its own."""
    return [{"type": "summary", "summary": "Checkout total rounding drift", "leafUuid": "a2"},
            *copied, _line("user", "u3", "a2", RESUMED, "2026-03-03T10:00:00.000Z", LATER)]


def test_a_resume_copying_other_messages_than_the_store_keeps_them(tmp_path: Path) -> None:
    """The earlier session stored, its file deleted since (Claude Code removes old ones);
    the resume's copy says another thing in its first reply: those lines were left out
    unseen, the other reply lost and the sync said nothing (exit 0). Now the resumed
    session is stored whole, as read, and named (exit 3); the earlier session is as it
    was."""
    path = write(tmp_path, PARENT, _parent_lines())
    assert sync(tmp_path, kind="claude-code")[0] == 0
    path.unlink()
    before = shown(tmp_path, PARENT)
    copied = _parent_lines()
    copied[1] = _line("assistant", "a1", "u1", PARENT, "2026-03-02T09:00:09.000Z",
                      "Round the discount with banker's rounding instead.")
    write(tmp_path, RESUMED, resumed(copied))
    status, _, said = sync(tmp_path, kind="claude-code")
    assert status == 3
    assert "copied lines differ" in said
    assert shown(tmp_path, PARENT) == before
    parent, texts = shown(tmp_path, RESUMED)
    assert parent is None
    assert texts == [EARLY, "Round the discount with banker's rounding instead.",
                     *before[1][2:], LATER]
    assert sync(tmp_path, kind="claude-code")[0] == 0


def test_a_resume_copying_messages_the_store_lacks_keeps_them(tmp_path: Path) -> None:
    """The earlier session stored when it held 2 of its 4 messages, its file deleted since
    (Claude Code removes old ones): the resume's copy holds all 4, and its last 2 were left
    out unseen, lost. Now they open the resumed session, still its continuation; exit 0."""
    path = write(tmp_path, PARENT, _parent_lines()[:2])
    assert sync(tmp_path, kind="claude-code")[0] == 0
    path.unlink()
    write(tmp_path, RESUMED, resumed(_parent_lines()))
    status, _, said = sync(tmp_path, kind="claude-code")
    assert (status, said) == (0, "")
    earlier = [line["message"]["content"] for line in _parent_lines()[2:]]
    texts = [e if isinstance(e, str) else e[0]["text"] for e in earlier]
    assert shown(tmp_path, RESUMED) == (PARENT, [*texts, LATER])
    assert len(shown(tmp_path, PARENT)[1]) == 2


COPIED_LINES = "line copied from an earlier session (stored there)"
EARLIER = "ffffffff-0000-4000-8000-0000000000a1"
"""A session listed after its resume (its file sorts after :data:`LATE_RESUME`'s)."""
LATE_RESUME = "00000000-0000-4000-8000-0000000000b2"


def earlier_lines(count: int) -> list[dict[str, Any]]:
    """The first ``count`` lines of :data:`EARLIER`'s file, a request and a reply each."""
    return [_line("user" if n % 2 == 0 else "assistant", f"e{n}", f"e{n - 1}" if n else None,
                  EARLIER, f"2026-03-02T09:0{n}:00.000Z", f"earlier message {n}")
            for n in range(count)]


def test_a_resume_read_before_the_grown_file_it_copies_stores_nothing_twice(
        tmp_path: Path) -> None:
    """The earlier session stored with 2 messages, then written on (4) and resumed into a
    new file, both before the next sync, the resume listed 100 files before it (another
    batch): its copy's last 2 messages, which the store lacked when it was read, were kept
    at its start, and the earlier file's then stored them too (twice). Now they are stored
    once, with the session they belong to."""
    write(tmp_path, EARLIER, earlier_lines(2))
    assert sync(tmp_path, kind="claude-code")[0] == 0
    for n in range(100):  # sorted between the resume and the file it copies
        sid = f"1{n:07d}-0000-4000-8000-000000000000"
        write(tmp_path, sid, [_line("user", f"f{n}", None, sid, "2026-03-01T08:00:00.000Z",
                                    f"filler {n}")])
    write(tmp_path, EARLIER, earlier_lines(4))
    write(tmp_path, LATE_RESUME, [*earlier_lines(4), _line(
        "user", "r0", "e3", LATE_RESUME, "2026-03-03T10:00:00.000Z", LATER)])
    status, report, said = sync(tmp_path, kind="claude-code")
    assert (status, said) == (0, "")
    assert shown(tmp_path, EARLIER) == (None, [f"earlier message {n}" for n in range(4)])
    assert shown(tmp_path, LATE_RESUME) == (EARLIER, [LATER])
    assert report["left_out"] == {COPIED_LINES: 4}
    assert sync(tmp_path, kind="claude-code")[1]["sessions"]["new"] == 0
    assert shown(tmp_path, LATE_RESUME) == (EARLIER, [LATER])


def test_what_became_of_copied_lines_is_counted_once(tmp_path: Path) -> None:
    """The counts said every copied line was left out as stored there, also those stored
    (the copy differing: stored whole) or kept (the store lacking them): 4 lines counted
    left out beside 2 kept. Now what is compared is counted as it ended: none left out for
    a copy stored whole; 2 messages stored there and 2 kept."""
    write(tmp_path, EARLIER, earlier_lines(4))
    assert sync(tmp_path, kind="claude-code")[0] == 0
    write(tmp_path, EARLIER, []).unlink()  # its file gone: the copy is all there is
    differing = earlier_lines(4)
    differing[1] = _line("assistant", "e1", "e0", EARLIER, "2026-03-02T09:01:00.000Z",
                         "another reply")
    write(tmp_path, LATE_RESUME, [*differing, _line(
        "user", "r0", "e3", LATE_RESUME, "2026-03-03T10:00:00.000Z", LATER)])
    status, report, _ = sync(tmp_path, kind="claude-code")
    assert status == 3
    assert COPIED_LINES not in report["left_out"]
    assert shown(tmp_path, LATE_RESUME)[1][1] == "another reply"

    home = tmp_path / "lacking"
    path = write(home, EARLIER, earlier_lines(2))
    assert sync(home, kind="claude-code")[0] == 0
    path.unlink()
    write(home, LATE_RESUME, [*earlier_lines(4), _line(
        "user", "r0", "e3", LATE_RESUME, "2026-03-03T10:00:00.000Z", LATER)])
    status, report, _ = sync(home, kind="claude-code")
    assert status == 0
    assert report["left_out"] == {
        "message copied from an earlier session (stored there)": 2,
        "message copied from an earlier session (not stored there: kept)": 2}
    assert shown(home, LATE_RESUME) == (
        EARLIER, ["earlier message 2", "earlier message 3", LATER])


def test_a_resume_copied_into_another_project_folder_leaves_the_first_whole(
        tmp_path: Path) -> None:
    """A resume's file (1 request of its own) copied into a second project folder and resumed
    there (3), both new: the second file's copy was compared as if it were the first's, and
    the session was stored as ``[own 0, own 1, own 0]`` (a message of the other file, one
    twice), the second kept aside whole and named (exit 3). Now the file holding all the
    other's messages and more takes the id, as for any two new copies: its 3, once; exit 0."""
    write(tmp_path, EARLIER, earlier_lines(4))
    assert sync(tmp_path, kind="claude-code")[0] == 0
    own = [_line("user" if n % 2 == 0 else "assistant", f"r{n}", f"r{n - 1}" if n else "e3",
                 LATE_RESUME, f"2026-03-03T10:00:0{n}.000Z", f"own {n}") for n in range(3)]
    write(tmp_path, LATE_RESUME, [*earlier_lines(4), own[0]])
    copy = tmp_path / ".claude" / "projects" / "-w-zz" / f"{LATE_RESUME}.jsonl"
    copy.parent.mkdir(parents=True)
    copy.write_text("".join(json.dumps(line) + "\n" for line in [*earlier_lines(4), *own]),
                    encoding="utf-8")
    status, report, said = sync(tmp_path, kind="claude-code")
    assert shown(tmp_path, LATE_RESUME) == (EARLIER, ["own 0", "own 1", "own 2"])
    assert (status, said) == (0, "")
    assert report["left_out"]["session copied from another file (stored there)"] == 1
    assert sync(tmp_path, kind="claude-code")[:3:2] == (0, "")
    assert shown(tmp_path, EARLIER)[1] == [f"earlier message {n}" for n in range(4)]


def test_a_resume_of_a_session_whose_file_is_there_takes_that_file_s_word(
        tmp_path: Path) -> None:
    """The earlier session's file still in the folder, its first reply stored as an older
    harkback read it (other text than the file's, as slash commands once were): the
    resume's copy differs from the store only, so it stays left out, the resumed session
    its continuation holding its own message; exit 0 and nothing stored twice (comparing
    it stored the copy whole again and named it at every change of the file)."""
    write(tmp_path, PARENT, _parent_lines())
    assert sync(tmp_path, kind="claude-code")[0] == 0
    with sqlite3.connect(tmp_path / "h.db") as connection:
        connection.execute("UPDATE messages SET content = 'as an older harkback read it' "
                           "WHERE session_id = ? AND position = 1", (PARENT,))
    before = shown(tmp_path, PARENT)
    write(tmp_path, RESUMED, [*_parent_lines(), _line(
        "user", "u3", "a2", RESUMED, "2026-03-03T10:00:00.000Z", LATER)])
    status, _, said = sync(tmp_path, kind="claude-code")
    assert (status, said) == (0, "")
    assert shown(tmp_path, RESUMED) == (PARENT, [LATER])
    assert shown(tmp_path, PARENT) == before


AGAIN = "5e5e5e5e-0000-4000-8000-000000000003"
"""A resume of :data:`RESUMED` (its file sorts between :data:`PARENT`'s and RESUMED's)."""


def test_a_resume_of_a_resume_stores_every_message_once(tmp_path: Path) -> None:
    """``PARENT`` resumed (``RESUMED``), then that resumed again (``AGAIN``): its file copies
    both sessions' lines. Compared with what the store holds of them, the copy of
    ``RESUMED`` (a continuation, its project line under its first request) was taken for
    other messages: ``AGAIN`` was stored whole (``PARENT``'s 4 and ``RESUMED``'s 2 messages
    twice) and named, exit 3, at the first sync and at every change once the earlier files
    were deleted. Now each session holds its own messages, once; exit 0."""
    own = [_line("user", "u3", "a2", RESUMED, "2026-03-03T10:00:00.000Z", LATER),
           _line("assistant", "a3", "u3", RESUMED, "2026-03-03T10:00:30.000Z", "added it")]
    third = _line("user", "u4", "a3", AGAIN, "2026-03-04T10:00:00.000Z", "third request")
    earlier = [write(tmp_path, PARENT, _parent_lines()),
               write(tmp_path, RESUMED, [*_parent_lines(), *own])]
    write(tmp_path, AGAIN, [*_parent_lines(), *own, third])
    assert sync(tmp_path, kind="claude-code")[::2] == (0, "")
    assert shown(tmp_path, RESUMED) == (PARENT, [LATER, "added it"])
    assert shown(tmp_path, AGAIN) == (RESUMED, ["third request"])
    for path in earlier:
        path.unlink()
    write(tmp_path, AGAIN, [*_parent_lines(), *own, third, _line(
        "assistant", "a4", "u4", AGAIN, "2026-03-04T10:00:30.000Z", "third reply")])
    assert sync(tmp_path, kind="claude-code")[::2] == (0, "")
    assert shown(tmp_path, AGAIN) == (RESUMED, ["third request", "third reply"])
    assert len(shown(tmp_path, PARENT)[1]) == 4


def test_a_resume_of_a_resume_that_kept_what_the_store_lacked_stores_every_message_once(
        tmp_path: Path) -> None:
    """``RESUMED`` holds 2 messages of ``PARENT`` the store lacked (kept at its start), then
    its own, the project line under its own first request: compared with it, ``AGAIN``'s
    copy (no project line there) read as other messages, so ``AGAIN`` was stored whole
    (7 messages, 6 of them twice) and named, exit 3. Now exit 0; each message once."""
    path = write(tmp_path, PARENT, _parent_lines()[:2])
    assert sync(tmp_path, kind="claude-code")[0] == 0
    path.unlink()
    own = [_line("user", "u3", "a2", RESUMED, "2026-03-03T10:00:00.000Z", LATER),
           _line("assistant", "a3", "u3", RESUMED, "2026-03-03T10:00:30.000Z", "added it")]
    write(tmp_path, RESUMED, [*_parent_lines(), *own])
    assert sync(tmp_path, kind="claude-code")[::2] == (0, "")
    third = _line("user", "u4", "a3", AGAIN, "2026-03-04T10:00:00.000Z", "third request")
    write(tmp_path, AGAIN, [*_parent_lines(), *own, third])
    assert sync(tmp_path, kind="claude-code")[::2] == (0, "")
    assert shown(tmp_path, RESUMED)[1][2:] == [LATER, "added it"]
    assert shown(tmp_path, AGAIN) == (RESUMED, ["third request"])
    with sqlite3.connect(tmp_path / "h.db") as connection:
        assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 7
