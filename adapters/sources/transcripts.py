"""The importer base for line-oriented transcripts: folders of JSON-lines session files.

Claude Code and Codex (and any format like them) write one JSON-lines file per
session under a folder. What they share is here: :class:`TranscriptImporter` finds
the files (under the folder, and under folders read with it: Codex's archive), re-reads
only those whose size or mtime changed since the last import
(each file is an item of the import ledger, keyed by its path under the folder) and
reads their lines (:mod:`~harkback.adapters.sources.transcript_lines`), naming an unreadable
one instead of failing; a :class:`~harkback.adapters.sources.transcript_session.Transcript`
gathers one session's turns as a format reads them. A :class:`TranscriptFormat`
supplies only what differs: where its files live and how its lines become messages,
session metadata and links.

The folder is walked by :mod:`~harkback.adapters.sources.transcript_walk`.

>>> placed(Path("/c/sessions"), "../archived_sessions/r.jsonl")
'/c/archived_sessions/r.jsonl'
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from pathlib import Path, PurePath
from stat import S_ISREG

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources import importing
from harkback.adapters.sources.importing import (
    Claim,
    ImportPlan,
    ImportUnit,
    Replay,
    Skip,
    Tally,
    Units,
    path_text,
)
from harkback.adapters.sources.replays import (
    Ahead,
    Cut,
    Known,
    cut_files,
    fingerprint_of,
    holds,
    marked,
    read_lineage,
)
from harkback.adapters.sources.session_owners import SessionOwners, renamed
from harkback.adapters.sources.summary_titles import NO_NAMES, Named, gather, stale
from harkback.adapters.sources.transcript_lines import (
    LINE_NUMBER,
    TORN,
    Line,
    json_document,
    json_lines,
    last_line,
)
from harkback.adapters.sources.transcript_walk import find_files
from harkback.stages.errors import SourceUnreadable, StoreUnavailable
from harkback.stages.imports import Mark, SourceKey, SourceState
from harkback.stages.records import Conversation

# --- one file -----------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class ParsedFile:
    """The conversations read from one transcript file, and what was left out of it
    (``skipped``: the damaged lines, named; ``skips`` of them in all)."""

    conversations: tuple[Conversation, ...] = ()
    left_out: tuple[tuple[str, int], ...] = ()
    skipped: tuple[Skip, ...] = ()
    skips: int = 0
    lineage: str = ""
    """What was decided about lines the file replays from other sessions
    (:mod:`~harkback.adapters.sources.replays`); kept in the file's mark."""
    replays: tuple[Replay, ...] = ()
    """Its sessions whose copied lines were left out, read whole (:class:`Replay`)."""


@attrs.frozen(kw_only=True)
class TranscriptFormat:
    """What one kind of line-oriented transcript folder is, and how to read its files.

    ``read`` gets a file's path under the folder (its layout may name the session and
    its parent), its lines (read lazily), the tally to count what it leaves out in, and
    the sessions known to be stored or being imported (a line replayed from one of them
    is left out: :mod:`~harkback.adapters.sources.replays`).
    """

    kind: str
    """The ledger's kind of source, and the source of every session read."""
    what: str
    """What the folder is, for a person (``Codex sessions folder``)."""
    patterns: tuple[str, ...]
    """Globs of the transcript files under the folder."""
    read: Callable[[PurePath, Iterable[Line], Tally, Container[str], Named], ParsedFile]
    """Reads one file: its path under the folder, its lines, the tally of what is left out,
    the known sessions, the summaries of the folder's files."""
    unpack: Callable[[object, Tally], list[Line]] | None = None
    """The lines :attr:`read` reads of a file that holds one JSON document (``*.json``),
    from that document (None: the format writes none)."""
    names: Callable[[str], str] | None = None
    """The session id a file's path under the folder names ("" if none): a file replaying
    that session knows it is being imported before its file is read."""
    summaries: Callable[[Path], list[tuple[str, str]]] | None = None
    """The ``(leaf, text)`` summaries a file holds, read before any file is (None: the format
    writes none): they may title another file's session
    (:mod:`~harkback.adapters.sources.summary_titles`)."""


