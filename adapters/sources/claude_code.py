"""Claude Code transcripts (``~/.claude/projects``) as harkback conversations.

Claude Code writes one JSON-lines file per session,
``<projects>/<project>/<session id>.jsonl``, where ``<project>`` is the working
folder with ``/`` turned into ``-``. Each line has a ``type``: ``user`` and
``assistant`` lines carry an Anthropic-style ``message`` (``content`` a string or a
list of ``text``, ``tool_use``, ``tool_result``, ``thinking``, ``image`` blocks: an image
is stored as ``[image]``), plus
``sessionId``, ``uuid``, ``timestamp``, ``cwd``, ``gitBranch``, ``isSidechain`` and,
on sub-agent lines, ``agentId``. ``summary``, ``custom-title`` and ``ai-title`` lines name the
session (a ``custom-title``, from ``/rename``, first, then an ``ai-title``, Claude Code's
own, then a summary, which another file may hold:
:mod:`~harkback.adapters.sources.summary_titles`); other types (``system``,
``file-history-snapshot``, ``queue-operation``, ``progress`` ...) carry no conversation
and are counted, as are unknown types.

Sub-agents (the Task tool) write ``<session id>/subagents/agent-<agent id>.jsonl``
(older versions: ``agent-<agent id>.jsonl`` beside the session, or sidechain lines
inside the session file). Each becomes a session ``<session id>/agent-<agent id>``
whose parent is the session that started it, so resolve traces its hits there.
``agent-acompact-*`` files are Claude Code's own compaction runs and are left out,
like ``isCompactSummary`` and ``isMeta`` (hook and command scaffolding) lines, and the
echo of a command that only steers the session run without arguments (``/clear``), or a
command's output (:mod:`~harkback.adapters.sources.claude_commands`: any other command is
kept as typed, ``/review``, ``/fix-issue 123``).
A request an editor extension sent after its notice of the open file
(``<ide_opened_file>``) is stored request first (:mod:`~harkback.adapters.sources.claude_ide`).

The project folder (``cwd`` and git branch) becomes a line under the session's first
user request, ``[project: /home/me/code/app, git branch: main]``: search covers
message text, so that is where a plain search for the project name finds it.

:data:`CLAUDE_CODE` is this format for
:class:`~harkback.adapters.sources.transcripts.TranscriptImporter`. Re-import is
incremental: a file whose size and mtime did not change since the last import is not
read again; a changed file is read whole and its sessions replaced (the store
re-indexes only messages whose text changed).

>>> parsed = parse_lines("s1", [{"type": "user", "sessionId": "s1", "cwd": "/w/app",
...     "timestamp": "2026-03-03T14:15:00Z", "message": {"role": "user", "content": "hi"}},
...     {"type": "weird"}], parent=None, project=True)
>>> [m.content for m in parsed.conversations[0].messages], parsed.left_out
(['hi\\n\\n[project: /w/app]'], (("unknown line type 'weird'", 1),))
"""

from __future__ import annotations

import copy
import json
from collections.abc import Container, Iterable
from pathlib import PurePath

import attrs

from harkback.adapters.sources import (
    claude_commands,
    claude_ide,
    summary_titles,
    transcript_lines,
    transcripts,
)
from harkback.adapters.sources.importing import Replay, Tally
from harkback.adapters.sources.replays import COPIED_LINE, Replayed
from harkback.adapters.sources.summary_titles import NO_NAMES, Named
from harkback.adapters.sources.transcript_lines import Line
from harkback.adapters.sources.transcript_session import Transcript, text_of
from harkback.adapters.sources.transcripts import ParsedFile
from harkback.stages.records import ToolCall

SOURCE = "claude-code"
IGNORED_TYPES = frozenset({"system", "file-history-snapshot", "queue-operation", "progress",
                           "attachment", "last-prompt", "permission-mode", "agent-name",
                           "pr-link", "tag"})
SYNTHETIC_MODEL = "<synthetic>"


PLACEHOLDERS = {"image": "[image]", "document": "[document]"}
"""What an attached image or document (base64 data: no text to search, and megabytes of
it would bloat the store and its index) is stored as, so the turn that sent it stays."""


