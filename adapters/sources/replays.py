"""Lines a transcript replays from an earlier session: left out when that session is stored.

Claude Code's ``--resume``/``--continue`` (in versions that start a new file) and its forks
(``--fork-session``, ``/branch``) write a NEW session file that first copies the earlier
session's lines, then goes on. A copied line says so: it keeps the earlier session's
``sessionId``, or (forks) carries ``forkedFrom: {sessionId, messageUuid}``. Stored whole,
the earlier conversation was stored twice: a search found two look-alike sessions.

A copied line whose source session is *known* (an earlier import holds it, or a file of the
folder being imported names it) is left out, and the session is stored as a continuation
of its source (its parent), holding only its own messages; resolve traces a hit in it to
the session the user remembers. A source not known (its file deleted before it was ever
imported) keeps its lines: nothing is lost. What was decided is kept in the file's mark
(:func:`marked`), so a sync reads the file again once it no longer holds (:func:`holds`):
the source's file appeared, or its sessions left the store. In whichever order the files
come, the store ends the same.

>>> replayed = Replayed()
>>> replayed.leaves_out("p1", {"p1"}), replayed.leaves_out("p2", set()), replayed.parent
(True, False, 'p1')
>>> mark = marked("10:5", replayed.lineage())
>>> mark
'10:5|{"after": ["p1"], "awaits": ["p2"]}'
>>> holds(mark, "10:5", {"p1"}), holds(mark, "10:5", {"p1", "p2"}), holds("10:5", "10:5", ())
(True, False, True)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Container, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import attrs

from harkback.stages.imports import Mark

COPIED_LINE = "line copied from an earlier session (stored there)"
"""What a transcript line a resume or fork copied from a known session is counted as."""
COPIED = "message copied from an earlier session (stored there)"
"""What a copied message is counted as once found stored there (a Codex fork's, read as
messages; a Claude Code resume's, once compared with the store)."""

SEPARATOR = "|"
"""Between a file's fingerprint and what was decided about its replayed lines (a
fingerprint is ``SIZE:MTIME``, perhaps after ``incomplete:``: never this character)."""


@attrs.define
class Replayed:
    """The sources of the replayed lines of one file, as it is read."""

    after: dict[str, None] = attrs.field(factory=dict)
    """Sources whose lines were left out (known), in the order first met."""
    awaits: dict[str, None] = attrs.field(factory=dict)
    """Sources whose lines were kept (not known yet)."""
    parent: str | None = None
    """The source of the last line left out: the session this one continues."""

    def leaves_out(self, source: str, known: Container[str]) -> bool:
        """Whether a line replayed from ``source`` is left out (``source`` is ``known``)."""
        if source in known:
            self.after[source] = None
            self.parent = source
            return True
        self.awaits[source] = None
        return False

    def lineage(self) -> str:
        """What was decided, as the mark keeps it (empty: the file replays nothing)."""
        decided = self.decided()
        return json.dumps(decided, ensure_ascii=False) if decided else ""

    def decided(self) -> dict[str, list[str]]:
        """What was decided, as a mapping (empty: the file replays nothing)."""
        if not (self.after or self.awaits):
            return {}
        return {"after": list(self.after), "awaits": list(self.awaits)}


def marked(fingerprint: str, lineage: str) -> str:
    """A file's mark: its ``fingerprint``, and the ``lineage`` decided when it was read."""
    return f"{fingerprint}{SEPARATOR}{lineage}" if lineage else fingerprint


def fingerprint_of(mark: str) -> str:
    """The fingerprint part of a file's mark.

    >>> fingerprint_of('incomplete:10:5|{"after": ["p"], "awaits": []}')
    'incomplete:10:5'
    """
    return mark.partition(SEPARATOR)[0]


def with_cut(lineage: str) -> str:
    """``lineage`` (a file's, perhaps empty) saying the file was once read shorter than
    before: its sessions keep their stored messages past its end while it is read again.

    >>> with_cut(""), with_cut('{"after": ["p"]}')
    ('{"cut": true}', '{"after": ["p"], "cut": true}')
    """
    return json.dumps({**lineage_of(f"{SEPARATOR}{lineage}"), "cut": True},
                      ensure_ascii=False)


Cut = Literal["shorter", "rewritten", "once", "new"]
"""Why a file read keeps its sessions' stored messages past its end: ``shorter`` than when
last read (named, and its mark says so from then on), ``rewritten`` (not shorter, but the
bytes read last time are not there any more: named, and as ``shorter`` from then on),
``once`` read shorter (its mark says so: kept unsaid), ``new`` to the source (its sessions
may be stored longer from another path or a newer copy: named if so)."""


def cut_files(files: Iterable[tuple[str, int, Path]], marks: Mapping[str, Mark]
              ) -> dict[str, Cut]:
    """Which of ``files`` (item, size now, path) may hold less than the store, and why
    (:data:`Cut`; agents only append: one shorter than when last read, or whose first bytes
    or last bytes read then changed, is damaged, rotated or an older copy put back; one not
    read before may be an older copy, a backup imported to recover).

    >>> marks = {"a": Mark(item="a", fingerprint="9:1"),
    ...          "b": Mark(item="b", fingerprint='3:1|{"cut": true}'),
    ...          "d": Mark(item="d", fingerprint="3:1")}
    >>> cut_files([("a", 5, Path()), ("b", 7, Path()), ("c", 1, Path()), ("d", 4, Path())],
    ...           marks)
    {'a': 'shorter', 'b': 'once', 'c': 'new'}
    """
    found: dict[str, Cut] = {}
    for item, size, path in files:
        mark = marks.get(item)
        lineage = lineage_of(mark.fingerprint) if mark is not None else {}
        before = size_in(mark.fingerprint) or 0 if mark is not None else 0
        if mark is None:
            found[item] = "new"
        elif size < before:
            found[item] = "shorter"
        elif lineage.get("seen") and lineage["seen"] != seen(path, before):
            found[item] = "rewritten"
        elif lineage.get("cut") is True:
            found[item] = "once"
    return found


SEEN = 4096
"""How many bytes at each end of what was read the mark keeps a digest of (:func:`seen`)."""


def seen(path: Path, size: int) -> str:
    """A digest of the first and the last :data:`SEEN` bytes of the first ``size`` bytes of
    ``path``: an appended file keeps it, a file rewritten (an older copy put back, then
    written on past its old size) almost never does ("" when it cannot be read).

    >>> import tempfile; folder = Path(tempfile.mkdtemp()); (folder / "t").write_bytes(b"ab")
    2
    >>> seen(folder / "t", 2) == seen(folder / "t", 2) != seen(folder / "t", 1)
    True
    """
    try:
        with path.open("rb") as file:
            head = file.read(min(size, SEEN))
            file.seek(max(0, size - SEEN))
            tail = file.read(min(size, SEEN))
    except OSError:
        return ""
    return (hashlib.blake2b(head, digest_size=8).hexdigest()
            + hashlib.blake2b(tail, digest_size=8).hexdigest())


def read_lineage(lineage: str, why: Cut | None, path: Path, size: int) -> str:
    """What a file's mark keeps beside its fingerprint once read at ``size``: ``lineage``
    (what was decided about its replayed lines), that it was cut (``why`` is not ``new``:
    :func:`with_cut`) and what :func:`seen` its bytes then (not for a ``.json`` file: one
    JSON document, written whole at each save).

    >>> read_lineage("", None, Path("/nowhere"), 0), read_lineage("", None, Path("a.json"), 0)
    ('{"seen": ""}', '')
    """
    decided = json.loads(with_cut(lineage)) if why not in (None, "new") else lineage_of(
        f"{SEPARATOR}{lineage}")
    if path.suffix != ".json":
        decided["seen"] = seen(path, size)
    return json.dumps(decided, ensure_ascii=False) if decided else ""


def lineage_of(mark: str) -> dict[str, object]:
    """What a file's mark keeps beside its fingerprint, as a mapping (empty: nothing, or
    nothing that can be read).

    >>> lineage_of('10:5|{"cut": true}'), lineage_of("10:5"), lineage_of("10:5|?")
    ({'cut': True}, {}, {})
    """
    try:
        decided = json.loads(mark.partition(SEPARATOR)[2] or "{}")
    except ValueError:
        return {}
    return decided if isinstance(decided, dict) else {}


def size_in(mark: str) -> int | None:
    """The size in bytes a file had when marked ``mark`` (None: a mark of another form).

    >>> size_in('incomplete:10:5|{"after": ["p"]}'), size_in("gone:7:1"), size_in("x")
    (10, 7, None)
    """
    size = fingerprint_of(mark).removeprefix("gone:").removeprefix("incomplete:")
    head = size.partition(":")[0]
    return int(head) if head.isdigit() else None


def holds(mark: str, fingerprint: str, stored: Container[str],
          known: Container[str] | None = None) -> bool:
    """Whether a file marked ``mark`` and now of ``fingerprint`` would be read the same:
    unchanged, every source it left out still ``stored``, and none it kept ``known``
    (stored or being imported; ``stored`` when not given). A source only being imported
    may yet fail to be read, so what was left out needs it stored. A lineage that cannot
    be read does not hold (the file is read again).

    >>> holds('10:5|{"after": ["p"]}', "10:5", set()), holds("10:5|?", "10:5", set())
    (False, False)
    """
    if mark == fingerprint:
        return True
    base, _, lineage = mark.partition(SEPARATOR)
    if base != fingerprint or not lineage:
        return False
    try:
        decided = json.loads(lineage)
    except ValueError:
        return False
    if not isinstance(decided, dict):
        return False
    after, awaits = decided.get("after", []), decided.get("awaits", [])
    if not (isinstance(after, list) and isinstance(awaits, list)):
        return False
    arriving = stored if known is None else known
    return all(s in stored for s in after) and not any(s in arriving for s in awaits)


@attrs.define
class Known:
    """The sessions a replayed line's source may be found in: those the import ledger holds
    (every file's, a file gone too: its sessions stay until a sync removes them), and
    those the ``files`` about to be read name, not imported yet (this sync imports them;
    once it has, their marks say what they hold). Worked out on first use: a sync of a folder whose
    files replay nothing never does.

    >>> marks = {"a.jsonl": Mark(item="a.jsonl", fingerprint="1:1", session_ids=("a",)),
    ...          "e.jsonl": Mark(item="e.jsonl", fingerprint="1:1")}
    >>> known = Known(marks, ["a.jsonl", "b.jsonl", "e.jsonl"], names=lambda f: f[:-6])
    >>> "a" in known, "b" in known, "e" in known
    (True, True, False)
    """

    marks: Mapping[str, Mark]
    files: Sequence[str]
    names: Callable[[str], str] | None = None
    """The session id a file's path names ("" if none)."""
    _ids: Collection[str] | None = None

    def __contains__(self, session_id: object) -> bool:
        if self._ids is None:
            ids = {sid for mark in self.marks.values() for sid in mark.session_ids}
            if self.names is not None:
                ids.update(filter(None, (self.names(item) for item in self.files
                                         if item not in self.marks)))
            self._ids = ids
        return session_id in self._ids


@attrs.define
class Ahead:
    """The sessions the files an import has not read yet hold (as their marks name them, or
    their paths): a resume read before the file of the session it copies (listed later, in
    a later unit) finds the store holding that session as it was, short of what its file
    holds now, and that file stores those messages itself.

    >>> ahead = Ahead.of([("a.jsonl", ("a",)), ("b.jsonl", ())], names=lambda f: f[:-6])
    >>> ahead.passed("a.jsonl", ("a",)); ahead.among(["a", "b", "c"])
    ('b',)
    """

    counts: dict[str, int]
    names: Callable[[str], str] | None = None

    @classmethod
    def of(cls, files: Iterable[tuple[str, Sequence[str]]],
           names: Callable[[str], str] | None = None) -> Ahead:
        """The sessions ``files`` (item, ids its mark names) hold, none read yet."""
        ahead = cls({}, names)
        for item, ids in files:
            for session_id in ahead._ids(item, ids):
                ahead.counts[session_id] = ahead.counts.get(session_id, 0) + 1
        return ahead

    def passed(self, item: str, ids: Sequence[str]) -> None:
        """The file ``item`` (its mark naming ``ids``) read: no longer ahead."""
        for session_id in self._ids(item, ids):
            self.counts[session_id] -= 1

    def among(self, sources: Iterable[str]) -> tuple[str, ...]:
        """Those of ``sources`` a file not read yet holds."""
        return tuple(s for s in sources if self.counts.get(s, 0) > 0)

    def _ids(self, item: str, ids: Sequence[str]) -> set[str]:
        return {*ids, self.names(item)} - {""} if self.names is not None else set(ids)
