"""Claude Code transcripts (``~/.claude/projects``) as harkback conversations.

Claude Code writes one JSON-lines file per session,
``<projects>/<project>/<session id>.jsonl``, where ``<project>`` is the working
folder with ``/`` turned into ``-``. Each line has a ``type``: ``user`` and
``assistant`` lines carry an Anthropic-style ``message`` (``content`` a string or a
list of ``text``, ``tool_use``, ``tool_result``, ``thinking``, ``image`` blocks), plus
``sessionId``, ``uuid``, ``timestamp``, ``cwd``, ``gitBranch``, ``isSidechain`` and,
on sub-agent lines, ``agentId``. ``summary`` and ``custom-title`` lines name the
session; other types (``system``, ``file-history-snapshot``, ``queue-operation``,
``progress`` ...) carry no conversation and are counted, as are unknown types.

Sub-agents (the Task tool) write ``<session id>/subagents/agent-<agent id>.jsonl``
(older versions: ``agent-<agent id>.jsonl`` beside the session, or sidechain lines
inside the session file). Each becomes a session ``<session id>/agent-<agent id>``
whose parent is the session that started it, so resolve traces its hits there.
``agent-acompact-*`` files are Claude Code's own compaction runs and are left out,
like ``isCompactSummary`` and ``isMeta`` (hook and command scaffolding) lines.

The project folder (``cwd`` and git branch) becomes a line under the session's first
user request, ``[project: /home/me/code/app, git branch: main]``: search covers
message text, so that is where a plain search for the project name finds it.

Re-import is incremental: a file whose size and mtime did not change since the last
import is not read again; a changed file is read whole and its sessions replaced
(the store re-indexes only messages whose text changed).

>>> parsed = parse_lines("s1", [{"type": "user", "sessionId": "s1", "cwd": "/w/app",
...     "timestamp": "2026-03-03T14:15:00Z", "message": {"role": "user", "content": "hi"}},
...     {"type": "weird"}], parent=None, project=True)
>>> [m.content for m in parsed.conversations[0].messages], parsed.left_out
(['hi\\n\\n[project: /w/app]'], (("unknown line type 'weird'", 1),))
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs
from returns.result import Result

from harkback.adapters.sources.importing import (
    ImportPlan,
    ParsedFile,
    Tally,
    clip_tool_output,
    iso_epoch,
    json_lines,
    plan_folder,
    project_note,
    with_project,
)
from harkback.adapters.stores.import_ledger import SourceKey, SourceState
from harkback.stages.errors import StoreUnavailable
from harkback.stages.records import Conversation, Message, Role, Session, ToolCall

KIND = "claude-code"
SOURCE = "claude-code"
PATTERNS = ("*/*.jsonl", "*/*/subagents/*.jsonl")
IGNORED_TYPES = frozenset({"system", "file-history-snapshot", "queue-operation", "progress",
                           "attachment", "last-prompt", "permission-mode", "agent-name",
                           "pr-link", "tag"})
SYNTHETIC_MODEL = "<synthetic>"

Line = Mapping[str, object]


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _block_text(content: object) -> str:
    """The text of a tool result's content: a string, or a list of text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_str(b.get("text")) for b in content
                         if isinstance(b, dict) and b.get("type") == "text" and b.get("text"))
    return ""


@attrs.define
class _Session:
    """One session being read: its messages so far and what names it."""

    id: str
    parent: str | None
    messages: list[Message] = attrs.field(factory=list)
    tools: dict[str, str] = attrs.field(factory=dict)
    times: list[float] = attrs.field(factory=list)
    uuids: set[str] = attrs.field(factory=set)
    cwd: str = ""
    branch: str = ""
    model: str = ""
    last_assistant_id: str = ""

    def add(self, role: Role, content: str = "", *, calls: tuple[ToolCall, ...] = (),
            tool_name: str = "", tool_call_id: str = "", when: float | None = None) -> None:
        self.messages.append(Message(
            session_id=self.id, position=len(self.messages), role=role, content=content,
            tool_calls=calls, tool_name=tool_name, tool_call_id=tool_call_id, timestamp=when))

    def see(self, line: Line, tally: Tally) -> float | None:
        when = iso_epoch(line.get("timestamp"), tally)
        if when is not None:
            self.times.append(when)
        self.uuids.add(_str(line.get("uuid")))
        self.cwd = self.cwd or _str(line.get("cwd"))
        self.branch = self.branch or _str(line.get("gitBranch"))
        return when

    def user(self, line: Line, tally: Tally) -> None:
        when = self.see(line, tally)
        self.last_assistant_id = ""
        if line.get("isMeta"):
            tally.add("meta message")
            return
        if line.get("isCompactSummary"):
            tally.add("compaction summary")
            return
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        texts: list[str] = []
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for block in content:
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "text" and isinstance(block, dict):
                    texts.append(_str(block.get("text")))
                elif kind == "tool_result" and isinstance(block, dict):
                    self.tool_result(block, when, tally)
                else:
                    tally.add(f"{kind or 'unknown'} block")
        text = "\n".join(t for t in texts if t)
        if text.strip():
            self.add("user", text, when=when)
        elif not isinstance(content, list):
            tally.add("empty message")

    def tool_result(self, block: Mapping[str, object], when: float | None, tally: Tally
                    ) -> None:
        call_id = _str(block.get("tool_use_id"))
        text, clipped = clip_tool_output(_block_text(block.get("content")))
        if clipped:
            tally.add("tool output clipped")
        if not text.strip():
            tally.add("empty tool result")
            return
        self.add("tool", text, tool_name=self.tools.get(call_id, ""), tool_call_id=call_id,
                 when=when)

    def assistant(self, line: Line, tally: Tally) -> None:
        when = self.see(line, tally)
        if line.get("isApiErrorMessage"):
            tally.add("API error message")
            return
        message = line.get("message")
        if not isinstance(message, dict):
            tally.add("assistant line without a message")
            return
        model = _str(message.get("model"))
        if model and model != SYNTHETIC_MODEL:
            self.model = model
        content = message.get("content")
        texts: list[str] = [content] if isinstance(content, str) else []
        calls: list[ToolCall] = []
        for block in content if isinstance(content, list) else []:
            kind = block.get("type") if isinstance(block, dict) else None
            if not isinstance(block, dict):
                tally.add("unknown block")
            elif kind == "text":
                texts.append(_str(block.get("text")))
            elif kind == "tool_use":
                call_id, name = _str(block.get("id")), _str(block.get("name"))
                self.tools[call_id] = name
                calls.append(ToolCall(id=call_id, name=name, arguments=json.dumps(
                    block.get("input"), ensure_ascii=False)))
            else:
                tally.add(f"{kind or 'unknown'} block")
        text = "\n".join(t for t in texts if t)
        if not text.strip() and not calls:
            return
        # Claude Code writes one line per content block of a reply; they share message.id.
        reply_id = _str(message.get("id"))
        last = self.messages[-1] if self.messages else None
        if reply_id and reply_id == self.last_assistant_id and last is not None:
            merged = "\n".join(t for t in (last.content, text) if t)
            self.messages[-1] = attrs.evolve(last, content=merged,
                                             tool_calls=last.tool_calls + tuple(calls))
            return
        self.add("assistant", text, calls=tuple(calls), when=when)
        self.last_assistant_id = reply_id

    def conversation(self, title: str, *, project: bool) -> Conversation:
        messages = tuple(self.messages)
        if project and self.cwd:
            messages = with_project(messages, project_note(self.cwd, self.branch))
        session = Session(id=self.id, source=SOURCE, model=self.model, title=title,
                          started_at=min(self.times, default=None),
                          ended_at=max(self.times, default=None), parent_session_id=self.parent)
        return Conversation(session, messages)