def _block_text(content: object) -> str:
    """The text of a tool result's content: a string, or a list of text blocks (an image,
    as a screenshot tool returns it, as its placeholder).

    >>> _block_text([{"type": "image", "source": {"data": "iVBOR"}}, {"type": "text",
    ...              "text": "1280x720"}])
    '[image]\\n1280x720'
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text for text in map(_piece, content) if text)
    return ""


def _piece(block: object) -> str:
    """The text of one content block: its text, or an attachment's placeholder."""
    if not isinstance(block, dict):
        return ""
    kind = text_of(block.get("type"))
    return text_of(block.get("text")) if kind == "text" else PLACEHOLDERS.get(kind, "")


@attrs.define
class _Session(Transcript):
    """One session being read, and what its lines say beyond its turns."""

    uuids: set[str] = attrs.field(factory=set)
    last_assistant_id: str = ""

    def see(self, line: Line, tally: Tally) -> float | None:
        when = self.time(line.get("timestamp"), tally)
        self.uuids.add(text_of(line.get("uuid")))
        self.cwd = self.cwd or text_of(line.get("cwd"))
        self.branch = self.branch or text_of(line.get("gitBranch"))
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
                    texts.append(text_of(block.get("text")))
                elif kind == "tool_result" and isinstance(block, dict):
                    self.tool_result(text_of(block.get("tool_use_id")),
                                     _block_text(block.get("content")), when, tally,
                                     empty="empty tool result")
                elif isinstance(kind, str) and kind in PLACEHOLDERS:
                    texts.append(PLACEHOLDERS[kind])
                    tally.add(f"{kind} data (a placeholder stored)")
                else:
                    tally.add(f"{kind or 'unknown'} block")
        text = "\n".join(t for t in texts if t)
        # The editor's notice first moved after the request: a command sent from the
        # editor is then read as typed too, not stored as its tags behind the notice.
        text = claude_ide.request_first(text)
        typed = claude_commands.typed_command(text)
        if typed == "":
            tally.add(claude_commands.LEFT_OUT)
            return
        text = text if typed is None else typed
        if text.strip():
            self.add("user", text, when=when)
        elif not isinstance(content, list):
            tally.add("empty message")

    def assistant(self, line: Line, tally: Tally) -> None:
        when = self.see(line, tally)
        if line.get("isApiErrorMessage"):
            tally.add("API error message")
            return
        message = line.get("message")
        if not isinstance(message, dict):
            tally.skip("assistant line without a message")
            return
        model = text_of(message.get("model"))
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
                texts.append(text_of(block.get("text")))
            elif kind == "tool_use":
                calls.append(self.tool_call(text_of(block.get("id")), text_of(block.get("name")),
                                            json.dumps(block.get("input"), ensure_ascii=False),
                                            tally))
            else:
                tally.add(f"{kind or 'unknown'} block")
        text = "\n".join(t for t in texts if t)
        if not text.strip() and not calls:
            return
        # Claude Code writes one line per content block of a reply; they share message.id.
        reply_id = text_of(message.get("id"))
        if reply_id and reply_id == self.last_assistant_id and self.turns:
            self.extend(text, tuple(calls))
            return
        self.add("assistant", text, calls=tuple(calls), when=when)
        self.last_assistant_id = reply_id


def _chain(line: Line, chains: dict[str, str]) -> str:
    """The agent of a sidechain line that names none (Claude Code 1.0 wrote each Task
    run into the session's file): the one of the line it follows (``parentUuid``), else a
    new one (``sidechain``, ``sidechain-2`` ...). All were one session, runs mixed.

    >>> chains = {}
    >>> [_chain(line, chains) for line in ({"uuid": "a"}, {"uuid": "b"},
    ...                                    {"uuid": "c", "parentUuid": "a"})]
    ['sidechain', 'sidechain-2', 'sidechain']
    """
    agent = chains.get(text_of(line.get("parentUuid")), "")
    if not agent:
        runs = len(set(chains.values()))
        agent = f"sidechain-{runs + 1}" if runs else "sidechain"
    if uuid := text_of(line.get("uuid")):
        chains[uuid] = agent
    return agent


