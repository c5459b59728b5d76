"""Import transcripts of other agents into a harkback store, incrementally.

:func:`run_import` drives one :class:`~harkback.adapters.sources.importing.Importer`: it asks
the import ledger what was imported before, lets the importer plan what changed
(on a thread of its own: importers do blocking file and SQLite I/O), then for each
unit compares the conversations with what the store holds, stores the new and
changed ones, and only then keeps the unit's marks in the ledger. A run that stops
half-way (an error, Ctrl-C) therefore redoes the rest next time and skips nothing;
running it twice stores nothing the second time.

>>> compare([], [], []).sessions_added
0
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any, Self, TextIO

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources.claude_code import CLAUDE_CODE
from harkback.adapters.sources.codex import CODEX, CODEX_ARCHIVE
from harkback.adapters.sources.hermes import HermesImporter, database_files
from harkback.adapters.sources.importing import (
    Importer,
    ImportPlan,
    ImportUnit,
    Skip,
    Tally,
    counted,
    resolved,
)
from harkback.adapters.sources.transcripts import TranscriptImporter
from harkback.adapters.stores.import_ledger import MemoryImportLedger
from harkback.adapters.thread_room import one_thread_pool
from harkback.pipeline.config import HOME_VARIABLES, default_location
from harkback.pipeline.import_claims import settled_claims
from harkback.pipeline.import_cut import kept_past_cut, left_behind
from harkback.pipeline.import_delta import Delta as Delta  # the outcome's counts
from harkback.pipeline.import_delta import compare as compare
from harkback.pipeline.import_delta import raced_note, settled, split_tails
from harkback.pipeline.import_places import placed_anew
from harkback.pipeline.import_replays import settled_replays
from harkback.pipeline.import_restore import restore_removed
from harkback.pipeline.ingest import JsonlImporter
from harkback.pipeline.progress import Progress
from harkback.pipeline.redacting import Redacted, RedactionMemo
from harkback.pipeline.terminal import one_line
from harkback.stages.errors import QueryRejected, SourceUnreadable, StoreUnavailable
from harkback.stages.imports import ImportLedger, Mark, SourceKey
from harkback.stages.ports import IngestReport, SessionStore
from harkback.stages.records import Conversation, Message, Session
from harkback.stages.redact.scrub import NO_SECRETS, SecretCounts
from harkback.stages.stage import as_result
from harkback.stages.tails import TailWriter

KINDS = ("hermes", "claude-code", "codex", "jsonl")


# --- the outcome --------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class ImportOutcome:
    """What one import did: counts, what was left out and why, notes, any error."""

    key: SourceKey
    delta: Delta = Delta()
    left_out: tuple[tuple[str, int], ...] = ()
    skipped: tuple[Skip, ...] = ()
    skips: int = 0
    notes: tuple[str, ...] = ()
    error: StoreUnavailable | None = None
    gone: tuple[str, ...] = ()
    """Items of the ledger no longer at the source (see ``ImportPlan.gone``)."""
    withdrawn: tuple[str, ...] = ()
    """Items the source asks to leave out (see ``ImportPlan.withdrawn``)."""
    marked: frozenset[str] = frozenset()
    """The sessions the marks of this import name (kept, or that a dry run would keep): a
    file moved within the source holds its sessions at its new path."""
    secrets: SecretCounts = NO_SECRETS

    @property
    def ok(self) -> bool:
        """True when the import ran to its end."""
        return self.error is None

    def add(self, delta: Delta, unit: ImportUnit, found: SecretCounts = NO_SECRETS) -> Self:
        """This outcome with one more stored unit (and the secrets redacted in it) counted."""
        tally = Tally(named=list(self.skipped), skips=self.skips)
        tally.merge(self.left_out)
        tally.merge(unit.left_out)
        tally.merge_skips(unit.skipped, unit.skips)
        return attrs.evolve(self, delta=self.delta.plus(delta), left_out=tally.items(),
                            skipped=tuple(tally.named), skips=tally.skips,
                            secrets=self.secrets + found, marked=self.marked.union(
                                i for mark in unit.marks for i in mark.session_ids),
                            notes=self.notes + unit.notes + delta.cut + delta.replaced)

    def describe(self) -> str:
        """A few lines for people: counts, then what was left out, notes and errors."""
        d = self.delta
        lines = [
            f"{self.key.kind} {one_line(self.key.location)}",
            f"  sessions: {d.sessions_added} added, {d.sessions_updated} updated, "
            f"{d.sessions_unchanged} skipped (unchanged since the last import)",
            f"  messages: {d.messages_added} added, {d.messages_updated} updated, "
            f"{d.messages_removed} removed"
            + (f", {d.messages_kept} kept past a cut" if d.messages_kept else ""),
        ]
        if self.left_out:  # archived sessions, rewound rows, but also times ignored ...
            lines.append(f"  left out or changed: {counted(self.left_out)}")
        lines += [f"  secrets: {self.secrets.describe()}"] if self.secrets.by_kind else []
        lines += [f"  note: {one_line(note)}" for note in self.notes]
        if self.error is not None:
            lines.append(f"  stopped: {one_line(self.error.message())}")
        return "\n".join(lines)

    def line(self) -> str:
        """One line for people, as ``harkback ingest`` prints it.

        >>> ImportOutcome(key=SourceKey(kind="jsonl", location="f"), delta=Delta(
        ...     sessions_added=2, sessions_unchanged=1, messages_added=5)).line()
        'ingested 3 session(s) (2 added, 0 updated, 1 unchanged), 5 message(s) written'
        """
        d = self.delta
        read = d.sessions_added + d.sessions_updated + d.sessions_unchanged
        text = (f"ingested {read} session(s) ({d.sessions_added} added, {d.sessions_updated} "
                f"updated, {d.sessions_unchanged} unchanged), "
                f"{d.messages_added + d.messages_updated} message(s) written")
        text += f"; {self.skips} damaged line(s) or field(s) named" if self.skips else ""
        return text + (f"; {self.secrets.describe()}" if self.secrets.by_kind else "")

    def to_payload(self) -> dict[str, Any]:
        """The JSON form of this outcome; ``sessions.skipped`` is ``unchanged``'s old name."""
        d = self.delta
        return {
            "kind": self.key.kind, "location": self.key.location, "success": self.ok,
            "sessions": {"added": d.sessions_added, "updated": d.sessions_updated,
                         "unchanged": d.sessions_unchanged, "skipped": d.sessions_unchanged},
            "messages": {"added": d.messages_added, "updated": d.messages_updated,
                         "removed": d.messages_removed, "kept": d.messages_kept},
            "skipped": dict(self.left_out),
            "skipped_lines": [k.to_payload() for k in self.skipped],
            "skipped_lines_total": self.skips, "notes": list(self.notes),
            "secrets_redacted": dict(self.secrets.by_kind),
            **({"error": self.error.message()} if self.error is not None else {}),
        }


