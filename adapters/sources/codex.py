"""Codex CLI session rollouts (``~/.codex/sessions``) as harkback conversations.

Codex writes one JSON-lines "rollout" per session,
``<sessions>/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``. Each line is
``{"timestamp", "type", "payload"}``: ``session_meta`` (first: ``id``, ``cwd``,
``source``, ``forked_from_id``, ``git``), ``turn_context`` (per turn: ``model``,
``cwd``), ``response_item`` (what the model saw and said: ``message`` with
``input_text``/``output_text`` parts, ``function_call``/``function_call_output``
joined by ``call_id``, ``custom_tool_call``, ``local_shell_call``,
``web_search_call``, ``reasoning``), ``compacted`` (a compaction summary) and
``event_msg`` (UI events that repeat the response items). Rollouts written before
the wrapper (2025) hold bare response items after a bare meta line; both are read.

Only response items become messages. Left out and counted: ``event_msg`` and
``turn_context`` lines, reasoning, developer messages and the instruction messages
Codex injects as user turns (``<environment_context>``, ``<user_instructions>``,
``AGENTS.md`` text), compaction summaries, unknown types. A sub-agent rollout
(``source: {"subagent": {"thread_spawn": {"parent_thread_id"}}}``) is linked to its
parent; a fork (``forked_from_id``) is a conversation of its own; Codex's internal
compaction and memory sessions are left out. The working folder becomes a line under
the first user request, as for Claude Code. Re-import skips unchanged files.

>>> parsed = parse_rollout_lines("x", [
...     {"type": "session_meta", "payload": {"id": "t1", "cwd": "/w/api"}},
...     {"type": "response_item", "payload": {"type": "message", "role": "user",
...      "content": [{"type": "input_text", "text": "fix the CORS error"}]}},
...     {"type": "event_msg", "payload": {"type": "user_message"}}])
>>> conv = parsed.conversations[0]
>>> conv.session.id, conv.messages[0].content, parsed.left_out
('t1', 'fix the CORS error\\n\\n[project: /w/api]', (('event_msg line', 1),))
"""

from __future__ import annotations

import json
import re
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

KIND = "codex"
SOURCE = "codex"
PATTERNS = ("**/rollout-*.jsonl",)
RESPONSE_TYPES = frozenset({"message", "reasoning", "function_call", "function_call_output",
                            "custom_tool_call", "custom_tool_call_output", "local_shell_call",
                            "web_search_call", "tool_search_call", "tool_search_output",
                            "image_generation_call", "compaction", "compaction_summary"})
INSTRUCTION_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md",
                        "<INSTRUCTIONS>", "<permissions instructions>")
INTERNAL_SUBAGENTS = frozenset({"compact", "memory_consolidation"})
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)

Line = Mapping[str, object]


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _parts_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(_str(p.get("text")) for p in content
                     if isinstance(p, dict) and p.get("type") in ("input_text", "output_text",
                                                                    "text") and p.get("text"))


def output_text(output: object) -> str:
    """The text of a tool call's output (a string, parts, or ``{"content"|"output": ...}``).

    >>> output_text('{"output": "ok", "metadata": {"exit_code": 0}}'), output_text("plain")
    ('ok', 'plain')
    """
    if isinstance(output, str):
        if output.startswith("{"):
            try:
                decoded = json.loads(output)
            except ValueError:
                return output
            if isinstance(decoded, dict) and isinstance(decoded.get("output"), str):
                return str(decoded["output"])
        return output
    if isinstance(output, dict):
        for key in ("content", "output"):
            if key in output:
                return output_text(output[key])
        return ""
    return _parts_text(output)


def _json_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def parent_of(meta: Mapping[str, object]) -> tuple[str | None, bool]:
    """The parent session of a rollout, and whether it is an internal Codex session.

    >>> parent_of({"source": {"subagent": {"thread_spawn": {"parent_thread_id": "p"}}}})
    ('p', False)
    >>> parent_of({"source": {"subagent": "compact"}})
    (None, True)
    """
    source = meta.get("source")
    if isinstance(source, dict):
        if "internal" in source:
            return None, True
        sub = source.get("subagent")
        if isinstance(sub, str):
            return None, sub in INTERNAL_SUBAGENTS
        if isinstance(sub, dict):
            spawn = sub.get("thread_spawn")
            if isinstance(spawn, dict) and _str(spawn.get("parent_thread_id")):
                return _str(spawn.get("parent_thread_id")), False
    return None, False


@attrs.frozen
class _Turn:
    """A message read before the session id is known."""

    role: Role
    text: str
    calls: tuple[ToolCall, ...]
    tool_name: str
    call_id: str
    when: float | None


