"""The ingest format (one session per JSON line) as a source: its lines read, what cannot be
read whole named ``file:line`` and skipped, and :class:`JsonlImporter` for the import
machinery, which ``harkback ingest`` and ``import jsonl`` both run
(:func:`~harkback.pipeline.importing.ingest_file`).

Sessions are stored in batches cut by count, bytes and time (see
:mod:`~harkback.stages.batching`), each its own transaction, so a large file commits in
steps and other writers get their turn between them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources.encodings import NAMES, NOT_UTF8, open_text, replaced, undecoded
from harkback.adapters.sources.importing import (
    ImportPlan,
    ImportUnit,
    Outcome,
    Tally,
    Units,
    file_fingerprint,
    no_units,
    path_text,
)
from harkback.stages.batching import Budget, batched
from harkback.stages.errors import BadRecord, SourceUnreadable, StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.ingest_format import read_line
from harkback.stages.records import Conversation

T = TypeVar("T")

_NOT_JSON_LINES = (
    (b"SQLite format 3\x00", "a SQLite database (a Hermes state.db is read by: harkback "
                             "import hermes PATH)"),
    (b"\x1f\x8b", "gzip-compressed: decompress it first (gunzip -k FILE)"),
    (b"BZh", "bzip2-compressed: decompress it first (bunzip2 -k FILE)"),
    (b"\xfd7zXZ\x00", "xz-compressed: decompress it first (unxz -k FILE)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed: decompress it first (unzstd FILE)"),
    (b"PK\x03\x04", "a zip archive: unpack it first"))
"""Files often given for a JSON-lines one, by their first bytes: read as text, each was
lines of undecodable bytes (named as damage, with a hint of Latin-1) and an empty store."""


def not_json_lines(head: bytes) -> str | None:
    """What a file starting with ``head`` is instead of JSON lines (None: it may be them).

    >>> not_json_lines(b"\\x1f\\x8b\\x08\\x00"), not_json_lines(b'{"id": "s1"')
    ('gzip-compressed: decompress it first (gunzip -k FILE)', None)
    """
    return next((what for magic, what in _NOT_JSON_LINES if head.startswith(magic)), None)


_CLAUDE_CODE = ("a Claude Code transcript: harkback import claude-code [DIR] reads them "
                "(DIR: the projects folder, ~/.claude/projects by default)")
_CODEX = ("a Codex rollout: harkback import codex [DIR] reads them (DIR: the sessions "
          "folder, ~/.codex/sessions by default)")
_CODEX_TYPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context"})
_CLAUDE_CODE_TYPES = frozenset({"summary", "file-history-snapshot", "queue-operation",
                                "custom-title", "ai-title"})
_ARRAY = ("a JSON array: write each session on a line of its own "
          "(jq -c '.[]' FILE > sessions.jsonl)")
_DOCUMENT = ("a JSON document over several lines: write each session on a line of its own "
             "(jq -c)")
_FIRST_LINE_BYTES = 1 << 20
"""How much of a file is read to know its first line (a longer first line: not known)."""


def other_format(head: bytes) -> str | None:
    """What a file starting with ``head`` is instead of the ingest format, one session a
    line (None: it may be that): another agent's transcript, or one JSON document.

    Each named every line ("id: expected a non-empty string, got None", "session:
    expected a JSON object, got a list"), stored nothing and ended with status 3.

    >>> other_format(b'{"type": "user", "sessionId": "9f", "message": {}}\\n')[:31]
    'a Claude Code transcript: harkb'
    >>> other_format(b'{"type": "session_meta", "payload": {}}')[:15], other_format(b'{"id": "s"}')
    ('a Codex rollout', None)
    >>> other_format(b'[{"id": "a"}, {"id": "b"}]')[:12], other_format(b'{\\n  "id": "a"\\n}')[:15]
    ('a JSON array', 'a JSON document')
    """
    lines = head.removeprefix(b"\xef\xbb\xbf").splitlines(keepends=True)
    first = next((line for line in lines if line.strip()), b"")
    if first.lstrip().startswith(b"["):  # no session is an array, however long the line
        return _ARRAY
    if first.strip() == b"{":
        return _DOCUMENT
    if not first.endswith(b"\n") and len(head) >= _FIRST_LINE_BYTES:
        return None  # cut: the rest of the line is past what was read
    try:
        line = json.loads(first)
    except (ValueError, RecursionError):
        return None
    if not isinstance(line, dict) or "id" in line:
        return None
    kind = line.get("type")
    if "sessionId" in line or "leafUuid" in line or kind in _CLAUDE_CODE_TYPES:
        return _CLAUDE_CODE
    return _CODEX if kind in _CODEX_TYPES and "payload" in line else None


def read_conversations(lines: Iterable[str], on_bad: Callable[[BadRecord], None]
                       ) -> Iterable[tuple[int, Conversation]]:
    """Parse numbered lines (1-based) with their sizes in bytes; blank lines skip.

    What cannot be read is passed to ``on_bad``: a line that is no session; a message
    dropped or a time ignored in a session kept (see
    :func:`~harkback.stages.ingest_format.read_line`); a session id seen on an earlier
    line (the last copy is kept, as the store keeps it).

    >>> bad = []
    >>> rows = list(read_conversations(['{"id": "a"}', '{"id": "a"}'], bad.append))
    >>> len(rows), bad[0].message()
    (2, "line 2: duplicate session id 'a' (also on line 1; the last copy is kept)")
    """
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parsed = read_line(line, number)
        if isinstance(parsed, Failure):
            on_bad(parsed.failure())
            continue
        read = parsed.unwrap()
        for dropped in read.dropped:
            on_bad(dropped)
        session_id = read.conversation.session.id
        if session_id in seen:
            on_bad(BadRecord(f"duplicate session id {session_id!r} (also on line "
                             f"{seen[session_id]}; the last copy is kept)", number))
        seen[session_id] = number
        yield len(line.encode("utf-8", "surrogatepass")), read.conversation


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last one shorter), read lazily.

    >>> list(chunked(range(5), 2))
    [[0, 1], [2, 3], [4]]
    """
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


@attrs.frozen
class JsonlImporter:
    """An ingest-format file (one session per JSON line) as an import source.

    A file whose size and mtime did not change since its last import is skipped;
    otherwise it is read whole (the store rewrites only what differs). Bad lines, dropped
    messages, ignored times and repeated session ids are counted and named (see
    :func:`read_conversations`).
    """

    path: Path

    @property
    def key(self) -> SourceKey:
        """The source: kind ``jsonl`` and the file's resolved path."""
        return SourceKey(kind="jsonl", location=path_text(self.path))

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan reading the file, unless it is unchanged since ``state``."""
        try:
            fingerprint = file_fingerprint(self.path)
            size = self.path.stat().st_size
            with self.path.open("rb") as raw:
                head = raw.read(_FIRST_LINE_BYTES)
            instead = not_json_lines(head[:16])
            agent = other_format(head) if instead is None else None
        except OSError as error:
            return Failure(SourceUnreadable(
                f"cannot read {self.path}: {error.strerror or error}"))
        if instead is not None:
            return Failure(SourceUnreadable(f"{self.path} is not JSON lines but {instead}"))
        if agent is not None:
            return Failure(SourceUnreadable(
                f"{self.path} is not the ingest format (a session a line) but {agent}"))
        old = state.marks_by_item().get(path_text(self.path.name))
        if not full and old is not None and old.fingerprint == fingerprint:
            return Success(ImportPlan(total=0, units=no_units(), unchanged=old.sessions))
        budget = Budget()
        return Success(ImportPlan(total=size, units=self._units(fingerprint, budget),
                                  took=budget.took))

    def _units(self, fingerprint: str, budget: Budget) -> Units:
        tally = Tally()
        sessions = messages = 0
        lines_undecoded = bytes_undecoded = 0

        def bad(error: BadRecord) -> None:
            tally.at(str(self.path), error.line)
            tally.skip(*_damage(error))

        def decoded(handle: Iterable[str]) -> Iterator[str]:
            nonlocal lines_undecoded, bytes_undecoded
            for number, line in enumerate(handle, start=1):
                text, count = undecoded(line)
                if count:
                    # Named and counted, never silently replaced: the text is not what
                    # the file meant (a Latin-1 file, most likely).
                    lines_undecoded, bytes_undecoded = lines_undecoded + 1, bytes_undecoded + count
                    tally.at(str(self.path), number)
                    tally.skip(NOT_UTF8, replaced(count), "repaired")
                yield text

        read = 0  # bytes of the file that units have accounted for (progress)
        try:
            handle, codec = open_text(self.path)  # UTF-8 (a byte order mark too), UTF-16/32
            with handle:
                # Each session with where the file has been read to: the progress counts
                # bytes of the file, not of UTF-8 (half a UTF-16 file's), within a chunk.
                sized = ((size, (handle.buffer.tell(), c))
                         for size, c in read_conversations(decoded(handle), bad))
                for batch in batched(sized, budget):
                    upto = batch[-1][0]
                    yield Success(self._unit(batch, tally, upto - read))
                    read = upto
                    sessions += len(batch)
                    messages += sum(len(c.messages) for _, c in batch)
                    tally = Tally()
                rest = handle.buffer.tell() - read  # after the last session: blank, bad lines
        except OSError as error:
            yield Failure(SourceUnreadable(f"cannot read {self.path}: {error}"))
            return
        notes = [f"{self.path} is {NAMES[codec]}, not UTF-8; read as {NAMES[codec]}"
                 ] if codec in NAMES else []
        if bytes_undecoded:
            notes.append(f"{bytes_undecoded} byte(s) on {lines_undecoded} line(s) are not "
                         f"{NAMES.get(codec, 'UTF-8')} and were replaced by U+FFFD (a Latin-1 "
                         "file? convert it first: iconv -f latin1 -t utf-8)")
        # The file's mark is kept once all of it is stored.
        mark = Mark(item=path_text(self.path.name), fingerprint=fingerprint, sessions=sessions,
                    messages=messages)
        yield Success(ImportUnit(marks=(mark,), left_out=tally.items(),
                                 skipped=tuple(tally.named), skips=tally.skips,
                                 notes=tuple(notes), work=rest))

    @staticmethod
    def _unit(batch: Sequence[tuple[int, Conversation]], tally: Tally, work: int
              ) -> ImportUnit:
        return ImportUnit(conversations=tuple(c for _, c in batch), left_out=tally.items(),
                          skipped=tuple(tally.named), skips=tally.skips, work=work)


def _damage(error: BadRecord) -> tuple[str, str, Outcome]:
    """What kind of damage a bad record of the ingest format is (to count it by), what is
    left of its reason to say, and what became of it.

    >>> _damage(BadRecord("messages[2].role: expected ... (message dropped)", 4))
    ('message dropped', 'messages[2].role: expected ...', 'dropped')
    """
    kinds: tuple[tuple[str, Outcome], ...] = (("message dropped", "dropped"),
                                              ("time ignored", "ignored"),
                                              ("parent ignored", "ignored"))
    for kind, outcome in kinds:
        if error.reason.endswith(f" ({kind})"):
            return kind, error.reason.removesuffix(f" ({kind})"), outcome
    if error.reason.startswith("duplicate session id"):
        return ("duplicate session id", error.reason.removeprefix("duplicate session id "),
                "kept")
    return "bad line", error.reason, "skipped"
