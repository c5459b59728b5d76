"""What every importer of foreign transcripts shares: plans, units of work, small readers.

An importer reads one source (a Hermes ``state.db``, a folder of Claude Code or Codex
transcripts) and turns what changed since the last import into
:class:`~harkback.stages.records.Conversation` records. It never writes: its
:meth:`Importer.plan` says how much work there is and yields :class:`ImportUnit` s
lazily; the caller stores each unit's conversations and then keeps its marks in the
:mod:`import ledger <harkback.adapters.stores.import_ledger>`. Whatever an importer leaves
out (rewound rows, unknown line types, unreadable lines ...) is counted with a
reason, never fatal; damaged input (an unreadable line, a time that cannot be right) is
also named where it was, file and line (:meth:`Tally.skip`). What folders of JSON-lines
transcripts share besides is in :mod:`~harkback.adapters.sources.transcripts`.

>>> tally = Tally()
>>> tally.add("unknown line type 'x'"); tally.add("unknown line type 'x'")
>>> tally.items()
(("unknown line type 'x'", 2),)
>>> tally.at("a.jsonl", 7); tally.skip("unreadable line", "invalid JSON")
>>> [(skip.describe(), skip.outcome) for skip in tally.named]
[('a.jsonl:7: unreadable line: invalid JSON', 'skipped')]
>>> iso_epoch("2026-03-03T14:15:00.000Z")
1772547300.0
"""

from __future__ import annotations

import errno
import math
import os
from collections.abc import Callable, Generator, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

import attrs
from returns.result import Result

from harkback.adapters.sources.replays import COPIED_LINE, Cut
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.record_checks import nul_key
from harkback.stages.records import Conversation, is_epoch

TOOL_OUTPUT_LIMIT = 32_000
"""Tool output longer than this is stored as its head and tail (it is shown clipped anyway)."""

TOOL_CLIP_MARKER = "\n...[{} characters of {} not imported]...\n"

UNIT_MESSAGES = 2_000
"""An import unit (one store transaction) holds about this many messages at most."""

UNIT_ITEMS = 100
"""... and at most this many files or sessions ..."""

UNIT_BYTES = 8 * 1024 * 1024
"""... and at most about this many bytes of input: one transaction never holds the write
lock for long, whatever the size of the files."""


MAX_NAMED = 1_000
"""Damaged pieces of input named one by one (per tally, and per import); more are counted."""

Outcome = Literal["skipped", "dropped", "ignored", "repaired", "renamed", "kept"]
"""What became of a piece of damaged input: ``skipped`` (the line or file left out),
``dropped`` (a message left out, its session kept), ``ignored`` (a value left out, the rest
read: a time, tool calls), ``repaired`` (read with bytes that are not UTF-8 replaced),
``renamed`` (a session stored under another id), ``kept`` (read as it is: the last copy of
a repeated session id)."""


@attrs.frozen
class Skip:
    """One piece of damaged input: where it was (file, line), why, and what became of it."""

    file: str
    line: int | None
    reason: str
    outcome: Outcome = "skipped"

    def describe(self) -> str:
        """``file:line: reason`` (``file: reason`` when no line is known)."""
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.reason}"

    def to_payload(self) -> dict[str, object]:
        """The JSON form (``skipped_lines`` of an import's or a sync's report).

        >>> Skip("a.jsonl", 7, "bad line").to_payload()
        {'file': 'a.jsonl', 'line': 7, 'reason': 'bad line', 'outcome': 'skipped'}
        """
        return {"file": self.file, "line": self.line, "reason": self.reason,
                "outcome": self.outcome}


@attrs.define
class Tally:
    """Counts of things left out of an import, by reason (in first-seen order), and the
    damaged input among them named where it was (see :meth:`skip`)."""

    counts: dict[str, int] = attrs.field(factory=dict)
    named: list[Skip] = attrs.field(factory=list)
    skips: int = 0
    file: str = ""
    line: int | None = None

    def add(self, reason: str, count: int = 1) -> None:
        """Count ``count`` more of ``reason``."""
        if count:
            self.counts[reason] = self.counts.get(reason, 0) + count

    def at(self, file: str, line: int | None = None) -> None:
        """Say where reading is now: what is skipped next is named there (a file name's
        byte that is not UTF-8 as ``\\xNN``, as the source's ``location`` names it)."""
        self.file, self.line = path_text(file), line

    def skip(self, kind: str, detail: str = "", outcome: Outcome = "skipped") -> None:
        """Count damaged input of ``kind`` and name it where reading is (see :meth:`at`),
        with what became of it."""
        self.add(kind)
        self.skips += 1
        if len(self.named) < MAX_NAMED:
            self.named.append(Skip(self.file, self.line, f"{kind}: {detail}" if detail
                                   else kind, outcome))

    def merge(self, pairs: Iterable[tuple[str, int]]) -> None:
        """Add every ``(reason, count)`` of ``pairs``."""
        for reason, count in pairs:
            self.add(reason, count)

    def merge_skips(self, named: Iterable[Skip], skips: int) -> None:
        """Take ``skips`` damaged pieces of another tally, ``named`` of them by name."""
        self.skips += skips
        self.named.extend(list(named)[:max(0, MAX_NAMED - len(self.named))])

    def items(self) -> tuple[tuple[str, int], ...]:
        """The counts as ``(reason, count)`` pairs."""
        return tuple(self.counts.items())


