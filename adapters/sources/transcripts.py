"""The importer base for line-oriented transcripts: folders of JSON-lines session files.

Claude Code and Codex (and any format like them) write one JSON-lines file per
session under a folder. What they share is here: :class:`TranscriptImporter` finds
the files, re-reads only those whose size or mtime changed since the last import
(each file is an item of the import ledger, keyed by its path under the folder) and
reads their lines (:mod:`~harkback.adapters.sources.transcript_lines`), naming an unreadable
one instead of failing; :class:`Transcript`
gathers one session's turns as a format reads them and makes the conversation, with
its project line and the parent a sub-agent is linked to. A :class:`TranscriptFormat`
supplies only what differs: where its files live and how its lines become messages,
session metadata and links.

>>> t = Transcript("s1", cwd="/w/app")
>>> t.add("user", "hi")
>>> t.conversation(source="demo").messages[0].content
'hi\\n\\n[project: /w/app]'
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path, PurePath
from stat import S_ISREG

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources import importing
from harkback.adapters.sources.importing import (
    ImportPlan,
    ImportUnit,
    Skip,
    Tally,
    Units,
    path_text,
)
from harkback.adapters.sources.session_owners import SessionOwners
from harkback.adapters.sources.transcript_lines import (
    LINE_NUMBER,
    TORN,
    Line,
    json_lines,
    plausible_time,
)
from harkback.stages.errors import SourceUnreadable, StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.records import Conversation, Message, Role, Session, ToolCall


def text_of(value: object) -> str:
    """``value`` when it is a string, else ``""`` (transcript fields may hold anything)."""
    return value if isinstance(value, str) else ""


# --- one session being read ---------------------------------------------------------------

@attrs.frozen
class Turn:
    """A message as read, before its session id and position are final."""

    role: Role
    content: str = ""
    calls: tuple[ToolCall, ...] = ()
    tool_name: str = ""
    call_id: str = ""
    when: float | None = None


@attrs.define
class Transcript:
    """One session being read: its turns so far and what names it.

    ``id`` and ``parent`` may change while reading (a format that learns them from a
    metadata line sets them before :meth:`conversation`).
    """

    id: str
    parent: str | None = None
    turns: list[Turn] = attrs.field(factory=list)
    tools: dict[str, str] = attrs.field(factory=dict)
    times: list[float] = attrs.field(factory=list)
    cwd: str = ""
    branch: str = ""
    model: str = ""

    def time(self, value: object, tally: Tally) -> float | None:
        """The epoch of a line's time (see :func:`plausible_time`), kept for the session's
        span."""
        when = plausible_time(value, tally)
        if when is not None:
            self.times.append(when)
        return when

    def add(self, role: Role, content: str = "", *, calls: tuple[ToolCall, ...] = (),
            tool_name: str = "", tool_call_id: str = "", when: float | None = None) -> None:
        """Add a turn."""
        self.turns.append(Turn(role, content, calls, tool_name, tool_call_id, when))

    def extend(self, content: str, calls: tuple[ToolCall, ...]) -> None:
        """Add ``content`` (as a line) and ``calls`` to the last turn, which must exist."""
        last = self.turns[-1]
        merged = "\n".join(t for t in (last.content, content) if t)
        self.turns[-1] = attrs.evolve(last, content=merged, calls=last.calls + calls)

    def tool_call(self, call_id: str, name: str, arguments: str) -> ToolCall:
        """A tool call, its name kept so that its result can be named after it."""
        self.tools[call_id] = name
        return ToolCall(id=call_id, name=name, arguments=arguments)

    def tool_result(self, call_id: str, output: str, when: float | None, tally: Tally, *,
                    empty: str) -> None:
        """Add a tool's output (clipped when long); empty output is counted as ``empty``."""
        text, clipped = importing.clip_tool_output(output)
        if clipped:
            tally.add("tool output clipped")
        if not text.strip():
            tally.add(empty)
            return
        self.add("tool", text, tool_name=self.tools.get(call_id, ""), tool_call_id=call_id,
                 when=when)

    def conversation(self, *, source: str, title: str = "", started: float | None = None,
                     project: bool = True) -> Conversation:
        """The session read; ``project`` adds its folder under its first request.

        The folder is the session's ``project`` either way (a sub-agent works where its
        parent does). It starts at ``started`` when given, else at the earliest time read.
        """
        messages = tuple(Message(session_id=self.id, position=i, role=t.role, content=t.content,
                                 tool_calls=t.calls, tool_name=t.tool_name,
                                 tool_call_id=t.call_id, timestamp=t.when)
                         for i, t in enumerate(self.turns))
        if project and self.cwd:
            messages = with_project(messages, project_note(self.cwd, self.branch))
        session = Session(id=self.id, source=source, model=self.model, title=title,
                          started_at=started if started is not None else min(self.times,
                                                                              default=None),
                          ended_at=max(self.times, default=None), parent_session_id=self.parent,
                          project=self.cwd)
        return Conversation(session, messages)