# --- running an import --------------------------------------------------------------------

async def run_import(importer: Importer, store: SessionStore, ledger: ImportLedger, *,
                     full: bool = False, progress: bool | None = None,
                     clock: Callable[[], float] = time.time,
                     stream: TextIO | None = None, dry_run: bool = False, redact: bool = True,
                     memo: RedactionMemo | None = None, keep_cut: bool = True,
                     seen: Callable[[ImportOutcome], None] = lambda _: None) -> ImportOutcome:
    """Import what changed in ``importer``'s source into ``store``; never raises for I/O.

    ``full`` reads everything again (the store still rewrites only what differs);
    ``dry_run`` reads and compares but writes nothing, to the store or the ledger;
    secrets are redacted before anything is compared or stored, unless ``redact`` is False
    (``memo``: what a watch's earlier syncs redacted, see :class:`RedactionMemo`); ``seen``
    hears the outcome so far after each unit (:mod:`~harkback.pipeline.so_far`); a file
    read shorter than when last read keeps its stored messages past the cut unless not
    ``keep_cut`` (``sync --prune``: :mod:`~harkback.pipeline.import_cut`)."""
    key = importer.key
    outcome = ImportOutcome(key=key)
    remembered = as_result(await ledger.state(key).awaitable())
    if isinstance(remembered, Failure):
        return attrs.evolve(outcome, error=remembered.failure())
    state = remembered.unwrap()
    if (clash := state.kind_clash(key.kind)) is not None:  # one record per location
        return attrs.evolve(outcome, error=clash)
    loop = asyncio.get_running_loop()
    with one_thread_pool("harkback-import") as worker:
        planned = await loop.run_in_executor(worker, partial(importer.plan, state, full=full))
        if isinstance(planned, Failure):
            return attrs.evolve(outcome, error=planned.failure())
        plan = planned.unwrap()
        outcome = attrs.evolve(outcome, delta=Delta(sessions_unchanged=plan.unchanged),
                               notes=plan.notes, gone=plan.gone, withdrawn=plan.withdrawn)
        seen(outcome)
        bar = Progress(total=plan.total, label=f"import {key.kind}", enabled=progress,
                       stream=stream or sys.stderr)
        try:
            outcome = await _store_units(plan, worker, store, None if dry_run else ledger,
                                         outcome, bar, clock, Redacted(enabled=redact, memo=memo),
                                         seen, keep_cut, state.marks_by_item())
        finally:
            bar.finish()
            # The importer's generator closes its files and connections on its own thread.
            await loop.run_in_executor(worker, plan.units.close)
    outcome = attrs.evolve(outcome, notes=outcome.notes + raced_note(outcome.delta))
    if outcome.error is None and not dry_run:
        cursor = plan.cursor if plan.cursor is not None else state.cursor
        done = as_result(await ledger.advance(key, cursor, now=clock()).awaitable())
        if isinstance(done, Failure):
            outcome = attrs.evolve(outcome, error=done.failure())
    return outcome