def replayed_from(line: Line, own: str, *, opening: bool) -> str:
    """The session a line of ``own``'s file was copied from ("" if it is ``own``'s): a
    fork's copy names it in ``forkedFrom`` (Claude Code 2.1), a resume's copy (versions
    that start a new file) keeps its ``sessionId``, but only in the copy that opens the
    file (``opening``: no line of ``own``'s read yet): a line naming another session
    after the session's own is no copy the resume made, and is kept.

    >>> replayed_from({"sessionId": "new", "forkedFrom": {"sessionId": "old"}}, "new",
    ...               opening=False)
    'old'
    >>> [replayed_from({"sessionId": s}, "new", opening=o)
    ...  for s, o in (("old", True), ("new", True), ("old", False))]
    ['old', '', '']
    """
    forked = line.get("forkedFrom")
    if isinstance(forked, dict) and text_of(forked.get("sessionId")) not in ("", own):
        return text_of(forked.get("sessionId"))
    source = text_of(line.get("sessionId"))
    return source if opening and source != own else ""


def parse_lines(session_id: str, lines: Iterable[Line], *, parent: str | None,
                project: bool, main: bool = True, tally: Tally | None = None,
                known: Container[str] = frozenset(), named: Named = NO_NAMES) -> ParsedFile:
    """Read the lines of one transcript file whose own session is ``session_id``.

    In a ``main`` session's file, sidechain lines go to sub-agent sessions of their
    own; ``project`` adds the project line to the file's own session. A line of a
    ``main`` file copied from a ``known`` session (a resume or a fork replays the earlier
    session) is left out, and the session continues that one
    (:mod:`~harkback.adapters.sources.replays`). A session naming itself nothing takes the
    latest summary of ``named`` (other files' summaries) naming one of its messages
    (:mod:`~harkback.adapters.sources.summary_titles`).
    """
    tally = tally if tally is not None else Tally()
    replayed = Replayed()
    sessions: dict[str, _Session] = {}
    titles: list[str] = []
    ai_titles: list[str] = []
    summaries: list[tuple[str, str]] = []

    chains: dict[str, str] = {}  # an unnamed sidechain's line: the agent it belongs to

    def target(line: Line) -> _Session:
        sid, owner = session_id, parent
        if main and line.get("isSidechain"):
            agent = text_of(line.get("agentId")) or _chain(line, chains)
            sid, owner = f"{session_id}/agent-{agent}", session_id
        if sid not in sessions:
            sessions[sid] = _Session(sid, owner)
        return sessions[sid]

    seen: set[str] = set()
    parents: set[str] = set()  # messages another message follows: not a branch's end
    hops: dict[str, str] = {}  # a line between messages (system, progress ...): the message
    copied: set[str] = set()
    # The session read with its copied lines too, from the first one on (the import compares
    # them with the store): read alongside, not by reading the file again.
    whole: _Session | None = None
    opening = True  # no line of the session's own read yet: a resume's copy comes first
    for line in transcript_lines.located(lines, tally):
        kind = line.get("type")
        uuid = text_of(line.get("uuid")) if kind in ("user", "assistant") else ""
        if uuid and uuid in seen:
            # Claude Code writes a line again under its uuid (compaction replays history
            # into the file, stream-json input repeats it, a resume): read once.
            tally.add("repeated line (same uuid)")
            continue
        seen.add(uuid)
        link = text_of(line.get("parentUuid"))
        if uuid:
            parents.add(hops.get(link, link))
        elif other := text_of(line.get("uuid")):  # a file often ends in one (turn_duration)
            hops[other] = hops.get(link, link)
        source = ""
        if uuid and main:
            source = replayed_from(line, session_id, opening=opening)
            opening = opening and bool(source)
        if source and replayed.leaves_out(source, known):
            tally.add(COPIED_LINE)
            copied.add(uuid)  # a summary of the copied part still names this session
            if not line.get("isSidechain"):
                whole = whole or copy.deepcopy(sessions.get(session_id)) or _Session(
                    session_id, parent)
                _read(whole, line)
            continue
        if kind in ("user", "assistant"):
            session = target(line)
            _read(session, line, tally)
            if whole is not None and session.id == session_id:
                _read(whole, line)
        elif kind == "summary":
            summaries.append((text_of(line.get("leafUuid")), text_of(line.get("summary"))))
        elif kind == "custom-title":
            titles.append(text_of(line.get("customTitle")) or text_of(line.get("title")))
        elif kind == "ai-title":  # the title Claude Code makes itself (2026): after /rename's
            ai_titles.append(text_of(line.get("aiTitle")))
        elif isinstance(kind, str) and kind in IGNORED_TYPES:
            tally.add(f"{kind} line")
        else:
            tally.add(f"unknown line type {kind!r}")
    own = sessions.get(session_id)
    uuids = (own.uuids if own is not None else set()) | copied
    if own is not None and replayed.parent is not None:
        own.parent = replayed.parent
    uuids.discard("")
    own_names = ([t for t in titles if t] or [t for t in ai_titles if t]
                 or [s for leaf, s in summaries if s and leaf in uuids])
    # Named by no line of its own: the latest summary another file holds of its messages.
    # Its mark keeps the messages such a summary may name, for files read later.
    ends = () if own_names or own is None else {u for u in uuids
                                                 if u not in parents or u in named}
    titled = "" if own_names else named.best(uuids)
    title_of = own_names[-1] if own_names else titled
    conversations = []
    for sid, session in sessions.items():
        if not session.turns:
            tally.add("session without messages")
            continue
        title = title_of if sid == session_id else ""
        conversations.append(session.conversation(source=SOURCE, title=title,
                                                  project=project and sid == session_id))
    replays = () if whole is None or not whole.turns else (Replay(
        tuple(replayed.after), whole.conversation(source=SOURCE, title=title_of,
                                                  project=project), lines=len(copied)),)
    return ParsedFile(conversations=tuple(conversations), left_out=tally.items(),
                      lineage=summary_titles.lineage(
                          replayed.decided(), [(leaf, s) for leaf, s in summaries if s],
                          ends, titled), replays=replays)


