"""``harkback sync``: every agent history on the machine into the store, only what changed.

:func:`locate` finds each supported source at its default location (Hermes'
``state.db`` under ``$HERMES_HOME`` or ``~/.hermes``, Claude Code's projects under
``$CLAUDE_CONFIG_DIR`` or ``~/.claude``, Codex's sessions under ``$CODEX_HOME`` or
``~/.codex``, with the ``archived_sessions`` beside them) or where a flag says. :func:`sync`
imports each one through :func:`~harkback.pipeline.importing.run_import` (the import ledger
makes an unchanged source cost a ``stat`` per file), then **keeps** the sessions whose file
or row is gone from the source (agents delete old transcripts: Claude Code after 30 days)
and says so once, or removes them when told to ``prune``; the sessions Hermes now hides or
archives are removed (:mod:`~harkback.pipeline.sync_gone`). Sources are only read, never
written.

>>> SourceReport(kind="codex", location="/x", status="not found").found
0
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from returns.result import Failure

from harkback.adapters.file_kinds import special_kind
from harkback.adapters.sources.hermes import HermesImporter
from harkback.adapters.sources.importing import Importer, Skip, counted, path_text, resolved
from harkback.pipeline.config import default_location
from harkback.pipeline.import_delta import Delta
from harkback.pipeline.import_hints import with_hint
from harkback.pipeline.importing import ImportOutcome, importers_for, run_import
from harkback.pipeline.redacting import RedactionMemo
from harkback.pipeline.so_far import SoFar
from harkback.pipeline.sync_gone import Gone, settle_gone
from harkback.pipeline.terminal import one_line
from harkback.stages.errors import SourceUnreadable, StoreUnavailable
from harkback.stages.imports import ImportLedger, SourceKey
from harkback.stages.ports import SessionStore

SOURCES = ("hermes", "claude-code", "codex")
"""The kinds ``sync`` looks for, in the order it reports them."""


@attrs.frozen(kw_only=True)
class Located:
    """One kind of source: where it was looked for, its importers, or why none was found."""

    kind: str
    where: str
    importers: tuple[Importer, ...] = ()
    problem: str = ""
    given: bool = False
    """Named by a flag: then not finding it is a failure, not a fact."""
    present: bool = False
    """There, but a folder on the way cannot be entered (``~/.claude`` this user may not
    read) or no folder stands at the default location (a link to a disk not mounted): a
    failure, flag or not, and found, so a watch watches the others meanwhile."""

    def awaited_key(self) -> SourceKey:
        """The key this source's importer will have once it can be read (a Hermes home's
        is its ``state.db``'s), under which a watch counts it failing until then."""
        path = Path(self.where) / "state.db" if self.kind == "hermes" else Path(self.where)
        try:
            return SourceKey(kind=self.kind, location=path_text(resolved(path)))
        except OSError:  # a loop of links: as written
            return SourceKey(kind=self.kind, location=path_text(path))


def locate(paths: Mapping[str, Path | None], *, archived: bool = False,
           environ: Mapping[str, str] | None = None) -> tuple[Located, ...]:
    """Each kind of :data:`SOURCES` at ``paths[kind]``, else at its default location.

    >>> [(l.kind, l.importers) for l in locate({}, environ={"HOME": "/nowhere",
    ...     "HERMES_HOME": "/nowhere/h", "CLAUDE_CONFIG_DIR": "/nowhere/c",
    ...     "CODEX_HOME": "/nowhere/x"})][0]
    ('hermes', ())
    """
    found = []
    for kind in SOURCES:
        path = paths.get(kind)
        where = str(path if path is not None else default_location(kind, environ))
        # A Hermes home that is no folder (a link to a disk not mounted) was "not found"
        # or read as a state.db; a home folder without one stays "not found".
        odd = not_a_folder(Path(where)) if path is None and kind == "hermes" else None
        if odd is not None:
            found.append(Located(kind=kind, where=where, problem=odd, present=True))
            continue
        try:
            importers = importers_for(kind, path, environ=environ)
        except OSError as error:  # a folder on the way cannot be entered: failed, not absent
            # Named as the error names it: the folder below (a Hermes home's profiles).
            unread = error.filename if isinstance(error.filename, str) else where
            found.append(Located(kind=kind, where=where, given=path is not None, present=True,
                                 problem=f"cannot read {unread}: {error.strerror or error}"))
            continue
        if isinstance(importers, Failure):
            # Something other than a folder where the transcripts are looked for by default
            # (a link to a disk not mounted): failed, named, and tried again by a watch.
            odd = None if path is not None or kind == "hermes" else not_a_folder(Path(where))
            found.append(Located(kind=kind, where=where, given=path is not None,
                                 problem=odd or importers.failure().reason,
                                 present=odd is not None))
            continue
        kept = tuple(attrs.evolve(i, archived=archived) if isinstance(i, HermesImporter) else i
                     for i in importers.unwrap())
        found.append(Located(kind=kind, where=", ".join(i.key.location for i in kept),
                             importers=kept, given=path is not None))
    return tuple(found)


