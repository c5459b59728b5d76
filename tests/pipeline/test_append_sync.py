"""A Claude Code transcript synced after each change (as ``sync --watch`` does) holds, after
every step, what a fresh import of the file as it is then gives: the sessions that grew are
written by their tails and their texts' redactions reused, with the same result."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline.redacting import RedactionMemo
from harkback.pipeline.sync import locate, sync
from harkback.stages.ports import RecentQuery, SessionStore
from harkback.stages.records import Conversation, Message, Session
from harkback.stages.redact.scrub import redact
from harkback.stages.tails import Tail
from tests.adapters.stores.store_contract import ok
from tests.support.new_stores import new_stores

SID = "0f0e0d0c-0000-4000-8000-000000000001"
Step = Callable[[Path], None]


def line(kind: str, uuid: str, content: Any, **fields: Any) -> str:
    """One transcript line of the session (``message.id`` and more in ``fields``)."""
    message: dict[str, Any] = {"role": kind, "content": content}
    if "id" in fields:
        message["id"] = fields.pop("id")
    return json.dumps({"type": kind, "sessionId": SID, "uuid": uuid, "cwd": "/w/app",
                       "timestamp": f"2026-03-01T10:00:{len(uuid):02d}Z", "message": message,
                       **fields})


def appended(*lines: str, end: str = "\n") -> Step:
    """A step that appends ``lines`` (the last one ended by ``end``)."""
    def step(path: Path) -> None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + end)
    return step


def rewritten(keep: int, *lines: str) -> Step:
    """A step that keeps the file's first ``keep`` lines and writes ``lines`` after them."""
    def step(path: Path) -> None:
        kept = path.read_text(encoding="utf-8").splitlines(keepends=True)[:keep]
        path.write_text("".join(kept) + "".join(f"{text}\n" for text in lines),
                        encoding="utf-8")
    return step


TOOL = {"type": "tool_use", "id": "call1", "name": "Bash", "input": {"command": "ls"}}
STEPS: tuple[Step, ...] = (
    appended(line("user", "u1", "the docker bridge is down"),
             line("assistant", "a1", [{"type": "text", "text": "checking nginx"}], id="m1")),
    # The same message.id again: Claude Code's parser merges it into the stored last reply.
    appended(line("assistant", "a2", [TOOL], id="m1")),
    appended(line("user", "u3", [{"type": "tool_result", "tool_use_id": "call1",
                                  "content": "password=hunter2 in .env"}])),
    # A summary naming a line of the session, then a title from /rename: the session row.
    appended(json.dumps({"type": "summary", "summary": "Bridge outage", "leafUuid": "u3"})),
    appended(json.dumps({"type": "custom-title", "customTitle": "kiwi bridge fix",
                         "sessionId": SID})),
    # A last line torn half-way, completed later.
    appended(line("user", "u5", "mango token=ghp_" + "a" * 36)[:40], end=""),
    appended(line("user", "u5", "mango token=ghp_" + "a" * 36)[40:]),
    # The agent rewrote the file: shorter, then its first line changed.
    rewritten(3, line("user", "u7", "quince after the rewind")),
    rewritten(0, line("user", "u0", "a new first question"), line("user", "u8", "fig")),
    # A sub-agent's line makes a sub-session; the main one grows beside it.
    appended(line("assistant", "a6", [{"type": "text", "text": "sidechain papaya"}],
                  id="m6", isSidechain=True, agentId="agent1")),
    appended(line("assistant", "a7", [{"type": "text", "text": "sidechain lime"}],
                  id="m7", isSidechain=True, agentId="agent1"),
             line("user", "u9", "back in the main session")),
)


store = new_stores("memory", "sqlite", "postgres")
"""The store synced step by step, of each kind."""


async def held(store: SessionStore) -> tuple[tuple[Session, ...], tuple[Message, ...]]:
    """Every session (sub-sessions too) and message ``store`` holds."""
    roots = await ok(store.recent(RecentQuery(limit=100)))
    ids = [o.session.id for o in roots]
    ids += [s.id for s in await ok(store.children(ids))]
    sessions = tuple(sorted(await ok(store.sessions(ids)), key=lambda s: s.id))
    return sessions, await ok(store.messages(sorted(ids)))


class Tails(MemoryStore):
    """A memory store that counts the messages each write is given."""

    def __init__(self) -> None:
        super().__init__()
        self.given: list[int] = []

    def ingest(self, conversations: Sequence[Conversation]) -> Any:
        self.given.append(sum(len(c.messages) for c in conversations))
        return super().ingest(conversations)

    def ingest_tails(self, tails: Sequence[Tail]) -> Any:
        self.given.append(sum(len(t.conversation.messages) for t in tails))
        return super().ingest_tails(tails)


def transcript(home: Path) -> Path:
    """The session's file, in a project folder of ``home``."""
    path = home / "projects" / "-w-app" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    return path


async def synced(home: Path, store: SessionStore, memo: RedactionMemo | None = None, *,
                 prune: bool = False) -> None:
    """``home``'s Claude Code projects synced into ``store`` (nothing else looked for)."""
    located = locate({"claude-code": home / "projects", "hermes": home / "none",
                      "codex": home / "none"})
    reports = await sync(located, store, progress=False, memo=memo, prune=prune)
    assert [r.status for r in reports if r.located] == ["synced"]


async def test_each_step_stores_what_a_fresh_import_of_the_file_gives(
        store: SessionStore, tmp_path: Path) -> None:
    """Replies merged by message.id, a tool result, titles, a torn line, a sidechain, a
    rewound and a rewritten file: after each, the store equals a fresh full import. Synced
    with ``--prune``: a file cut shorter is mirrored then (a plain sync keeps what was past
    the cut: tests/pipeline/test_transcript_cut.py)."""
    path = transcript(tmp_path)
    memo = RedactionMemo(smallest=1)
    for number, step in enumerate(STEPS):
        step(path)
        await synced(tmp_path, store, memo, prune=True)
        fresh = MemoryStore()
        await synced(tmp_path, fresh)
        assert await held(store) == await held(fresh), f"after step {number}"
    assert "hunter2" not in repr(await held(store))


async def test_one_appended_line_is_the_one_message_written(tmp_path: Path) -> None:
    """A session that grew by a line is written by that line, not whole."""
    path = transcript(tmp_path)
    store = Tails()
    appended(*(line("user", f"u{n}", f"question {n}") for n in range(50)))(path)
    await synced(tmp_path, store)
    appended(line("user", "u50", "one more question"))(path)
    await synced(tmp_path, store)
    assert store.given == [50, 1]


async def test_a_watch_redacts_only_the_texts_it_has_not_seen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a memo, a re-sync redacts the appended text only; the secrets of the session
    are still all replaced."""
    seen: list[str] = []

    def counting(text: str) -> Any:
        seen.append(text)
        return redact(text)
    monkeypatch.setattr("harkback.pipeline.redacting.redact", counting)
    path = transcript(tmp_path)
    appended(*(line("user", f"u{n}", f"password=hunter{n}") for n in range(20)))(path)
    store, memo = MemoryStore(), RedactionMemo(smallest=1)
    await synced(tmp_path, store, memo)
    seen.clear()
    appended(line("user", "u20", "token=ghp_" + "b" * 36))(path)
    await synced(tmp_path, store, memo)
    assert len(seen) == 1 and seen[0].startswith("token=")
    contents = [m.content for m in (await held(store))[1]]
    assert not any("hunter" in c or "ghp_" in c for c in contents)

