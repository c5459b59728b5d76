"""A resumed or forked Claude Code session, and a forked Codex thread, whose file first
copies the earlier session's lines, is stored once: the new file as a continuation holding
only its own messages.

The files are written the way Claude Code writes them: a resume in versions that start a
new file (1.0.x) begins with a ``summary`` line naming the earlier session's last message,
then copies its lines verbatim (their ``sessionId``, ``uuid`` and times kept), then goes on
under the new ``sessionId``; a fork (``--fork-session``, ``/branch``, 2.1.x) rewrites each
copied line's ``sessionId`` and adds ``forkedFrom: {sessionId, messageUuid}``. A Codex
fork writes its meta line (``forked_from_id``), then the parent's rollout (its meta line
first), then its own instructions, then its turns.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

from harkback.adapters.sources.claude_code import CLAUDE_CODE
from harkback.adapters.sources.codex import CODEX
from harkback.adapters.sources.transcripts import TranscriptImporter
from harkback.adapters.stores.import_ledger import SqliteImportLedger
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.importing import ImportOutcome, run_import
from harkback.pipeline.sync import sync_one

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



async def test_a_source_file_that_cannot_be_read_leaves_no_copy_out_for_good(
        tmp_path: Path) -> None:
    """The earlier session's file is listed but cannot be read (a link to an unmounted
    disk): the resumed session must not leave out lines no store holds. It used to count
    the file's name as a stored session, and every sync after left the copy out again."""
    folder, db = tmp_path / "projects", tmp_path / "h.db"
    parent = _write(folder, PARENT, _parent_lines())
    _write(folder, RESUMED, _resumed_lines())
    parent.unlink()
    parent.symlink_to(tmp_path / "unmounted" / "p.jsonl")
    await _import(folder, db)
    await _import(folder, db)
    assert _copies(db, EARLY) == 1
    assert await _found(db, "checkout total drift cent") == [RESUMED]


def test_sync_prune_of_a_source_gives_its_continuation_the_copy_back_at_once(
        tmp_path: Path) -> None:
    """``sync --prune`` removes a deleted earlier session whose lines a resumed session left
    out: the same sync reads the resumed file again, so the early part is never missing
    (it was until the resumed file next changed; for good if Claude Code deleted it)."""
    folder, db = tmp_path / "projects", tmp_path / "h.db"
    parent = _write(folder, PARENT, _parent_lines())
    _write(folder, RESUMED, _resumed_lines())
    importer = TranscriptImporter(CLAUDE_CODE, folder)
    with SqliteStore.open(db).unwrap() as store:
        asyncio.run(sync_one(importer, store, SqliteImportLedger(store), progress=False))
    parent.unlink()
    with SqliteStore.open(db).unwrap() as store:
        report = asyncio.run(sync_one(importer, store, SqliteImportLedger(store),
                                      progress=False, prune=True))
    assert (report.removed, report.updated, report.status) == (1, 1, "synced")
    assert _copies(db, EARLY) == 1
    assert asyncio.run(_found(db, "checkout total drift cent")) == [RESUMED]


GATEWAY = "0199b100-0000-7000-8000-00000000aaaa"
GATEWAY_FORK = "0199b100-0000-7000-8000-00000000bbbb"
OUTAGE = "the gateway returns 502 when the upstream closes keep-alive early"
RETRIES = "now make the retry budget configurable per route"