def not_a_folder(path: Path) -> str | None:
    """What stands at ``path`` when it is there but no folder (None: a folder, or nothing).

    >>> not_a_folder(Path("/dev/null")), not_a_folder(Path("/")), not_a_folder(Path("/no"))
    ('/dev/null is a character device, not a folder', None, None)
    """
    if not os.path.lexists(path) or os.path.isdir(path):
        return None
    if not os.path.exists(path):  # a link to a disk not mounted, a folder moved away
        try:
            os.stat(path)
        except OSError as error:
            if error.errno == errno.ELOOP:
                return f"{path} is a link in a loop of links, not a folder"
        return f"{path} is a link to {os.readlink(path)}, which is not there"
    return f"{path} is {special_kind(path) or 'a file'}, not a folder"


@attrs.frozen(kw_only=True)
class SourceReport:
    """What a sync did with one source (one database or folder)."""

    kind: str
    location: str
    status: str
    """``synced``, ``failed``, ``not found`` or (stopped on the way) ``interrupted``."""
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    kept_gone: int = 0
    """Sessions kept whose file or row is gone from the source (``--prune`` removes them)."""
    newly_gone: int = 0
    """... of them, those this sync found gone (said once, not at every sync)."""
    messages_kept: int = 0
    """Stored messages past the end of a file this sync read shorter, kept (its note names
    the file; ``--prune`` removes them instead: :mod:`~harkback.pipeline.import_cut`)."""
    seconds: float = 0.0
    left_out: tuple[tuple[str, int], ...] = ()
    skipped: tuple[Skip, ...] = ()
    """Damaged input named where it was (``skips`` pieces in all), as an import names it."""
    skips: int = 0
    notes: tuple[str, ...] = ()
    error: str = ""
    store_failed: bool = False
    """The error is the store's (its server gone, a role that may not write there), not
    the source's: another location of the source would fail alike."""
    store_transient: bool = False
    """... and it may pass by itself (:attr:`~harkback.stages.errors.StoreUnavailable.transient`:
    its server restarting, its file locked by another writer)."""
    located: bool = True
    """False when nothing was found where this source was looked for (a location a flag
    named and that holds no history is ``failed`` and not located)."""
    stored: frozenset[str] = frozenset()
    """The ids of the sessions this sync wrote (new or updated): what it embeds."""

    @property
    def found(self) -> int:
        """Sessions the source holds now (as imported)."""
        return self.new + self.updated + self.unchanged

    def to_payload(self) -> dict[str, Any]:
        """The JSON form of this report; ``sessions.skipped`` is ``unchanged``'s old name."""
        return {"kind": self.kind, "location": self.location, "status": self.status,
                "sessions": {"found": self.found, "new": self.new, "updated": self.updated,
                             "removed": self.removed, "unchanged": self.unchanged,
                             "skipped": self.unchanged,
                             "kept_gone": self.kept_gone, "newly_gone": self.newly_gone},
                "messages": {"kept": self.messages_kept},
                "seconds": round(self.seconds, 3), "left_out": dict(self.left_out),
                "skipped_lines": [k.to_payload() for k in self.skipped],
                "skipped_lines_total": self.skips,
                "notes": list(self.notes), **({"error": self.error} if self.error else {})}