async def _store_units(plan: ImportPlan, worker: ThreadPoolExecutor, store: SessionStore,
                       ledger: ImportLedger | None, outcome: ImportOutcome, bar: Progress,
                       clock: Callable[[], float], redacting: Redacted,
                       seen: Callable[[ImportOutcome], None], keep_cut: bool,
                       before: Mapping[str, Mark]) -> ImportOutcome:
    loop = asyncio.get_running_loop()
    while True:
        step = await loop.run_in_executor(worker, next, plan.units, None)
        if step is None:
            return outcome
        if isinstance(step, Failure):
            return attrs.evolve(outcome, error=step.failure())
        if isinstance(replayed := await settled_replays(step.unwrap(), store), Failure):
            return attrs.evolve(outcome, error=replayed.failure())
        unit = replayed.unwrap()  # a resume's copy compared first: what it keeps is redacted
        clean = await loop.run_in_executor(worker, redacting.batch, unit.conversations)
        started = time.monotonic()
        claimed = await settled_claims(attrs.evolve(unit, conversations=clean[0]), store, before,
                                       clean[1])
        if isinstance(claimed, Failure):
            return attrs.evolve(outcome, error=claimed.failure())
        unit, counted = claimed.unwrap()
        stored = await _store_unit(unit, store, ledger, outcome.key, clock, keep_cut, before)
        plan.took(time.monotonic() - started)
        if isinstance(stored, Failure):
            return attrs.evolve(outcome, error=stored.failure())
        outcome = outcome.add(stored.unwrap(), unit, counted(stored.unwrap().changed))
        seen(outcome)
        bar.advance(unit.work)


async def _store_unit(unit: ImportUnit, store: SessionStore, ledger: ImportLedger | None,
                      key: SourceKey, clock: Callable[[], float], keep_cut: bool = True,
                      before: Mapping[str, Mark] | None = None
                      ) -> Result[Delta, StoreUnavailable]:
    """Store what of ``unit`` differs, then keep its marks (no ledger: compare only)."""
    ids = [c.session.id for c in unit.conversations]
    sessions = as_result(await store.sessions(ids).awaitable())
    if isinstance(sessions, Failure):
        return Failure(sessions.failure())
    messages = as_result(await store.messages(ids).awaitable())
    if isinstance(messages, Failure):
        return Failure(messages.failure())
    behind = await left_behind(unit.cut, ids, store, key.kind)
    if isinstance(behind, Failure):
        return Failure(behind.failure())
    placed = placed_anew(unit.conversations, (*messages.unwrap(), *behind.unwrap()),
                         unit.marks, before or {}, keep=keep_cut, sessions=sessions.unwrap(),
                         compared={s for _, ids, why in unit.cut if why in ("shorter", "rewritten")
                                    for s in ids},
                         fresh={s for _, ids, why in unit.cut if why == "new" for s in ids})
    kept = kept_past_cut(placed.conversations, messages.unwrap(), unit.cut, keep=keep_cut,
                         sessions=sessions.unwrap(), behind=behind.unwrap())
    delta = attrs.evolve(compare(kept.conversations, sessions.unwrap(), messages.unwrap()),
                         messages_kept=kept.kept, cut=kept.notes,
                         read=frozenset(c.session.id for c in kept.conversations))
    if ledger is None:
        return Success(delta)
    if delta.changed:
        written = await _write(delta.changed, store, sessions.unwrap(), messages.unwrap())
        if isinstance(written, Failure):
            return Failure(written.failure())
        delta = settled(delta, sessions.unwrap(), written.unwrap())
    marked = as_result(await ledger.keep(key, placed.marks, now=clock()).awaitable())
    if isinstance(marked, Failure):
        return Failure(marked.failure())
    # Sessions another process removed since they were compared (import_restore.py).
    restored = await restore_removed(kept.conversations, store)
    if isinstance(restored, Failure):
        return Failure(restored.failure())
    return Success(attrs.evolve(delta, stored=delta.stored | restored.unwrap()))