def project_note(cwd: str, branch: str = "") -> str:
    """The line that makes a session's project folder searchable.

    >>> project_note("/home/me/code/youer-server", "main")
    '[project: /home/me/code/youer-server, git branch: main]'
    """
    extra = f", git branch: {branch}" if branch else ""
    return f"[project: {cwd}{extra}]"


def with_project(messages: Sequence[Message], note: str) -> tuple[Message, ...]:
    """``messages`` with ``note`` added as the last line of the first user message.

    Search covers message text, titles and sources (not the folder), and a plain search
    covers user and assistant messages, so the project folder goes where a default search
    sees it: under the request that opened the session (a session without one is left as
    it is).
    """
    for index, message in enumerate(messages):
        if note and message.role == "user":
            content = f"{message.content}\n\n{note}" if message.content else note
            return (*messages[:index], attrs.evolve(message, content=content),
                    *messages[index + 1:])
    return tuple(messages)


# --- one file -----------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class ParsedFile:
    """The conversations read from one transcript file, and what was left out of it
    (``skipped``: the damaged lines, named; ``skips`` of them in all)."""

    conversations: tuple[Conversation, ...] = ()
    left_out: tuple[tuple[str, int], ...] = ()
    skipped: tuple[Skip, ...] = ()
    skips: int = 0


@attrs.frozen(kw_only=True)
class TranscriptFormat:
    """What one kind of line-oriented transcript folder is, and how to read its files.

    ``read`` gets a file's path under the folder (its layout may name the session and
    its parent), its lines (read lazily) and the tally to count what it leaves out in.
    """

    kind: str
    """The ledger's kind of source, and the source of every session read."""
    what: str
    """What the folder is, for a person (``Codex sessions folder``)."""
    patterns: tuple[str, ...]
    """Globs of the transcript files under the folder."""
    read: Callable[[PurePath, Iterable[Line], Tally], ParsedFile]
    """Reads one file: its path under the folder, its lines, the tally of what is left out."""


def parse_file(form: TranscriptFormat, path: Path, root: Path) -> ParsedFile:
    """Read one transcript file of format ``form`` found under ``root``."""
    tally = Tally()
    numbered = ({**line, LINE_NUMBER: number} for number, line in json_lines(path, tally))
    # Session ids are made of file names: as text a store can keep.
    parsed = form.read(PurePath(path_text(path.relative_to(root))), numbered, tally)
    return attrs.evolve(parsed, skipped=tuple(tally.named), skips=tally.skips)


# --- the folder ---------------------------------------------------------------------------