def _report(outcome: ImportOutcome, gone: Gone, seconds: float,
            error: StoreUnavailable | None) -> SourceReport:
    d = outcome.delta
    problem = error or outcome.error
    return SourceReport(kind=outcome.key.kind, location=outcome.key.location,
                        status="failed" if problem else "synced", new=d.sessions_added,
                        updated=d.sessions_updated, unchanged=d.sessions_unchanged,
                        removed=gone.removed, kept_gone=gone.kept, newly_gone=gone.newly,
                        messages_kept=d.messages_kept, stored=d.stored,
                        seconds=seconds, left_out=outcome.left_out,
                        skipped=outcome.skipped, skips=outcome.skips, notes=outcome.notes,
                        error=problem.reason if problem else "",
                        store_failed=bool(problem) and not isinstance(problem, SourceUnreadable),
                        store_transient=bool(problem and problem.transient))


async def sync(located: Sequence[Located], store: SessionStore, *, dry_run: bool = False,
               progress: bool | None = None, clock: Callable[[], float] = time.time,
               redact: bool = True, prune: bool = False, memo: RedactionMemo | None = None,
               so_far: SoFar | None = None) -> tuple[SourceReport, ...]:
    """Import what changed in each located source; keep what is gone from it, or remove
    it when ``prune`` (see :mod:`~harkback.pipeline.sync_gone`).

    ``dry_run`` reads and compares, and counts what would be kept or removed, writing
    nothing; secrets are redacted as by every import unless ``redact`` is False (``memo``: see
    :class:`~harkback.pipeline.redacting.RedactionMemo`); ``so_far`` keeps the reports and
    outcomes as they come, for a sync stopped on the way to say what it did.
    """
    ledger = store.import_ledger()
    if ledger is None:
        raise ValueError("sync needs a store that remembers imports")
    so_far = so_far or SoFar()
    reports = so_far.reports
    for place in located:
        if not place.importers:
            failed = place.given or place.present
            reports.append(SourceReport(kind=place.kind, location=place.where,
                                        status="failed" if failed else "not found",
                                        error=place.problem if failed else "",
                                        located=place.present))
            continue
        for importer in place.importers:
            reports.append(await sync_one(importer, store, ledger, dry_run=dry_run,
                                          progress=progress, clock=clock, redact=redact,
                                          prune=prune, memo=memo, seen=so_far.saw,
                                          named=place.given))
            so_far.ended.add(importer.key)
    return tuple(reports)


async def sync_one(importer: Importer, store: SessionStore, ledger: ImportLedger, *,
                   dry_run: bool = False, progress: bool | None = None,
                   clock: Callable[[], float] = time.time, redact: bool = True,
                   prune: bool = False, memo: RedactionMemo | None = None,
                   seen: Callable[[ImportOutcome], None] = lambda _: None,
                   named: bool = False) -> SourceReport:
    """Sync one importer's source (see :func:`sync`; ``seen``: see :func:`run_import`); a
    location a flag ``named`` that holds nothing of its kind gets the note ``harkback
    import`` gives (:func:`~harkback.pipeline.import_hints.with_hint`)."""
    started = time.perf_counter()
    outcome = await run_import(importer, store, ledger, progress=progress, clock=clock,
                               dry_run=dry_run, redact=redact, memo=memo, seen=seen,
                               keep_cut=not prune)
    outcome = with_hint(outcome) if named else outcome
    gone, error = Gone(), None
    # Nothing gone (an unchanged source): its marks are not read a second time.
    if outcome.ok and (outcome.gone or outcome.withdrawn or prune):
        result = await settle_gone(importer.key, outcome.gone, store, ledger,
                                   withdrawn=outcome.withdrawn, marked=outcome.marked,
                                   prune=prune, dry_run=dry_run, now=clock())
        if isinstance(result, Failure):
            error = result.failure()
        else:
            gone = result.unwrap()
    if gone.removed and not dry_run:
        # A resumed or forked session left out the lines it copied from a session stored
        # before (adapters/sources/replays.py). Pruned, that session no longer holds them:
        # its continuations are read again now, whole, while their files are here.
        again = await run_import(importer, store, ledger, progress=False, clock=clock,
                                 redact=redact, memo=memo, keep_cut=not prune)
        error = error or again.error
        outcome = attrs.evolve(outcome, delta=_read_again(outcome.delta, again.delta))
    return _report(outcome, gone, time.perf_counter() - started, error)


def _read_again(first: Delta, again: Delta) -> Delta:
    """The counts of an import and of one run again after it: what the second updated,
    the first counted unchanged.

    >>> _read_again(Delta(sessions_unchanged=5), Delta(sessions_updated=1,
    ...             sessions_unchanged=4)).sessions_unchanged
    4
    """
    return first.plus(attrs.evolve(again, sessions_unchanged=-again.sessions_updated))


