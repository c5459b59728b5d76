"""A resumed or forked Claude Code session, whose file first copies the earlier session's
lines, is stored once: the new file as a continuation holding only its own messages.

The files are written the way Claude Code writes them: a resume in versions that start a
new file (1.0.x) begins with a ``summary`` line naming the earlier session's last message,
then copies its lines verbatim (their ``sessionId``, ``uuid`` and times kept), then goes on
under the new ``sessionId``; a fork (``--fork-session``, ``/branch``, 2.1.x) rewrites each
copied line's ``sessionId`` and adds ``forkedFrom: {sessionId, messageUuid}``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from harkback.adapters.sources.claude_code import CLAUDE_CODE
from harkback.adapters.sources.transcripts import TranscriptImporter
from harkback.adapters.stores.import_ledger import SqliteImportLedger
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.importing import ImportOutcome, run_import

PARENT = "3a1f0c2e-8b7d-4e6f-9a5b-1c2d3e4f5a6b"
RESUMED = "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
FORKED = "c0ffee00-1111-4222-8333-444455556666"
PROJECT = "-home-mei-code-shop"
CWD = "/home/mei/code/shop"
EARLY = "why does the checkout total drift by one cent"
LATER = "add a regression test for the refund rounding"
BRANCH = "try banker's rounding in the invoice export"


def _line(kind: str, uuid: str, parent: str | None, session: str, when: str, text: str,
          version: str = "1.0.61") -> dict[str, Any]:
    """One ``user`` or ``assistant`` line as Claude Code writes it."""
    message: dict[str, Any] = {"role": "user", "content": text} if kind == "user" else {
        "id": f"msg_{uuid}", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-5-20250929", "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 12, "output_tokens": 30}}
    line = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": CWD,
            "sessionId": session, "version": version, "gitBranch": "main", "type": kind,
            "message": message, "uuid": uuid, "timestamp": when}
    if kind == "assistant":
        line["requestId"] = f"req_{uuid}"
    return line


def _parent_lines() -> list[dict[str, Any]]:
    return [
        _line("user", "u1", None, PARENT, "2026-03-02T09:00:00.000Z", EARLY),
        _line("assistant", "a1", "u1", PARENT, "2026-03-02T09:00:09.000Z",
              "The discount is applied to a float; round with Decimal at each line item."),
        _line("user", "u2", "a1", PARENT, "2026-03-02T09:03:00.000Z",
              "switch the cart totals to Decimal then"),
        _line("assistant", "a2", "u2", PARENT, "2026-03-02T09:03:40.000Z",
              "Done: cart.py now sums Decimal amounts quantized to cents."),
    ]


def _resumed_lines() -> list[dict[str, Any]]:
    """``claude --resume PARENT`` in a version that starts a new file."""
    return [
        {"type": "summary", "summary": "Checkout total rounding drift", "leafUuid": "a2"},
        *_parent_lines(),
        _line("user", "u3", "a2", RESUMED, "2026-03-03T10:00:00.000Z", LATER),
        _line("assistant", "a3", "u3", RESUMED, "2026-03-03T10:00:30.000Z",
              "Added test_refund_rounding covering a 3-item refund."),
    ]


def _forked_lines() -> list[dict[str, Any]]:
    """``claude --resume PARENT --fork-session`` (2.1): copies re-stamped with forkedFrom."""
    copies = [{**line, "sessionId": FORKED, "version": "2.1.123",
               "forkedFrom": {"sessionId": PARENT, "messageUuid": line["uuid"]}}
              for line in _parent_lines()]
    return [*copies,
            _line("user", "f1", "a2", FORKED, "2026-03-04T08:00:00.000Z", BRANCH, "2.1.123"),
            _line("assistant", "f2", "f1", FORKED, "2026-03-04T08:00:20.000Z",
                  "invoice_export.py now rounds half to even.", "2.1.123")]


def _write(folder: Path, session: str, lines: list[dict[str, Any]]) -> Path:
    path = folder / PROJECT / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


async def _import(folder: Path, db: Path) -> ImportOutcome:
    with SqliteStore.open(db).unwrap() as store:
        return await run_import(TranscriptImporter(CLAUDE_CODE, folder), store,
                                SqliteImportLedger(store), progress=False)


async def _found(db: Path, query: str) -> list[str]:
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        payload = (await Harkback(store=store).search(query)).to_payload()
    assert payload["success"], payload
    return [r["session_id"] for r in payload["results"]]


def _stored(db: Path) -> list[tuple[Any, ...]]:
    """Every stored session with its parent, and every message's text, in order."""
    with sqlite3.connect(db) as conn:
        sessions = conn.execute("SELECT id, parent_session_id, title FROM sessions "
                                "ORDER BY id").fetchall()
        messages = conn.execute("SELECT session_id, position, content FROM messages "
                                "ORDER BY session_id, position").fetchall()
    return [*sessions, *messages]