def parse_file(form: TranscriptFormat, path: Path, root: Path,
               known: Container[str] = frozenset(), named: Named = NO_NAMES) -> ParsedFile:
    """Read one transcript file of format ``form`` found under ``root``; ``known`` are the
    sessions stored or being imported (lines it replays from them are left out), ``named``
    the summaries of the folder's files."""
    tally = Tally()
    numbered: Iterable[Line]
    if form.unpack is not None and path.suffix == ".json":
        tally.at(str(path))
        document = json_document(path, tally)
        numbered = form.unpack(document, tally) if document is not None else ()
    else:
        numbered = ({**line, LINE_NUMBER: number} for number, line in json_lines(path, tally))
    # Session ids are made of file names: as text a store can keep. A file of a folder
    # beside the root (Codex's archive) is named from the root: ``../archived_sessions/x``.
    parsed = form.read(PurePath(path_text(os.path.relpath(path, root))), numbered, tally,
                       known, named)
    return attrs.evolve(parsed, skipped=tuple(tally.named), skips=tally.skips)


# --- the folder ---------------------------------------------------------------------------

@attrs.frozen
class TranscriptImporter:
    """Imports every transcript file of ``form`` under the folder ``root``, and under each
    folder ``beside`` it that is there (Codex's ``archived_sessions``)."""

    form: TranscriptFormat
    root: Path
    beside: tuple[Path, ...] = ()
    """Folders read as part of this source: a file the agent moves from the root to one
    of them (archiving it) is the same file moved, not one deleted and one new. Their
    files are items named from the root (``../archived_sessions/x.jsonl``)."""

    @property
    def key(self) -> SourceKey:
        """The source: the format's kind and the folder's resolved path."""
        return SourceKey(kind=self.form.kind, location=path_text(self.root))

    @property
    def folders(self) -> tuple[Path, ...]:
        """Every folder this source reads: the root, then those beside it."""
        return (self.root, *self.beside)

    def plan(self, state: SourceState, *, full: bool) -> Result[ImportPlan, StoreUnavailable]:
        """Plan importing the files that changed since ``state`` (all when ``full``).

        No folder at all, or a root that cannot be listed, is a :class:`StoreUnavailable`;
        a folder beside it that cannot be listed is named, like a folder under it.
        """
        if not any(folder.is_dir() for folder in self.folders):
            return Failure(SourceUnreadable(f"no {self.form.what} at {self.root}"))
        unreadable: list[tuple[str, str]] = []
        files: list[str] = []
        for folder in self.folders:
            if folder != self.root and not folder.is_dir():
                if os.path.lexists(folder):  # a link to nothing, a loop of links, a file
                    unreadable.append((str(folder), "not a folder that can be read"))
                continue  # else no archive yet: nothing archived
            try:
                found = find_files(folder, self.form.patterns, unreadable=unreadable)
            except FileNotFoundError:
                continue  # a root gone with its archive there: its files are gone
            except OSError as error:
                if folder == self.root:
                    return Failure(SourceUnreadable(f"cannot list {self.root}: "
                                                    f"{error.strerror or error}"))
                unreadable.append((str(folder), str(error.strerror or error)))
                continue
            prefix = "" if folder == self.root else f"{os.path.relpath(folder, self.root)}/"
            files += [prefix + name for name in found]
        return plan_files(self.root, files, state, full=full,
                          parse=lambda path, known, named: parse_file(
                              self.form, path, self.root, known, named),
                          unreadable=unreadable, names=self.form.names,
                          summaries=self.form.summaries)