def nul_free(conversation: Conversation, tally: Tally) -> Conversation:
    """``conversation`` with each NUL character of its keys and filters (ids, source,
    project: :func:`~harkback.stages.record_checks.nul_key`) made U+FFFD, named in ``tally``.

    Every store refuses such a conversation (SQLite could not read it back by its id), and
    refused, it stopped the whole import; a source's file or row holding one is damaged
    input, read with the character replaced as bytes that are not UTF-8 are.

    >>> from harkback.stages.records import Session
    >>> tally = Tally(file="a.jsonl")
    >>> nul_free(Conversation(Session(id="s", project="/w\\x00")), tally).session.project
    '/w\ufffd'
    >>> [skip.describe() for skip in tally.named]
    ["a.jsonl: NUL character: in project of session 's', made U+FFFD"]
    """
    held = nul_key(conversation)
    if held is None:
        return conversation
    session = conversation.session
    parent = session.parent_session_id
    mended = attrs.evolve(session, id=_nul_free(session.id), source=_nul_free(session.source),
                          project=_nul_free(session.project),
                          parent_session_id=None if parent is None else _nul_free(parent))
    tally.skip("NUL character", f"in {held[0]} of session {session.id!r}, made U+FFFD",
               "renamed" if mended.id != session.id else "repaired")
    return Conversation(mended, tuple(attrs.evolve(
        m, session_id=mended.id, tool_call_id=_nul_free(m.tool_call_id),
        tool_calls=tuple(attrs.evolve(c, id=_nul_free(c.id)) for c in m.tool_calls))
        for m in conversation.messages))


def _nul_free(text: str) -> str:
    return text.replace("\x00", "\ufffd")


def counted(left_out: Iterable[tuple[str, int]]) -> str:
    """What was left out, for people: each reason with its count after it (a reason is a
    phrase of any shape, ``unknown line type 'x'``, ``tool output clipped``, so no plural
    is guessed: "2 archived session" read wrong).

    >>> counted([("archived session", 2), ("unknown line type 'x'", 1)])
    "archived session (2), unknown line type 'x' (1)"
    """
    return ", ".join(f"{reason} ({count})" for reason, count in left_out)


@attrs.frozen
class Claim:
    """A session a transcript file yields that its last mark did not name: a new file, or
    one whose session id another file held (a copy, a file gone). Stored as
    ``session_id`` (its ``read_as`` id, or ``ID@NAME`` when ``owner``, another file of
    the folder, holds that), unless the store holds ``read_as`` otherwise: see
    :mod:`~harkback.pipeline.import_claims`."""

    session_id: str
    read_as: str
    item: str
    path: str
    owner: str = ""


@attrs.frozen
class Replay:
    """A session whose file first copies lines of earlier sessions (``sources``, stored or
    being imported), left out as read; ``whole`` is it read with them kept (a resume's
    file, ``path``). The import compares the copy with what the store holds of them:
    :mod:`~harkback.pipeline.import_replays`."""

    sources: tuple[str, ...]
    whole: Conversation
    path: str = ""
    lines: int = 0
    """How many copied lines reading left out (counted so)."""
    pending: tuple[str, ...] = ()
    """Those of ``sources`` a file this import reads later holds (it stores them itself)."""
    filed: bool = False
    """Whether a file in the folder still holds each of ``sources``: what it says of them
    stands, so a copy that differs is no loss."""
    counted: str = COPIED_LINE
    """What reading counted the ``lines`` left out as."""
    timed: bool = True
    """Whether the copy keeps the times of what it copies (Claude Code's does): else (Codex
    stamps each line it copies as it writes it) it is compared by role, text and order."""


@attrs.frozen(kw_only=True)
class ImportUnit:
    """A piece of an import: conversations to store, then the marks to keep once stored.

    ``left_out`` counts what was not imported, by reason; ``skipped`` names the damaged
    input among it (``skips`` of them, more than named when there were many); ``work``
    is this unit's share of :attr:`ImportPlan.total` (for a progress bar); ``notes`` are
    things a person should know that reading found (as :attr:`ImportPlan.notes`).
    """

    conversations: tuple[Conversation, ...] = ()
    marks: tuple[Mark, ...] = ()
    left_out: tuple[tuple[str, int], ...] = ()
    skipped: tuple[Skip, ...] = ()
    skips: int = 0
    work: int = 0
    notes: tuple[str, ...] = ()
    cut: tuple[tuple[str, tuple[str, ...], Cut], ...] = ()
    """Files read shorter than when last read (a rotation, an older copy restored, damage),
    once read so, or new to the source (:data:`~harkback.adapters.sources.replays.Cut`),
    each with the sessions it holds: their stored messages past the new end are kept
    (:mod:`~harkback.pipeline.import_cut`) unless a ``sync --prune`` reads them."""
    claims: tuple[Claim, ...] = ()
    """Sessions files yield that their last marks did not name (:class:`Claim`)."""
    replays: tuple[Replay, ...] = ()
    """Sessions whose copied first lines were left out (:class:`Replay`)."""


