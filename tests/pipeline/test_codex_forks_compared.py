"""A Codex fork's copy of its parent is compared with what the store holds of the parent
(role, text and order: Codex stamps each line it copies as it writes it): the same, it is
left out; holding messages the store lacks, they open the fork; holding others, the fork is
stored whole and named once no file holds the parent. Run as ``harkback sync`` commands on
a SQLite file in an empty home; the store, read back through ``show``, is the judge."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.pipeline.test_copied_sessions_carry_on import shown
from tests.pipeline.test_shared_session_ids import sync
from tests.pipeline.test_transcript_replays import _context, _meta, _said

PARENT = "0199c200-0000-7000-8000-00000000aaaa"
FORK = "0199c200-0000-7000-8000-00000000bbbb"
FORK_OF_FORK = "0199c200-0000-7000-8000-00000000cccc"
KEPT = "message copied from an earlier session (not stored there: kept)"
STORED = "message copied from an earlier session (stored there)"


def said(hour: int, texts: list[str]) -> list[dict[str, Any]]:
    """``texts`` said in turn by the user and Codex, a minute apart from ``hour``:00."""
    return [_said(f"2026-03-05T{hour:02d}:{n + 1:02d}:00.000Z",
                  "user" if n % 2 == 0 else "assistant", text) for n, text in enumerate(texts)]


def session(sid: str, texts: list[str]) -> list[dict[str, Any]]:
    """A rollout of ``sid`` (no fork) saying ``texts``, started at 09:00."""
    return [_meta(sid, "2026-03-05T09:00:00.000Z"), *_context("2026-03-05T09:00:00.010Z"),
            *said(9, texts)]


def forked(sid: str, parent: str, copied: list[dict[str, Any]], hour: int,
           texts: list[str]) -> list[dict[str, Any]]:
    """``codex fork`` of ``parent`` at ``hour``:00: its meta line, ``copied`` (the parent's
    rollout) stamped as Codex writes the copy, its own instructions, then ``texts``."""
    start = f"2026-03-05T{hour:02d}:00:00"
    copy = [{**line, "timestamp": f"{start}.{n + 1:03d}Z"} for n, line in enumerate(copied)]
    return [_meta(sid, f"{start}.000Z", forked_from_id=parent), *copy,
            *_context(f"{start}.500Z"), *said(hour, texts)]


def write(home: Path, sid: str, lines: list[dict[str, Any]]) -> Path:
    path = (home / ".codex" / "sessions" / "2026" / "03" / "05"
            / f"rollout-2026-03-05T09-00-00-{sid}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def copies(home: Path, text: str) -> int:
    with sqlite3.connect(home / "h.db") as connection:
        return int(connection.execute("SELECT count(*) FROM messages WHERE content LIKE ?",
                                      (f"{text}%",)).fetchone()[0])


EARLY = ["continue the gateway refactor", "Moved the routes into routes.yaml.",
         "continue the gateway refactor", "Split proxy.py into proxy/ and retry.py."]
OWN = ["now make the retry budget configurable per route", "Added retry_budget per route."]


def test_a_fork_copying_messages_the_store_lacks_keeps_them(tmp_path: Path) -> None:
    """The parent stored when it held 2 of its 4 messages, its rollout deleted since: the
    fork's copy holds all 4, and its last 2 were left out unseen, lost (exit 0, nothing
    said). Now they open the fork, still its continuation, in their order (the request
    repeated is kept: it is another message than the stored one, though its text is the
    same); exit 0."""
    path = write(tmp_path, PARENT, session(PARENT, EARLY[:2]))
    assert sync(tmp_path)[0] == 0
    path.unlink()
    write(tmp_path, FORK, forked(FORK, PARENT, session(PARENT, EARLY), 11, OWN))
    status, report, stderr = sync(tmp_path)
    assert (status, stderr) == (0, "")
    assert shown(tmp_path, FORK) == (PARENT, [*EARLY[2:], *OWN])
    assert shown(tmp_path, PARENT) == (None, EARLY[:2])
    assert report["left_out"][STORED] == 2 and report["left_out"][KEPT] == 2
    again = sync(tmp_path)[1]["sessions"]
    assert (again["new"], again["updated"]) == (0, 0)
    assert shown(tmp_path, FORK) == (PARENT, [*EARLY[2:], *OWN])


def test_a_fork_copying_other_messages_than_the_store_is_stored_whole(tmp_path: Path) -> None:
    """The parent stored, its rollout deleted since; the fork's copy says another thing in
    its first reply: left out unseen, that reply was lost (exit 0). Now the fork is stored
    whole, as read, and named (exit 3); the parent is as it was."""
    path = write(tmp_path, PARENT, session(PARENT, EARLY))
    assert sync(tmp_path)[0] == 0
    path.unlink()
    other = [EARLY[0], "Rewrote the gateway in Go.", *EARLY[2:]]
    write(tmp_path, FORK, forked(FORK, PARENT, session(PARENT, other), 11, OWN))
    status, _, stderr = sync(tmp_path)
    assert status == 3
    assert "copied lines differ" in stderr
    assert shown(tmp_path, FORK) == (None, [*other, *OWN])
    assert shown(tmp_path, PARENT) == (None, EARLY)
    assert sync(tmp_path)[0] == 0


def test_a_fork_of_a_parent_whose_rollout_is_there_takes_that_rollout_s_word(
        tmp_path: Path) -> None:
    """The parent's rollout still in the folder, its first reply stored as an older harkback
    read it (other text): the fork's copy differs from the store only, so it stays left out,
    the fork its continuation holding its own messages; exit 0."""
    write(tmp_path, PARENT, session(PARENT, EARLY))
    assert sync(tmp_path)[0] == 0
    with sqlite3.connect(tmp_path / "h.db") as connection:
        connection.execute("UPDATE messages SET content = 'as an older harkback read it' "
                           "WHERE session_id = ? AND position = 1", (PARENT,))
    write(tmp_path, FORK, forked(FORK, PARENT, session(PARENT, EARLY), 11, OWN))
    status, _, stderr = sync(tmp_path)
    assert (status, stderr) == (0, "")
    assert shown(tmp_path, FORK) == (PARENT, OWN)


def test_a_fork_of_a_fork_stores_every_message_once(tmp_path: Path) -> None:
    """A fork of a fork copies the first fork's rollout, which holds its copy of the parent:
    compared with the first fork alone (stored as a continuation, its own messages) that
    copy differs. Each session holds its own messages, once, whichever is read first, and
    with the parents' rollouts deleted since the fork of a fork goes on: exit 0 throughout,
    nothing named, nothing stored twice."""
    fork = forked(FORK, PARENT, session(PARENT, EARLY), 11, OWN)
    again = ["and log each retry", "Logged at debug level."]
    deeper = forked(FORK_OF_FORK, FORK, fork, 12, again)
    for order in ((PARENT, FORK, FORK_OF_FORK), (FORK_OF_FORK, FORK, PARENT)):
        home = tmp_path / order[0]
        files = {PARENT: session(PARENT, EARLY), FORK: fork, FORK_OF_FORK: deeper}
        written = {}
        for sid in order:
            written[sid] = write(home, sid, files[sid])
            assert sync(home)[::2] == (0, "")
        assert shown(home, PARENT) == (None, EARLY)
        assert shown(home, FORK) == (PARENT, OWN)
        assert shown(home, FORK_OF_FORK) == (FORK, again)
        assert copies(home, EARLY[1]) == copies(home, OWN[1]) == 1
        written[PARENT].unlink()
        written[FORK].unlink()
        write(home, FORK_OF_FORK, [*deeper, *said(13, ["thanks"])])
        assert sync(home)[::2] == (0, "")
        assert shown(home, FORK_OF_FORK) == (FORK, [*again, "thanks"])


def test_a_fork_of_a_fork_whose_parent_went_on_stores_every_message_once(
        tmp_path: Path) -> None:
    """The parent went on after the first fork (a fork is made from a session in use): the
    fork of the fork copies the parent as it was then, then the first fork's own messages.
    Compared with the parent's stored messages and the first fork's one after the other,
    that copy read as other messages once no rollout held the parent: the fork of the fork
    was stored whole (the parent's 4 messages and the first fork's 2 twice) and named,
    exit 3. Now each is stored once, exit 0, and a sync after it changes nothing."""
    fork = forked(FORK, PARENT, session(PARENT, EARLY), 11, OWN)
    later = ["also add a health check", "Added /healthz."]
    again = ["and log each retry", "Logged at debug level."]
    deeper = forked(FORK_OF_FORK, FORK, fork, 12, again)
    parent = write(tmp_path, PARENT, [*session(PARENT, EARLY), *said(10, later)])
    first = write(tmp_path, FORK, fork)
    write(tmp_path, FORK_OF_FORK, deeper)
    assert sync(tmp_path)[::2] == (0, "")
    parent.unlink()
    first.unlink()
    write(tmp_path, FORK_OF_FORK, [*deeper, *said(13, ["thanks"])])
    assert sync(tmp_path)[::2] == (0, "")
    assert shown(tmp_path, PARENT) == (None, [*EARLY, *later])
    assert shown(tmp_path, FORK) == (PARENT, OWN)
    assert shown(tmp_path, FORK_OF_FORK) == (FORK, [*again, "thanks"])
    assert copies(tmp_path, EARLY[1]) == copies(tmp_path, OWN[1]) == 1
    status, report, _ = sync(tmp_path)
    assert (status, report["sessions"]["new"], report["sessions"]["updated"]) == (0, 0, 0)


def test_a_fork_of_a_fork_that_kept_what_the_store_lacked_stores_every_message_once(
        tmp_path: Path) -> None:
    """The first fork holds 2 messages of the parent the store lacked (kept at its start),
    then its own, the project line under its own first request: compared with it, the
    fork of the fork's copy (no project line there) read as other messages, so it was
    stored whole (9 messages, 6 of them twice) and named, exit 3, from its first sync on,
    both rollouts it copies still in the folder. Now exit 0; each message once."""
    parent = write(tmp_path, PARENT, session(PARENT, EARLY[:2]))
    assert sync(tmp_path)[0] == 0
    parent.unlink()
    fork = forked(FORK, PARENT, session(PARENT, EARLY), 11, OWN)
    first = write(tmp_path, FORK, fork)
    assert sync(tmp_path)[::2] == (0, "")
    again = ["and log each retry", "Logged at debug level."]
    deeper = forked(FORK_OF_FORK, FORK, fork, 12, again)
    write(tmp_path, FORK_OF_FORK, deeper)
    assert sync(tmp_path)[::2] == (0, "")
    first.unlink()
    write(tmp_path, FORK_OF_FORK, [*deeper, *said(13, ["thanks"])])
    assert sync(tmp_path)[::2] == (0, "")
    assert shown(tmp_path, FORK) == (PARENT, [*EARLY[2:], *OWN])
    assert shown(tmp_path, FORK_OF_FORK) == (FORK, [*again, "thanks"])
    assert copies(tmp_path, EARLY[3]) == copies(tmp_path, OWN[0]) == 1
    status, report, _ = sync(tmp_path)
    assert (status, report["sessions"]["new"], report["sessions"]["updated"]) == (0, 0, 0)