def _read(session: _Session, line: Line, tally: Tally | None = None) -> None:
    """A ``user`` or ``assistant`` line read into ``session`` (what it leaves out counted in
    ``tally``; not counted: the session read whole beside the file's, its copy kept)."""
    read = session.user if line.get("type") == "user" else session.assistant
    read(line, tally if tally is not None else Tally())


def read_file(relative: PurePath, lines: Iterable[Line], tally: Tally,
              known: Container[str] = frozenset(), named: Named = NO_NAMES) -> ParsedFile:
    """Read one transcript file at ``relative`` under the ``projects`` folder.

    Its place names its session: ``<project>/<session>.jsonl``,
    ``<project>/<session>/subagents/agent-<id>.jsonl``, or (older) an agent file
    beside the session, whose lines name the session. Lines a session file copied from a
    ``known`` session are left out (the session read with them too, in the same pass: a
    :class:`~harkback.adapters.sources.importing.Replay`, which the import compares with the
    store: :mod:`~harkback.pipeline.import_replays`); ``named`` are the folder's summaries.
    """
    parts, stem = relative.parts, relative.stem
    if stem.startswith("agent-acompact"):
        tally.add("compaction agent transcript")
        return ParsedFile(left_out=tally.items())
    lines = list(lines)
    if len(parts) == 4 and parts[2] == "subagents":
        return parse_lines(f"{parts[1]}/{stem}", lines, parent=parts[1], project=False,
                           main=False, tally=tally, named=named)
    if stem.startswith("agent-"):
        owner = next((text_of(line.get("sessionId")) for line in lines
                      if line.get("sessionId")), "")
        return parse_lines(f"{owner}/{stem}" if owner else stem, lines, parent=owner or None,
                           project=False, main=False, tally=tally, named=named)
    return parse_lines(stem, lines, parent=None, project=True, tally=tally, known=known,
                       named=named)


def session_named(item: str) -> str:
    """The session a file's path under the folder names: ``<project>/<session>.jsonl``.

    >>> session_named("-w-app/s1.jsonl"), session_named("-w-app/s1/subagents/agent-a.jsonl")
    ('s1', '')
    """
    _, slash, name = item.partition("/")
    return name[:-len(".jsonl")] if slash and "/" not in name and not name.startswith(
        "agent-") and name.endswith(".jsonl") else ""


CLAUDE_CODE = transcripts.TranscriptFormat(
    kind=SOURCE, what="Claude Code projects folder",
    patterns=("*/*.jsonl", "*/*/subagents/*.jsonl"), read=read_file, names=session_named,
    summaries=summary_titles.scan)
"""Claude Code's ``projects`` folder."""