def plan_files(root: Path, files: Sequence[str], state: SourceState, *,
               full: bool, parse: Callable[[Path, Container[str], Named], ParsedFile],
               unreadable: Sequence[tuple[str, str]] = (),
               names: Callable[[str], str] | None = None,
               summaries: Callable[[Path], list[tuple[str, str]]] | None = None
               ) -> Result[ImportPlan, StoreUnavailable]:
    """Plan importing every file of ``files`` (paths under ``root``, ``/``-separated)
    whose size or mtime changed since ``state``.

    Each file is an item of the ledger (keyed by its path under ``root``); a file that
    cannot be read is counted and left unmarked, so the next import tries it again, and so
    is each folder of ``unreadable`` (a folder that cannot be listed, and why). A
    marked file is ``gone`` only when it no longer exists: one that cannot be seen (in
    a folder that became unreadable) is left as it was, with a note. ``names`` gives the
    session a file's path names, for files that replay another session's lines
    (:class:`~harkback.adapters.sources.replays.Known`). ``summaries`` reads the summaries
    a file holds: an unchanged file whose session they title anew is read again.
    """
    marks = state.marks_by_item()
    # A mark's replay decision holds while the sessions it left out are stored (marked);
    # a file only listed may fail to be read, and must not keep a copy left out for good.
    stored = Known(marks, ())
    replaying: list[tuple[Path, str, str, int, Mark]] = []
    kept: list[tuple[Path, str, str, int, Mark]] = []  # unchanged files
    changed: list[tuple[Path, str, str, int, tuple[str, ...], bool]] = []
    unchanged = 0
    seen: set[str] = set()
    odd: list[tuple[str, str]] = []
    for name in files:
        item = path_text(name)  # the ledger's key for the file: text a store can keep
        seen.add(item)
        path = placed(root, name)
        try:
            stat = os.stat(path)
        except OSError as error:
            if os.path.lexists(path):  # a link to nothing, or a loop of links: named
                odd.append((path, str(error.strerror or error)))
            continue  # else vanished between listing and now
        if not S_ISREG(stat.st_mode):
            # A named pipe or a device: opening one can wait for ever.
            odd.append((path, "not a regular file (a named pipe, socket or device)"))
            continue
        fingerprint, size = f"{stat.st_size}:{stat.st_mtime_ns}", stat.st_size
        old = marks.get(item)
        # A mark kept before marks named their sessions is read once more, to learn them.
        if not full and old is not None and (old.session_ids or not old.sessions):
            if old.fingerprint == fingerprint:
                kept.append((Path(path), item, fingerprint, size, old))
                continue
            if fingerprint_of(old.fingerprint) == fingerprint:
                # Unchanged, but what it left out is judged once the files read are known.
                replaying.append((Path(path), item, fingerprint, size, old))
                continue
        # Torn when last read, and not written to since: no agent is writing it any more.
        dead = old is not None and fingerprint_of(old.fingerprint) == f"incomplete:{fingerprint}"
        changed.append((Path(path), item, fingerprint, size,
                        old.session_ids if old is not None else (), dead))
    # A file a sync found gone before and not listed now is still gone (not stat'ed again:
    # Claude Code's deletions pile up by the thousand).
    gone, hidden = missing_files(root, (item for item, mark in marks.items()
                                        if item not in seen and not mark.gone))
    gone += tuple(item for item, mark in marks.items() if item not in seen and mark.gone)
    notes = (f"{hidden} imported file(s) under {root} cannot be seen (an unreadable folder?); "
             "their sessions were kept",) if hidden else ()
    # Being imported: the files about to be read (stat'ed, regular), not every name listed.
    known = Known(marks, [change[1] for change in changed], names)
    for path_of, item, fingerprint, size, old in replaying:
        if holds(old.fingerprint, fingerprint, stored, known):
            kept.append((path_of, item, fingerprint, size, old))
        else:
            changed.append((path_of, item, fingerprint, size, old.session_ids, False))
    named = NO_NAMES
    if summaries is not None:
        named = gather(marks, [(c[1], c[2], c[0]) for c in changed], summaries)
    for path_of, item, fingerprint, size, old in kept:
        if summaries is not None and stale(old.fingerprint, named):  # titled anew
            changed.append((path_of, item, fingerprint, size, old.session_ids, False))
        else:
            unchanged += old.sessions
    total = sum(change[3] for change in changed)
    shorter = cut_files(((c[1], c[3], c[0]) for c in changed), marks)
    owners = SessionOwners.of({item: mark.session_ids for item, mark in marks.items()}, seen)
    return Success(ImportPlan(total=total, units=_file_units(changed,
                                                            lambda path: parse(path, known,
                                                                               named),
                                                            owners, unreadable, odd,
                                                            shorter, names),
                              unchanged=unchanged, gone=gone, notes=notes))


def placed(root: Path, name: str) -> str:
    """Where the file ``name`` (a path under ``root``, or beside it: ``../x/y.jsonl``) is.

    ``..`` is taken away in the text (``root`` is resolved), not by the system: a file
    beside a root that is not there is found all the same.

    >>> placed(Path("/c/sessions"), "../archived_sessions/r.jsonl")
    '/c/archived_sessions/r.jsonl'
    """
    return os.path.normpath(os.path.join(root, name))


def missing_files(root: Path, items: Iterable[str]) -> tuple[tuple[str, ...], int]:
    """Which of ``items`` (paths under ``root``) no longer exist, and how many cannot be
    told (a folder on the way cannot be read)."""
    gone: list[str] = []
    hidden = 0
    for item in items:
        try:
            os.stat(placed(root, item))
        except FileNotFoundError:
            gone.append(item)
            continue
        except OSError:
            pass
        hidden += 1  # present but not found by the listing: its folder cannot be read
    return tuple(gone), hidden