@attrs.frozen
class TranscriptImporter:
    """Imports every transcript file of ``form`` under the folder ``root``."""

    form: TranscriptFormat
    root: Path

    @property
    def key(self) -> SourceKey:
        """The source: the format's kind and the folder's resolved path."""
        return SourceKey(kind=self.form.kind, location=path_text(self.root))

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan importing the files that changed since ``state`` (all when ``full``).

        No folder, or one that cannot be listed, is a :class:`StoreUnavailable`.
        """
        if not self.root.is_dir():
            return Failure(SourceUnreadable(f"no {self.form.what} at {self.root}"))
        unreadable: list[tuple[str, str]] = []
        try:
            files = find_files(self.root, self.form.patterns, unreadable=unreadable)
        except OSError as error:
            return Failure(SourceUnreadable(f"cannot list {self.root}: "
                                            f"{error.strerror or error}"))
        return plan_files(self.root, files, state, full=full,
                          parse=partial(parse_file, self.form, root=self.root),
                          unreadable=unreadable)


def find_files(root: Path, patterns: Sequence[str], *,
               unreadable: list[tuple[str, str]] | None = None) -> list[str]:
    """Files under ``root`` matching any of the glob ``patterns``, as sorted paths under
    it (``/``-separated).

    One walk of the tree, matched against the patterns at once, with no ``Path`` made per
    file (``pathlib``'s glob walks it per pattern and stats every name: several times
    slower on a sync of an unchanged folder). An unreadable ``root`` raises ``OSError``
    (a glob would find nothing in it); a folder below it that cannot be listed is passed
    over, added to ``unreadable`` with why.

    >>> glob_pattern(("**/rollout-*.jsonl",)).fullmatch("2026/03/rollout-1.jsonl") is not None
    True
    """
    with os.scandir(root):
        pass
    wanted = glob_pattern(patterns)
    found: list[str] = []
    def unlisted(error: OSError) -> None:
        if unreadable is not None:
            unreadable.append((str(error.filename), str(error.strerror or error)))

    for folder, _, names in os.walk(root, onerror=unlisted):
        prefix = os.path.relpath(folder, root)
        prefix = "" if prefix == "." else prefix.replace(os.sep, "/") + "/"
        found.extend(prefix + name for name in names if wanted.fullmatch(prefix + name))
    return sorted(found)


def glob_pattern(patterns: Sequence[str]) -> re.Pattern[str]:
    """One expression matching a relative path (``/``-separated) that any glob matches:
    ``*`` and ``?`` within a name, ``**/`` any number of folders."""
    def one(pattern: str) -> str:
        parts = re.split(r"(\*\*/|\*|\?)", pattern)
        table = {"**/": "(?:[^/]+/)*", "*": "[^/]*", "?": "[^/]"}
        return "".join(table.get(part, re.escape(part)) for part in parts)
    return re.compile("|".join(f"(?:{one(p)})" for p in patterns))


def plan_files(root: Path, files: Sequence[str], state: SourceState, *,
               full: bool, parse: Callable[[Path], ParsedFile],
               unreadable: Sequence[tuple[str, str]] = ()
               ) -> Result[ImportPlan, StoreUnavailable]:
    """Plan importing every file of ``files`` (paths under ``root``, ``/``-separated)
    whose size or mtime changed since ``state``.

    Each file is an item of the ledger (keyed by its path under ``root``); a file that
    cannot be read is counted and left unmarked, so the next import tries it again, and so
    is each folder of ``unreadable`` (a folder that cannot be listed, and why). A
    marked file is ``gone`` only when it no longer exists: one that cannot be seen (in
    a folder that became unreadable) is left as it was, with a note.
    """
    marks = state.marks_by_item()
    changed: list[tuple[Path, str, str, int, tuple[str, ...]]] = []
    unchanged = 0
    seen: set[str] = set()
    base = str(root)
    for name in files:
        item = path_text(name)  # the ledger's key for the file: text a store can keep
        seen.add(item)
        try:
            stat = os.stat(os.path.join(base, name))
        except OSError:
            continue  # vanished between listing and now
        if not S_ISREG(stat.st_mode):
            continue  # a named pipe or a device: opening one can wait for ever
        fingerprint, size = f"{stat.st_size}:{stat.st_mtime_ns}", stat.st_size
        old = marks.get(item)
        # A mark kept before marks named their sessions is read once more, to learn them.
        if (not full and old is not None and old.fingerprint == fingerprint
                and (old.session_ids or not old.sessions)):
            unchanged += old.sessions
            continue
        changed.append((root / name, item, fingerprint, size,
                        old.session_ids if old is not None else ()))
    gone, hidden = missing_files(root, (item for item in marks if item not in seen))
    notes = (f"{hidden} imported file(s) under {root} cannot be seen (an unreadable folder?); "
             "their sessions were kept",) if hidden else ()
    total = sum(size for _, _, _, size, _ in changed)
    owners = SessionOwners.of({item: mark.session_ids for item, mark in marks.items()}, seen)
    return Success(ImportPlan(total=total, units=_file_units(changed, parse, owners,
                                                            unreadable),
                              unchanged=unchanged, gone=gone, notes=notes))


def missing_files(root: Path, items: Iterable[str]) -> tuple[tuple[str, ...], int]:
    """Which of ``items`` (paths under ``root``) no longer exist, and how many cannot be
    told (a folder on the way cannot be read)."""
    gone: list[str] = []
    hidden = 0
    for item in items:
        try:
            (root / item).stat()
        except FileNotFoundError:
            gone.append(item)
            continue
        except OSError:
            pass
        hidden += 1  # present but not found by the listing: its folder cannot be read
    return tuple(gone), hidden


def _file_units(changed: Sequence[tuple[Path, str, str, int, tuple[str, ...]]],
                parse: Callable[[Path], ParsedFile], owners: SessionOwners,
                unreadable: Sequence[tuple[str, str]] = ()) -> Units:
    conversations: list[Conversation] = []
    marks: list[Mark] = []
    tally = Tally()
    for folder, why in unreadable:
        # Its transcripts are not known to be there: damaged input, named (not a failure
        # of the source, whose other folders are imported).
        tally.at(folder)
        tally.skip("unreadable folder", why)
    work = 0
    for path, item, fingerprint, size, before in changed:
        try:
            parsed = parse(path)
        except OSError as error:
            tally.at(str(path))
            tally.skip("unreadable file", str(error.strerror or error))
            work += size
            continue
        tally.merge(parsed.left_out)
        tally.merge_skips(parsed.skipped, parsed.skips)
        tally.at(str(path))
        read = owners.claim(item, parsed.conversations, tally)
        conversations.extend(read)
        torn = any(reason == TORN for reason, _ in parsed.left_out)
        # A session the file held before and no longer yields (its lines damaged since) is
        # kept in the store, so it stays the file's: deleting the file removes it, as it
        # removes the rest (left unnamed, it stayed in the store for good).
        held = tuple(dict.fromkeys((*(c.session.id for c in read), *before)))
        marks.append(Mark(item=item, fingerprint=f"incomplete:{fingerprint}" if torn
                          else fingerprint, sessions=len(parsed.conversations),
                          messages=sum(len(c.messages) for c in parsed.conversations),
                          session_ids=held))
        work += size
        if (sum(len(c.messages) for c in conversations) >= importing.UNIT_MESSAGES
                or len(marks) >= importing.UNIT_ITEMS or work >= importing.UNIT_BYTES):
            yield Success(_unit(conversations, marks, tally, work))
            conversations, marks, tally, work = [], [], Tally(), 0
    if marks or tally.counts or work:
        yield Success(_unit(conversations, marks, tally, work))


def _unit(conversations: Sequence[Conversation], marks: Sequence[Mark], tally: Tally,
          work: int) -> ImportUnit:
    return ImportUnit(conversations=tuple(conversations), marks=tuple(marks),
                      left_out=tally.items(), skipped=tuple(tally.named), skips=tally.skips,
                      work=work)