# --- what is printed ------------------------------------------------------------------------

def describe(reports: Sequence[SourceReport], *, dry_run: bool = False) -> str:
    """The table ``harkback sync`` prints: one row per source, then what was found where."""
    header = (f"{'source':<12} {'found':>6} {'new':>6} {'updated':>8} {'removed':>8} "
              f"{'unchanged':>9} {'seconds':>8}  location")
    lines = [("dry run: nothing was written\n" if dry_run else "") + header, "-" * len(header)]
    for r in reports:
        if r.status == "not found":
            lines.append(f"{r.kind:<12} {'-':>6} {'-':>6} {'-':>8} {'-':>8} {'-':>9} {'-':>8}"
                         f"  not found at {one_line(r.location)}")
            continue
        lines.append(f"{r.kind:<12} {r.found:>6} {r.new:>6} {r.updated:>8} {r.removed:>8} "
                     f"{r.unchanged:>9} {r.seconds:>8.2f}  {one_line(r.location)}")
    for r in reports:
        if r.left_out:
            lines.append(f"{r.kind}: left out {counted(r.left_out)}")
        lines += [f"{r.kind}: note: {one_line(note)}" for note in r.notes]
        if r.newly_gone:
            lines.append(gone_line(r))
        if r.error:
            lines.append(f"{r.kind}: failed: {one_line(r.error)}" + (
                "" if r.store_failed else
                f" (fix that, or name another location with --{r.kind})"))
    lines.append(found_line(reports))
    return "\n".join(lines)


GONE_WHY = {"claude-code": ("transcripts", "Claude Code deletes transcripts older than "
                                          "cleanupPeriodDays, 30 days by default"),
            "codex": ("rollout files", "deleted; archived ones are read from "
                                       "archived_sessions"),
            "hermes": ("rows", "deleted from state.db")}
"""What a source's gone items are, and why they may be gone, for :func:`gone_line`."""


def gone_line(report: SourceReport) -> str:
    """The line saying that sessions whose items went from the source were kept.

    >>> print(gone_line(SourceReport(kind="codex", location="/x", status="synced",
    ...                              kept_gone=3, newly_gone=1)))
    codex: 1 session(s) kept whose rollout files are gone at the source (deleted; archived \
ones are read from archived_sessions); 3 kept in all; `harkback sync --prune` removes them
    """
    what, why = GONE_WHY.get(report.kind, ("files", ""))
    return (f"{report.kind}: {report.newly_gone} session(s) kept whose {what} are gone at the "
            f"source{f' ({why})' if why else ''}; {report.kept_gone} kept in all; "
            "`harkback sync --prune` removes them")


def found_line(reports: Sequence[SourceReport]) -> str:
    """Which kinds of source were found and which were not.

    >>> found_line([SourceReport(kind="codex", location="/x", status="synced"),
    ...             SourceReport(kind="hermes", location="no db", status="not found",
    ...                          located=False)])
    'found: codex; not found: hermes'
    """
    found = list(dict.fromkeys(r.kind for r in reports if r.located))
    missing = list(dict.fromkeys(r.kind for r in reports if not r.located))
    return (f"found: {', '.join(found) or 'none'}"
            + (f"; not found: {', '.join(missing)}" if missing else ""))


def stopped_payload(so_far: SoFar, *, dry_run: bool = False) -> dict[str, Any]:
    """The JSON of a sync stopped on the way (Ctrl-C, SIGTERM): :func:`payload`'s, of the
    sources it finished and the one it was importing (``"status": "interrupted"``, what it
    had stored), not successful."""
    cut = [attrs.evolve(_report(o, Gone(), 0.0, None), status="interrupted")
           for o in so_far.cut_short()]
    return {**payload([*so_far.reports, *cut], dry_run=dry_run), "success": False}


def payload(reports: Sequence[SourceReport], *, dry_run: bool = False) -> dict[str, Any]:
    """The JSON ``harkback sync --json`` prints."""
    looked_for = [r for r in reports if r.status != "not found"]
    return {"success": bool(looked_for) and all(r.status == "synced" for r in looked_for),
            "dry_run": dry_run, "sources": [r.to_payload() for r in reports],
            "found": list(dict.fromkeys(r.kind for r in reports if r.located)),
            "not_found": list(dict.fromkeys(r.kind for r in reports if not r.located))}