@attrs.define
class _Rollout:
    """A rollout being read."""

    fallback_id: str
    tally: Tally
    meta: dict[str, object] = attrs.field(factory=dict)
    model: str = ""
    turns: list[_Turn] = attrs.field(factory=list)
    tools: dict[str, str] = attrs.field(factory=dict)
    times: list[float] = attrs.field(factory=list)

    def line(self, line: Line) -> None:
        when = iso_epoch(line.get("timestamp"), self.tally)
        if when is not None:
            self.times.append(when)
        kind, payload = line.get("type"), line.get("payload")
        if "payload" not in line:
            self.legacy(line, when)
        elif not isinstance(payload, dict):
            self.tally.add("unreadable line")
        elif kind == "session_meta":
            self.meta = self.meta or dict(payload)
        elif kind == "response_item":
            self.item(payload, when)
        elif kind == "turn_context":
            self.model = _str(payload.get("model")) or self.model
            self.tally.add("turn_context line")
        elif kind == "compacted":
            self.tally.add("compaction summary")
        elif kind == "event_msg":
            self.tally.add("event_msg line")
        else:
            self.tally.add(f"unknown line type {kind!r}")

    def legacy(self, line: Line, when: float | None) -> None:
        kind = line.get("type")
        if "record_type" in line:
            self.tally.add("state record")
        elif isinstance(kind, str) and kind in RESPONSE_TYPES:
            self.item(line, when)
        elif kind is None and _str(line.get("id")) and not self.meta:
            self.meta = dict(line)
        else:
            self.tally.add(f"unknown line type {kind!r}")

    def add(self, role: Role, text: str = "", calls: tuple[ToolCall, ...] = (), *,
            tool_name: str = "", call_id: str = "", when: float | None) -> None:
        if role == "assistant" and calls and self.turns and self.turns[-1].role == "assistant":
            # Calls right after a reply belong to it: "[ASSISTANT]: text / [Called: ...]".
            self.turns[-1] = attrs.evolve(self.turns[-1], calls=self.turns[-1].calls + calls)
            return
        self.turns.append(_Turn(role, text, calls, tool_name, call_id, when))

    def call(self, call_id: str, name: str, arguments: str, when: float | None) -> None:
        self.tools[call_id] = name
        self.add("assistant", "", (ToolCall(id=call_id, name=name, arguments=arguments),),
                 when=when)

    def result(self, call_id: str, output: object, when: float | None) -> None:
        text, clipped = clip_tool_output(output_text(output))
        if clipped:
            self.tally.add("tool output clipped")
        if not text.strip():
            self.tally.add("empty tool output")
            return
        self.add("tool", text, tool_name=self.tools.get(call_id, ""), call_id=call_id,
                 when=when)

    def item(self, item: Mapping[str, object], when: float | None) -> None:
        kind = _str(item.get("type"))
        call_id = _str(item.get("call_id")) or _str(item.get("id"))
        if kind == "message":
            self.message(item, when)
        elif kind == "function_call":
            self.call(call_id, _str(item.get("name")), _json_text(item.get("arguments", "")),
                      when)
        elif kind == "custom_tool_call":
            self.call(call_id, _str(item.get("name")), _json_text(item.get("input", "")), when)
        elif kind == "local_shell_call":
            self.call(call_id, "local_shell", _json_text(item.get("action")), when)
        elif kind == "web_search_call":
            self.call(call_id, "web_search", _json_text(item.get("action")), when)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.result(call_id, item.get("output"), when)
        elif kind == "reasoning":
            self.tally.add("reasoning")
        elif kind in ("compaction", "compaction_summary"):
            self.tally.add("compaction summary")
        else:
            self.tally.add(f"{kind or 'unknown'} response item")

    def message(self, item: Mapping[str, object], when: float | None) -> None:
        role = _str(item.get("role"))
        text = _parts_text(item.get("content"))
        if role not in ("user", "assistant"):
            self.tally.add(f"{role or 'unknown'} message")
        elif role == "user" and text.lstrip().startswith(INSTRUCTION_PREFIXES):
            self.tally.add("injected instructions")
        elif not text.strip():
            self.tally.add("empty message")
        else:
            self.add("user" if role == "user" else "assistant", text, when=when)

    def conversation(self) -> Conversation | None:
        session_id = _str(self.meta.get("id")) or self.fallback_id
        parent, internal = parent_of(self.meta)
        if internal:
            self.tally.add("internal Codex session")
            return None
        messages = tuple(Message(session_id=session_id, position=i, role=t.role, content=t.text,
                                 tool_calls=t.calls, tool_name=t.tool_name,
                                 tool_call_id=t.call_id, timestamp=t.when)
                         for i, t in enumerate(self.turns))
        if not messages:
            self.tally.add("session without messages")
            return None
        git = self.meta.get("git")
        branch = _str(git.get("branch")) if isinstance(git, dict) else ""
        cwd = _str(self.meta.get("cwd"))
        if cwd:
            messages = with_project(messages, project_note(cwd, branch))
        started = iso_epoch(self.meta.get("timestamp"), self.tally)
        session = Session(id=session_id, source=SOURCE, model=self.model,
                          started_at=started if started is not None else min(self.times,
                                                                              default=None),
                          ended_at=max(self.times, default=None),
                          parent_session_id=parent if parent != session_id else None)
        return Conversation(session, messages)


def parse_rollout_lines(fallback_id: str, lines: Iterable[Line], tally: Tally | None = None
                        ) -> ParsedFile:
    """Read a rollout's lines; ``fallback_id`` names the session when no meta line does."""
    rollout = _Rollout(fallback_id, tally if tally is not None else Tally())
    for line in lines:
        rollout.line(line)
    conversation = rollout.conversation()
    return ParsedFile(conversations=(conversation,) if conversation else (),
                      left_out=rollout.tally.items())


def parse_rollout(path: Path) -> ParsedFile:
    """Read one rollout file (its session id falls back to the uuid in its name)."""
    found = _UUID.findall(path.stem)
    tally = Tally()
    return parse_rollout_lines(found[-1] if found else path.stem,
                               (line for _, line in json_lines(path, tally)), tally)


@attrs.frozen
class CodexImporter:
    """Imports every rollout under a Codex ``sessions`` folder."""

    root: Path

    @property
    def key(self) -> SourceKey:
        """The source: kind ``codex`` and the folder's resolved path."""
        return SourceKey(kind=KIND, location=str(self.root))

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan importing the rollouts that changed since ``state``."""
        return plan_folder(self.root, PATTERNS, state, full=full,
                           parse=parse_rollout, what="Codex sessions folder")
