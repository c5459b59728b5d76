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
the wrapper (2025) hold bare response items after a bare meta line; both are read, and so
is the first, TypeScript Codex's ``sessions/rollout-<date>-<uuid>.json``: one JSON document
of the same meta and items (:func:`unpack_rollout`).

Only response items become messages. Left out and counted: ``event_msg`` and
``turn_context`` lines, reasoning, developer messages and the instruction messages Codex
injects as user turns (``<environment_context>``, ``<user_instructions>``, ``AGENTS.md``
text), the ``<turn_aborted>`` notice of a stopped turn, compaction summaries, unknown types.
A request the editor extension sent under its context (``# Context from my IDE setup:``) is
stored request first (:mod:`~harkback.adapters.sources.codex_requests`). A sub-agent rollout
(``source: {"subagent": {"thread_spawn": {"parent_thread_id"}}}``) is linked to its parent.
A fork (``codex fork``, a rollback into a new thread: ``forked_from_id``) copies the
parent's rollout after its own meta line, the parent's meta line first (a fork of a fork:
the first fork's, holding its copy in turn), then writes its own instructions and goes on;
when the parent is stored (or being imported) the copy is left out and the fork stored as its
continuation (:mod:`~harkback.adapters.sources.replays`, and :data:`FORK_BURST_S` for where
the copy ends), once the import has compared the copy with what the store holds of the
sessions it copies, by role, text and order (Codex stamps the copy anew): what the store
lacks is kept at the fork's start, and a copy saying other things is stored whole
(:mod:`~harkback.pipeline.import_replays`); a fork copying nothing stays a conversation of its
own. Codex's internal compaction and memory sessions are left out. The working folder
becomes a line under the first user request, as for Claude Code. :data:`CODEX` is the format
:class:`~harkback.adapters.sources.transcripts.TranscriptImporter` reads; re-import skips
unchanged files.

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
from collections.abc import Container, Iterable, Mapping
from pathlib import PurePath

import attrs

from harkback.adapters.sources import codex_requests, transcript_lines, transcripts
from harkback.adapters.sources.encodings import json_loads
from harkback.adapters.sources.importing import Replay, Tally
from harkback.adapters.sources.replays import COPIED, Replayed
from harkback.adapters.sources.summary_titles import NO_NAMES, Named
from harkback.adapters.sources.transcript_lines import Line
from harkback.adapters.sources.transcript_session import Transcript, text_of
from harkback.adapters.sources.transcripts import ParsedFile
from harkback.stages.records import Conversation

SOURCE = "codex"
RESPONSE_TYPES = frozenset({"message", "reasoning", "function_call", "function_call_output",
                            "custom_tool_call", "custom_tool_call_output", "local_shell_call",
                            "web_search_call", "tool_search_call", "tool_search_output",
                            "image_generation_call", "compaction", "compaction_summary"})
INSTRUCTION_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md",
                        "<INSTRUCTIONS>", "<permissions instructions>")
INTERNAL_SUBAGENTS = frozenset({"compact", "memory_consolidation"})
FORK_BURST_S = 1.0
"""How long after a fork's meta line its copy of the parent and its own instructions are
written: Codex writes them at once, as it starts the fork (each line stamped as it is written,
or keeping the parent's earlier time). The copy ends at the last instruction message written
in that burst, the fork's own; a turn of the fork comes later (a person types it)."""
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


IMAGE = "[image]"
"""What an image part (a base64 ``data:`` URL: no text to search, and megabytes of it would
bloat the store and its index) is stored as, so the message that sent only one stays."""


def _parts_text(content: object) -> str:
    """The text of a message's or a tool output's parts, an image as :data:`IMAGE`.

    >>> _parts_text([{"type": "input_image", "image_url": "data:image/png;base64,iVBOR"},
    ...              {"type": "input_text", "text": "why is this red?"}])
    '[image]\\nwhy is this red?'
    """
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(text for text in map(_part_text, content) if text)


def _part_text(part: object) -> str:
    if not isinstance(part, dict):
        return ""
    kind = part.get("type")
    if kind in ("input_image", "output_image"):
        return IMAGE
    return text_of(part.get("text")) if kind in ("input_text", "output_text", "text") else ""


def output_text(output: object) -> str:
    """The text of a tool call's output (a string, parts, or ``{"content"|"output": ...}``).

    >>> output_text('{"output": "ok", "metadata": {"exit_code": 0}}'), output_text("plain")
    ('ok', 'plain')
    """
    if isinstance(output, str):
        if output.startswith("{"):
            try:
                decoded = json_loads(output)
            except (ValueError, RecursionError):  # nested past what Python decodes
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
            if isinstance(spawn, dict) and text_of(spawn.get("parent_thread_id")):
                return text_of(spawn.get("parent_thread_id")), False
    return None, False


@attrs.define
class _Rollout(Transcript):
    """A rollout being read; its ``id`` is the file's until a meta line names it."""

    tally: Tally = attrs.field(factory=Tally)
    meta: dict[str, object] = attrs.field(factory=dict)
    forked_at: float | None = None
    """When the rollout's meta line was written."""
    copied_from: list[str] = attrs.field(factory=list)
    """The sessions whose rollouts a fork's copy holds: its parent (whose meta line it holds
    again), and that one's parent when it was a fork too (its copy copied), and so on."""
    forked_from: str = ""
    """The ``forked_from_id`` of the last meta line read: the session copied next, if any."""
    copied: int | None = None
    """How many turns were read before the fork's own instructions (the copy's)."""

    def line(self, line: Line) -> None:
        when = self.time(line.get("timestamp"), self.tally)
        kind, payload = line.get("type"), line.get("payload")
        if "payload" not in line:
            self.legacy(line, when)
        elif not isinstance(payload, dict):
            self.tally.skip("unreadable line", "its payload is not an object")
        elif kind == "session_meta":
            self.session_meta(payload, when)
        elif kind == "response_item":
            self.item(payload, when)
        elif kind == "turn_context":
            self.model = text_of(payload.get("model")) or self.model
            self.tally.add("turn_context line")
        elif kind == "compacted":
            self.tally.add("compaction summary")
        elif kind == "event_msg":
            self.tally.add("event_msg line")
        else:
            self.tally.add(f"unknown line type {kind!r}")

    def session_meta(self, payload: Mapping[str, object], when: float | None) -> None:
        """The rollout's own meta line, or (a fork) the parent's, starting its copy."""
        if not self.meta:
            self.meta, self.forked_at = dict(payload), when
            self.forked_from = text_of(payload.get("forked_from_id"))
        elif text_of(payload.get("id")) == self.forked_from != "":
            self.copied_from.append(self.forked_from)
            self.forked_from = text_of(payload.get("forked_from_id"))

    def instructions(self, when: float | None) -> None:
        """An instruction message: one written in a fork's first burst may be its own, so
        the copy ends before it."""
        if (self.copied_from and when is not None and self.forked_at is not None
                and when <= self.forked_at + FORK_BURST_S):
            self.copied = len(self.turns)

    def legacy(self, line: Line, when: float | None) -> None:
        kind = line.get("type")
        if "record_type" in line:
            self.tally.add("state record")
        elif isinstance(kind, str) and kind in RESPONSE_TYPES:
            self.item(line, when)
        elif kind is None and text_of(line.get("id")) and not self.meta:
            self.meta = dict(line)
        else:
            self.tally.add(f"unknown line type {kind!r}")

    def call(self, call_id: str, name: str, arguments: str, when: float | None) -> None:
        call = self.tool_call(call_id, name, arguments, self.tally)
        if self.turns and self.turns[-1].role == "assistant":
            # Calls right after a reply belong to it: "[ASSISTANT]: text / [Called: ...]".
            self.extend("", (call,))
        else:
            self.add("assistant", calls=(call,), when=when)

    def item(self, item: Mapping[str, object], when: float | None) -> None:
        kind = text_of(item.get("type"))
        call_id = text_of(item.get("call_id")) or text_of(item.get("id"))
        if kind == "message":
            self.message(item, when)
        elif kind == "function_call":
            self.call(call_id, text_of(item.get("name")),
                      _json_text(item.get("arguments", "")), when)
        elif kind == "custom_tool_call":
            self.call(call_id, text_of(item.get("name")), _json_text(item.get("input", "")),
                      when)
        elif kind == "local_shell_call":
            self.call(call_id, "local_shell", _json_text(item.get("action")), when)
        elif kind == "web_search_call":
            self.call(call_id, "web_search", _json_text(item.get("action")), when)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.tool_result(call_id, output_text(item.get("output")), when, self.tally,
                             empty="empty tool output")
        elif kind == "reasoning":
            self.tally.add("reasoning")
        elif kind in ("compaction", "compaction_summary"):
            self.tally.add("compaction summary")
        else:
            self.tally.add(f"{kind or 'unknown'} response item")

    def message(self, item: Mapping[str, object], when: float | None) -> None:
        role = text_of(item.get("role"))
        text = _parts_text(item.get("content"))
        if role not in ("user", "assistant"):
            self.tally.add(f"{role or 'unknown'} message")
            self.instructions(when)
        elif role == "user" and text.lstrip().startswith(INSTRUCTION_PREFIXES):
            self.tally.add("injected instructions")
            self.instructions(when)
        elif role == "user" and codex_requests.aborted_notice(text):
            self.tally.add("turn aborted notice")
        elif not text.strip():
            self.tally.add("empty message")
        elif role == "user":
            self.add("user", codex_requests.request_first(text), when=when)
        else:
            self.add("assistant", text, when=when)

    def finish(self, replayed: Replayed, known: Container[str]
               ) -> tuple[Conversation | None, Replay | None]:
        """The rollout's conversation, named and linked by its meta line (None: left out);
        a fork's copy of a ``known`` parent left out, and the fork read whole with it (the
        import compares the copy with the store: :mod:`~harkback.pipeline.import_replays`)."""
        self.id = text_of(self.meta.get("id")) or self.id
        parent, internal = parent_of(self.meta)
        if internal:
            self.tally.add("internal Codex session")
            return None, None
        git = self.meta.get("git")
        self.branch = text_of(git.get("branch")) if isinstance(git, dict) else ""
        self.cwd = text_of(self.meta.get("cwd"))
        sources = self.left_out(replayed, known)
        copied = self.copied or 0 if sources else 0
        self.tally.add(COPIED, copied)
        if len(self.settled()) <= copied:
            self.tally.add("session without messages")
            return None, None
        started = transcript_lines.plausible_time(self.meta.get("timestamp"), self.tally)
        replay = None
        if sources:
            self.parent = parent if parent != self.id else None
            replay = Replay(sources, self.conversation(source=SOURCE, started=started),
                            lines=copied, counted=COPIED, timed=False)
            self.turns = self.settled()[copied:]
            parent = parent or self.copied_from[0]
        self.parent = parent if parent != self.id else None
        return self.conversation(source=SOURCE, started=started), replay

    def left_out(self, replayed: Replayed, known: Container[str]) -> tuple[str, ...]:
        """The sessions whose stored messages a fork's copy left out holds, oldest first
        (none: the copy is kept). The copy is left out when its parent is ``known``; a parent
        that was a fork of a ``known`` session is stored as its continuation (its own
        messages), so the copy holds that session's messages too, and so on."""
        if not (self.copied and replayed.leaves_out(self.copied_from[0], known)):
            return ()
        held = [self.copied_from[0]]
        for earlier in self.copied_from[1:]:
            if not replayed.leaves_out(earlier, known):
                break  # the one after it is stored whole (its copy kept), until it is known
            held.append(earlier)
        return tuple(reversed(held))


def parse_rollout_lines(fallback_id: str, lines: Iterable[Line], tally: Tally | None = None,
                        known: Container[str] = frozenset()) -> ParsedFile:
    """Read a rollout's lines; ``fallback_id`` names the session when no meta line does.
    A fork's copy of a ``known`` session is left out (and the fork read whole too)."""
    rollout = _Rollout(fallback_id, tally=tally if tally is not None else Tally())
    for line in transcript_lines.located(lines, rollout.tally):
        rollout.line(line)
    replayed = Replayed()
    conversation, replay = rollout.finish(replayed, known)
    return ParsedFile(conversations=(conversation,) if conversation else (),
                      left_out=rollout.tally.items(), lineage=replayed.lineage(),
                      replays=(replay,) if replay else ())


def session_named(item: str) -> str:
    """The session a rollout's path names: the last uuid of its file name ("" if none).

    >>> session_named("2026/03/04/rollout-2026-03-04T10-00-00-0199a1b4-1111-7ddd-8eee-ff.jsonl")
    ''
    >>> session_named("rollout-2026-03-04T10-00-00-0199a1b4-1111-7ddd-8eee-ffffffffffff.jsonl")
    '0199a1b4-1111-7ddd-8eee-ffffffffffff'
    """
    found = _UUID.findall(PurePath(item).stem)
    return found[-1] if found else ""


def read_rollout(relative: PurePath, lines: Iterable[Line], tally: Tally,
                 known: Container[str] = frozenset(), named: Named = NO_NAMES) -> ParsedFile:
    """Read one rollout file (its session id falls back to the uuid in its name); Codex
    writes no summaries, so ``named`` is not used."""
    return parse_rollout_lines(session_named(str(relative)) or relative.stem, lines, tally,
                               known)


def unpack_rollout(document: object, tally: Tally) -> list[Line]:
    """The lines of a rollout the TypeScript Codex (2025) wrote as one JSON document,
    ``{"session": {"id", "timestamp", ...}, "items": [response items]}``: the bare meta line
    and bare items of a rollout of its time.

    >>> unpack_rollout({"session": {"id": "t0"}, "items": [{"type": "message"}]}, Tally())
    [{'id': 't0'}, {'type': 'message'}]
    """
    if not isinstance(document, dict) or not isinstance(document.get("items"), list):
        tally.skip("unreadable file", "not a Codex session (no list of items)")
        return []
    meta = document.get("session")
    items: list[Line] = [item for item in document["items"] if isinstance(item, dict)]
    tally.add("unknown item", len(document["items"]) - len(items))
    return [meta, *items] if isinstance(meta, dict) else items


CODEX = transcripts.TranscriptFormat(kind=SOURCE, what="Codex sessions folder",
                                     patterns=("**/rollout-*.jsonl", "**/rollout-*.json"),
                                     read=read_rollout, unpack=unpack_rollout,
                                     names=session_named)
"""Codex's ``sessions`` folder."""

CODEX_ARCHIVE = "archived_sessions"
"""The folder beside ``sessions`` that Codex moves a rollout to when it is archived (its
file name kept, the date folders dropped): still the user's history."""