def _rollout_line(when: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": when, "type": kind, "payload": payload}


def _said(when: str, role: str, text: str) -> dict[str, Any]:
    part = "output_text" if role == "assistant" else "input_text"
    return _rollout_line(when, "response_item", {"type": "message", "role": role,
                                                 "content": [{"type": part, "text": text}]})


def _meta(session: str, when: str, **more: Any) -> dict[str, Any]:
    return _rollout_line(when, "session_meta", {
        "id": session, "timestamp": when, "cwd": "/home/mei/code/api-gateway",
        "originator": "codex_cli_rs", "cli_version": "0.128.0", "source": "cli",
        "model_provider": "openai", "git": {"branch": "main"}, **more})


def _context(when: str) -> list[dict[str, Any]]:
    """The instructions Codex writes as a session starts (and a fork after its copy)."""
    return [_said(when, "developer", "<permissions instructions>sandbox: workspace-write"
                                     "</permissions instructions>"),
            _said(when, "user", "<environment_context>\n  <cwd>/home/mei/code/api-gateway"
                                "</cwd>\n</environment_context>")]


def _gateway_items() -> list[dict[str, Any]]:
    """The parent rollout's lines after its meta line."""
    call = {"type": "function_call", "name": "shell", "call_id": "call_1",
            "arguments": json.dumps({"command": ["rg", "keepalive", "conf/"]})}
    return [*_context("2026-03-05T09:00:00.010Z"),
            _rollout_line("2026-03-05T09:00:20.000Z", "turn_context",
                          {"cwd": "/home/mei/code/api-gateway", "model": "gpt-5.1-codex"}),
            _rollout_line("2026-03-05T09:00:20.000Z", "event_msg",
                          {"type": "user_message", "message": OUTAGE}),
            _said("2026-03-05T09:00:20.000Z", "user", OUTAGE),
            _rollout_line("2026-03-05T09:00:25.000Z", "response_item", call),
            _rollout_line("2026-03-05T09:00:26.000Z", "response_item",
                          {"type": "function_call_output", "call_id": "call_1",
                           "output": "conf/upstream.conf:4: keepalive_timeout 75s;"}),
            _said("2026-03-05T09:00:40.000Z", "assistant",
                  "Set keepalive_timeout below the upstream's 60 s idle close.")]


def _fork_lines(*, restamped: bool) -> list[dict[str, Any]]:
    """``codex fork``: its meta line, the parent's rollout copied (Codex stamps each line
    as it writes it; ``restamped=False``: as older copies kept the parent's times), its own
    instructions, then its own turn."""
    copy = [_meta(GATEWAY, "2026-03-05T09:00:00.000Z"), *_gateway_items()]
    if restamped:
        copy = [{**line, "timestamp": f"2026-03-05T11:00:00.{n + 1:03d}Z"}
                for n, line in enumerate(copy)]
    return [_meta(GATEWAY_FORK, "2026-03-05T11:00:00.000Z", forked_from_id=GATEWAY), *copy,
            *_context("2026-03-05T11:00:00.100Z"),
            _rollout_line("2026-03-05T11:00:41.000Z", "turn_context",
                          {"cwd": "/home/mei/code/api-gateway", "model": "gpt-5.1-codex"}),
            _said("2026-03-05T11:00:41.000Z", "user", RETRIES),
            _said("2026-03-05T11:01:10.000Z", "assistant",
                  "Added retry_budget to routes.yaml, read per route in proxy/retry.py.")]


def _write_rollout(folder: Path, session: str, lines: list[dict[str, Any]]) -> None:
    path = folder / "2026" / "03" / "05" / f"rollout-2026-03-05T09-00-00-{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def _import_codex(folder: Path, db: Path) -> ImportOutcome:
    with SqliteStore.open(db).unwrap() as store:
        return await run_import(TranscriptImporter(CODEX, folder), store,
                                SqliteImportLedger(store), progress=False)


async def test_a_codex_fork_is_a_continuation_holding_its_own_messages(tmp_path: Path) -> None:
    """A fork's copy of its parent is stored once (the fork imported first or after, its
    copy's lines stamped anew or not); a phrase of the fork recalls the parent."""
    for restamped in (True, False):
        together, apart = tmp_path / f"together{restamped}", tmp_path / f"apart{restamped}"
        _write_rollout(together, GATEWAY, [_meta(GATEWAY, "2026-03-05T09:00:00.000Z"),
                                           *_gateway_items()])
        _write_rollout(together, GATEWAY_FORK, _fork_lines(restamped=restamped))
        db = tmp_path / f"together{restamped}.db"
        await _import_codex(together, db)
        assert _copies(db, OUTAGE) == 1
        assert await _found(db, "502 upstream closes keep-alive") == [GATEWAY]
        assert await _found(db, "retry budget configurable per route") == [GATEWAY]
        with SqliteStore.open(db, readonly=True).unwrap() as store:
            page = (await Harkback(store=store).read_session(GATEWAY_FORK)).unwrap()
        payload = page.to_payload()
        assert [m["content"].split("\n")[0] for m in payload["messages"]] == [
            RETRIES, "Added retry_budget to routes.yaml, read per route in proxy/retry.py."]
        assert payload["lineage"]["parent"]["session_id"] == GATEWAY
        _write_rollout(apart, GATEWAY_FORK, _fork_lines(restamped=restamped))
        await _import_codex(apart, tmp_path / f"apart{restamped}.db")
        _write_rollout(apart, GATEWAY, [_meta(GATEWAY, "2026-03-05T09:00:00.000Z"),
                                        *_gateway_items()])
        await _import_codex(apart, tmp_path / f"apart{restamped}.db")
        assert _stored(tmp_path / f"apart{restamped}.db") == _stored(db)