Units = Generator[Result[ImportUnit, StoreUnavailable], None, None]
"""What a plan yields: units, or one failure that ends it. Closing it releases the source."""


def no_units() -> Units:
    """A plan's units when there is nothing to do."""
    yield from ()


@attrs.frozen(kw_only=True, eq=False)
class ImportPlan:
    """What an import will do: the units (read lazily), and what it found unchanged.

    ``cursor`` is kept in the ledger once every unit is stored (None keeps the old
    one); ``unchanged`` counts sessions skipped because nothing changed since the last
    import; ``notes`` are things a person should know (read one by one, not counted).
    ``gone`` names the marked items no longer at the source (a file deleted or moved, a
    row deleted): a sync keeps their sessions unless told to prune. ``withdrawn`` names
    those the source still holds but asks to leave out (Hermes' hidden and archived
    sessions): a sync removes their sessions. A failing unit ends the iteration.
    ``took`` hears how many seconds each unit's write held the store (an importer may
    size its next units by it).
    """

    total: int
    units: Units
    unchanged: int = 0
    cursor: str | None = None
    notes: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    withdrawn: tuple[str, ...] = ()
    took: Callable[[float], None] = lambda _seconds: None


class Importer(Protocol):
    """Reads one source of transcripts into conversations; never writes to it.

    ``plan`` and the units it yields do blocking I/O; call them all from one thread.
    """

    @property
    def key(self) -> SourceKey:
        """The source: its kind and resolved location."""
        ...

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan the import of what changed since ``state`` (everything when ``full``)."""
        ...


def iso_epoch(value: object, tally: Tally | None = None) -> float | None:
    """Epoch seconds of an ISO 8601 string or a number of seconds (None when unknown).

    Every importer reads times through this one helper. A time a date cannot be made
    of (outside the years 1 to 9999: a millisecond epoch, say) is unknown too, and
    counted in ``tally`` as ``time out of range``; the store would refuse it.

    >>> iso_epoch("2026-03-03T14:15:00+00:00"), iso_epoch(12.5), iso_epoch("soon")
    (1772547300.0, 12.5, None)
    >>> tally = Tally()
    >>> iso_epoch(1.7e12, tally), tally.items()
    (None, (('time out of range', 1),))
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            seconds = float(value)
        except OverflowError:  # an int too large for a float
            seconds = math.inf
    elif isinstance(value, str) and value.strip():
        try:
            parsed = datetime.fromisoformat(value.strip())
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            seconds = parsed.timestamp()
        except (ValueError, OverflowError):
            return None
    else:
        return None
    if is_epoch(seconds):
        return seconds
    if tally is not None:
        tally.add("time out of range")
    return None


def clip_tool_output(text: str, limit: int = TOOL_OUTPUT_LIMIT, *,
                     what: str = "tool output") -> tuple[str, bool]:
    """Keep the head and tail of tool output (or ``what`` else: a tool call's arguments)
    longer than ``limit``; say whether it was cut.

    >>> clip_tool_output("a" * 10 + "b" * 10, 8)[0].startswith("aaaa\\n...[12 characters")
    True
    """
    if len(text) <= limit:
        return text, False
    half = limit // 2
    return (text[:half] + TOOL_CLIP_MARKER.format(len(text) - 2 * half, what) + text[-half:],
            True)


def clip_arguments(arguments: str, tally: Tally) -> str:
    """A tool call's ``arguments`` clipped as tool output is (a ``Write`` of a 5 MB file was
    stored, and indexed, whole), counted in ``tally``.

    >>> tally = Tally()
    >>> len(clip_arguments("x" * 100_000, tally)) < 33_000, tally.items()
    (True, (('tool call arguments clipped', 1),))
    """
    text, clipped = clip_tool_output(arguments, what="tool call arguments")
    if clipped:
        tally.add("tool call arguments clipped")
    return text


def file_fingerprint(path: Path) -> str:
    """Size and modification time of a file: it changes whenever the file is rewritten."""
    stat = path.stat()
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def path_text(path: str | os.PathLike[str]) -> str:
    """``path`` as text a store can keep: a byte of a file name that is not UTF-8 (Python
    holds it as a lone surrogate, which no store can encode) as ``\\xNN``.

    >>> path_text(os.fsdecode(b"/tmp/caf\\xe9.jsonl"))
    '/tmp/caf\\\\xe9.jsonl'
    """
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def resolved(path: Path) -> Path:
    """``path`` with ``~`` expanded, made absolute and free of symlinks; a symlink loop is
    ``OSError`` (``ELOOP``), as the other ways a path cannot be used are."""
    try:
        return Path(os.path.expanduser(path)).resolve()
    except RuntimeError as loop:  # how Python before 3.13 reports a loop
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path)) from loop