async def _write(changed: Sequence[Conversation], store: SessionStore,
                 stored: Sequence[Session], stored_messages: Sequence[Message]
                 ) -> Result[IngestReport, StoreUnavailable]:
    """Store ``changed``: a session that kept its first messages as they are stored (one
    that grew, above all) by its tail where the store can (:class:`TailWriter`), the rest
    whole. One line appended to a 30 MB transcript then writes that line, not 18,000."""
    writer = store if isinstance(store, TailWriter) else None
    tails, whole = (split_tails(changed, stored, stored_messages) if writer is not None
                    else ((), tuple(changed)))
    report = IngestReport()
    if writer is not None and tails:
        written = as_result(await writer.ingest_tails(tails).awaitable())
        if isinstance(written, Failure):
            return Failure(written.failure())
        done = written.unwrap()
        # None: another writer changed a session since it was compared; written whole.
        report, whole = (done, whole) if done is not None else (report, tuple(changed))
    if not whole:
        return Success(report)
    return as_result(await store.ingest(whole).awaitable()).map(lambda rest: report + rest)


# --- the ingest format ------------------------------------------------------------------

async def ingest_file(path: Path, store: SessionStore, *, progress: bool | None = None,
                      redact: bool = True) -> ImportOutcome:
    """Store every session of an ingest-format file: ``harkback ingest`` and ``import jsonl``
    are this one path (the import's, read in full: the store rewrites only what differs).

    The file is remembered in the store's import ledger (a store without one gets a
    ledger that lives for this call), so ``harkback sources`` lists it.
    """
    ledger = store.import_ledger() or MemoryImportLedger()
    return await run_import(JsonlImporter(resolved(path)), store, ledger, full=True,
                            progress=progress, redact=redact)


# --- where sources live ---------------------------------------------------------------------

def importers_for(kind: str, path: Path | None, *,
                  environ: Mapping[str, str] | None = None
                  ) -> Result[tuple[Importer, ...], StoreUnavailable | QueryRejected]:
    """The importers for ``kind`` at ``path`` (its default location when None).

    A Hermes home gives one importer per database: ``state.db`` and each profile's.
    Nothing to import there is :class:`StoreUnavailable`; an unknown ``kind``,
    :class:`QueryRejected`. Either one's ``reason`` is a line for people.

    >>> importers_for("fax", None).failure()
    QueryRejected(reason="unknown source kind 'fax'; one of hermes, claude-code, codex, jsonl")
    """
    if kind not in KINDS:
        return Failure(QueryRejected(f"unknown source kind {kind!r}; one of {', '.join(KINDS)}"))
    if kind == "jsonl":
        if path is not None and str(path) == "-" and not path.exists():
            # What is read is remembered by its path (``harkback sources``): no pipes.
            return Failure(SourceUnreadable(
                "standard input is not read: save the sessions to a file and name it"))
        if path is None or not path.is_file():
            return Failure(SourceUnreadable(
                f"not a regular file: {path} (a file is read, not a folder or a pipe)"
                if path is not None and path.exists() else f"no such file: {path}"))
        return Success((JsonlImporter(resolved(path)),))
    if path is None and not default_location(kind, environ).is_absolute():
        # No home folder ("~" stays as written): not a "~" folder below where one stands.
        return Failure(SourceUnreadable(
            f"no home folder to find {kind} transcripts in (pass the folder or set "
            f"{HOME_VARIABLES[kind]})"))
    where = resolved(path if path is not None else default_location(kind, environ))
    if kind == "hermes":
        found = database_files(where)
        if not found:
            return Failure(SourceUnreadable(
                f"no Hermes state.db at {where} (pass the file or HERMES_HOME)"))
        return Success(tuple(HermesImporter(resolved(p)) for p in found))
    beside = () if kind == "claude-code" else codex_archive(
        path if path is not None else default_location(kind, environ))
    if not where.is_dir() and not any(folder.is_dir() for folder in beside):
        return Failure(SourceUnreadable(
            f"no {kind} transcripts folder at {where} (pass the folder)"))
    if kind == "claude-code":
        return Success((TranscriptImporter(CLAUDE_CODE, where),))
    return Success((TranscriptImporter(CODEX, where, beside),))


def codex_archive(sessions: Path) -> tuple[Path, ...]:
    """The folder Codex moves archived rollouts to, beside a ``sessions`` folder (flat:
    ``$CODEX_HOME/archived_sessions/rollout-*.jsonl``), read with it as one source; none
    beside a folder of another name (a Codex home already holds both; a copy, only itself).

    >>> [p.as_posix() for p in codex_archive(Path("/x/.codex/sessions"))]
    ['/x/.codex/archived_sessions']
    >>> codex_archive(Path("/backup/rollouts"))
    ()
    """
    named = Path(os.path.expanduser(sessions))
    if named.name != "sessions":
        return ()
    # From the path as named: a sessions folder linked elsewhere has its archive at home.
    archive = named.parent / CODEX_ARCHIVE
    try:
        return (resolved(archive),)
    except OSError:  # a loop of links: the import names it, and reads the sessions
        return (archive.absolute(),)