def _file_units(changed: Sequence[tuple[Path, str, str, int, tuple[str, ...], bool]],
                parse: Callable[[Path], ParsedFile], owners: SessionOwners,
                unreadable: Sequence[tuple[str, str]] = (),
                odd: Sequence[tuple[str, str]] = (),
                shorter: Mapping[str, Cut] | None = None,
                names: Callable[[str], str] | None = None) -> Units:
    shorter = shorter or {}
    ahead = Ahead.of(((c[1], c[4]) for c in changed), names)
    conversations: list[Conversation] = []
    marks: list[Mark] = []
    cut: list[tuple[str, tuple[str, ...], Cut]] = []
    claims: list[Claim] = []
    replays: list[Replay] = []
    tally = Tally()
    for folder, why in unreadable:
        # Its transcripts are not known to be there: damaged input, named (not a failure
        # of the source, whose other folders are imported).
        tally.at(folder)
        tally.skip("unreadable folder", why)
    for path_name, why in odd:  # listed as a transcript, but no file that can be read
        tally.at(path_name)
        tally.skip("unreadable file", why)
    work = 0
    for path, item, fingerprint, size, before, dead in changed:
        ahead.passed(item, before)
        try:
            parsed = parse(path)
        except FileNotFoundError:
            # Deleted since the listing (Claude Code removes old transcripts as it starts):
            # no damage; the next sync finds it gone.
            tally.add("file deleted while importing")
            work += size
            continue
        except OSError as error:
            tally.at(str(path))
            tally.skip("unreadable file", str(error.strerror or error))
            work += size
            continue
        torn = any(reason == TORN for reason, _ in parsed.left_out)
        tally.merge((reason, n) for reason, n in parsed.left_out if not (dead and reason == TORN))
        tally.merge_skips(parsed.skipped, parsed.skips)
        tally.at(str(path))
        if dead and torn:
            # Read again at every sync for ever (and never named): damage now, read once.
            tally.at(str(path), last_line(path))
            tally.skip("unreadable line", "the last line is cut short, and the file was not "
                       "written to since the last import")
            torn = False
        read, claimed = owners.claim(item, (importing.nul_free(c, tally)
                                            for c in parsed.conversations),
                                     held=before, path=str(path))
        conversations.extend(read)
        claims.extend(claimed)
        # A replay is of the session as stored: set aside (a copy of a resume), its new id.
        ids = {c.session.id: k.session.id for c, k in zip(parsed.conversations, read,
                                                          strict=True)}
        replays.extend(attrs.evolve(r, path=str(path), pending=ahead.among(r.sources),
                                    filed=owners.elsewhere(r.sources, item),
                                    whole=renamed(importing.nul_free(r.whole, Tally()), ids.get(
                                        r.whole.session.id, r.whole.session.id)))
                       for r in parsed.replays)
        # A session the file held before and no longer yields (its lines damaged since) is
        # kept in the store, so it stays the file's: deleting the file removes it, as it
        # removes the rest (left unnamed, it stayed in the store for good). Counted too:
        # ``harkback sources`` counts a file's sessions by its mark.
        held = tuple(dict.fromkeys((*(c.session.id for c in read), *before)))
        lineage = read_lineage(parsed.lineage, shorter.get(item), path, size)
        marks.append(Mark(item=item, fingerprint=marked(f"incomplete:{fingerprint}" if torn
                                                        else fingerprint, lineage),
                          sessions=len(held),
                          messages=sum(len(c.messages) for c in parsed.conversations),
                          session_ids=held))
        cut += [(str(path), held, shorter[item])] if item in shorter else []
        work += size
        if (sum(len(c.messages) for c in conversations) >= importing.UNIT_MESSAGES
                or len(marks) >= importing.UNIT_ITEMS or work >= importing.UNIT_BYTES):
            yield Success(_unit(conversations, marks, tally, work, cut, claims, replays))
            conversations, marks, tally, work, cut = [], [], Tally(), 0, []
            claims, replays = [], []
    if marks or tally.counts or work:
        yield Success(_unit(conversations, marks, tally, work, cut, claims, replays))


def _unit(conversations: Sequence[Conversation], marks: Sequence[Mark], tally: Tally,
          work: int, cut: Sequence[tuple[str, tuple[str, ...], Cut]],
          claims: Sequence[Claim] = (), replays: Sequence[Replay] = ()) -> ImportUnit:
    return ImportUnit(conversations=tuple(conversations), marks=tuple(marks),
                      left_out=tally.items(), skipped=tuple(tally.named), skips=tally.skips,
                      work=work, cut=tuple(cut), claims=tuple(claims), replays=tuple(replays))