def _copies(db: Path, text: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT count(*) FROM messages WHERE content LIKE ?",
                                (f"{text}%",)).fetchone()[0])


async def test_a_resume_and_a_fork_are_continuations_holding_their_own_messages(
        tmp_path: Path) -> None:
    """The shared early part is stored once and found once; a phrase only in the resumed
    or forked part recalls the conversation the user remembers; either id reads back."""
    folder, db = tmp_path / "projects", tmp_path / "h.db"
    _write(folder, PARENT, _parent_lines())
    _write(folder, RESUMED, _resumed_lines())
    _write(folder, FORKED, _forked_lines())
    await _import(folder, db)
    assert _copies(db, EARLY) == 1
    assert await _found(db, "checkout total drift cent") == [PARENT]
    assert await _found(db, "regression test refund rounding") == [PARENT]
    assert await _found(db, "banker's rounding invoice export") == [PARENT]
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        page = (await Harkback(store=store).read_session(RESUMED)).unwrap().to_payload()
        whole = (await Harkback(store=store).read_session(PARENT)).unwrap().to_payload()
    assert [m["content"].split("\n")[0] for m in page["messages"]] == [
        LATER, "Added test_refund_rounding covering a 3-item refund."]
    assert page["lineage"]["parent"]["session_id"] == PARENT
    assert {c["session_id"] for c in whole["lineage"]["children"]} == {RESUMED, FORKED}


async def test_either_order_of_files_and_syncs_gives_the_same_store(tmp_path: Path) -> None:
    """The continuation imported before its source (a sync apart) ends as it does when both
    come at once; a sync of unchanged files then reads and changes nothing."""
    together, apart = tmp_path / "together", tmp_path / "apart"
    _write(together, PARENT, _parent_lines())
    _write(together, RESUMED, _resumed_lines())
    await _import(together, tmp_path / "together.db")
    _write(apart, RESUMED, _resumed_lines())
    first = await _import(apart, tmp_path / "apart.db")
    assert _copies(tmp_path / "apart.db", EARLY) == 1  # its source not there yet: kept
    assert first.delta.messages_added == 6
    _write(apart, PARENT, _parent_lines())
    await _import(apart, tmp_path / "apart.db")
    assert _stored(tmp_path / "apart.db") == _stored(tmp_path / "together.db")
    assert _copies(tmp_path / "apart.db", EARLY) == 1
    again = await _import(apart, tmp_path / "apart.db")
    assert (again.delta.sessions_added, again.delta.sessions_updated,
            again.delta.messages_added, again.delta.sessions_unchanged) == (0, 0, 0, 2)


async def test_a_continuation_takes_its_copied_part_back_when_its_source_is_removed(
        tmp_path: Path) -> None:
    """Once the source's sessions leave the store (its file deleted, a sync removing it),
    the continuation is read again and keeps the copied part: nothing is lost."""
    folder, db = tmp_path / "projects", tmp_path / "h.db"
    parent = _write(folder, PARENT, _parent_lines())
    _write(folder, RESUMED, _resumed_lines())
    outcome = await _import(folder, db)
    assert _copies(db, EARLY) == 1 and not outcome.gone
    parent.unlink()
    with SqliteStore.open(db).unwrap() as store:
        ledger = SqliteImportLedger(store)
        key = TranscriptImporter(CLAUDE_CODE, folder).key
        remover = store.session_remover()
        assert remover is not None
        (await remover.remove_sessions([PARENT]).awaitable()).unwrap()
        (await ledger.forget(key, (f"{PROJECT}/{PARENT}.jsonl",)).awaitable()).unwrap()
    await _import(folder, db)
    assert await _found(db, "checkout total drift cent") == [RESUMED]
    assert _copies(db, EARLY) == 1