def parse_lines(session_id: str, lines: Iterable[Line], *, parent: str | None,
                project: bool, main: bool = True, tally: Tally | None = None) -> ParsedFile:
    """Read the lines of one transcript file whose own session is ``session_id``.

    In a ``main`` session's file, sidechain lines go to sub-agent sessions of their
    own; ``project`` adds the project line to the file's own session.
    """
    tally = tally if tally is not None else Tally()
    sessions: dict[str, _Session] = {}
    titles: list[str] = []
    summaries: list[tuple[str, str]] = []

    def target(line: Line) -> _Session:
        sid, owner = session_id, parent
        if main and line.get("isSidechain"):
            agent = _str(line.get("agentId")) or "sidechain"
            sid, owner = f"{session_id}/agent-{agent}", session_id
        if sid not in sessions:
            sessions[sid] = _Session(sid, owner)
        return sessions[sid]

    for line in lines:
        kind = line.get("type")
        if kind == "user":
            target(line).user(line, tally)
        elif kind == "assistant":
            target(line).assistant(line, tally)
        elif kind == "summary":
            summaries.append((_str(line.get("leafUuid")), _str(line.get("summary"))))
        elif kind == "custom-title":
            titles.append(_str(line.get("customTitle")) or _str(line.get("title")))
        elif isinstance(kind, str) and kind in IGNORED_TYPES:
            tally.add(f"{kind} line")
        else:
            tally.add(f"unknown line type {kind!r}")
    own = sessions.get(session_id)
    uuids = own.uuids if own is not None else set()
    named = [t for t in titles if t] or [s for leaf, s in summaries if s and leaf in uuids]
    conversations = []
    for sid, session in sessions.items():
        if not session.messages:
            tally.add("session without messages")
            continue
        title = named[-1] if named and sid == session_id else ""
        conversations.append(session.conversation(title, project=project and sid == session_id))
    return ParsedFile(conversations=tuple(conversations), left_out=tally.items())


def parse_file(path: Path, root: Path) -> ParsedFile:
    """Read one transcript file found under ``root`` (the ``projects`` folder)."""
    parts = path.relative_to(root).parts
    tally = Tally()
    stem = path.stem
    if stem.startswith("agent-acompact"):
        tally.add("compaction agent transcript")
        return ParsedFile(left_out=tally.items())
    lines = [line for _, line in json_lines(path, tally)]
    if len(parts) == 4 and parts[2] == "subagents":
        return parse_lines(f"{parts[1]}/{stem}", lines, parent=parts[1], project=False,
                           main=False, tally=tally)
    if stem.startswith("agent-"):
        # Older layout: the agent's file beside the session; its lines name the session.
        owner = next((_str(line.get("sessionId")) for line in lines if line.get("sessionId")),
                     "")
        return parse_lines(f"{owner}/{stem}" if owner else stem, lines, parent=owner or None,
                           project=False, main=False, tally=tally)
    return parse_lines(stem, lines, parent=None, project=True, tally=tally)


@attrs.frozen
class ClaudeCodeImporter:
    """Imports every transcript under a Claude Code ``projects`` folder."""

    root: Path

    @property
    def key(self) -> SourceKey:
        """The source: kind ``claude-code`` and the folder's resolved path."""
        return SourceKey(kind=KIND, location=str(self.root))

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan importing the files that changed since ``state``."""
        return plan_folder(self.root, PATTERNS, state, full=full,
                           parse=lambda path: parse_file(path, self.root),
                           what="Claude Code projects folder")
