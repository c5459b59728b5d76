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
from typing import Any, TextIO

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.sources.claude_code import CLAUDE_CODE
from harkback.adapters.sources.codex import CODEX
from harkback.adapters.sources.hermes import HermesImporter, database_files
from harkback.adapters.sources.importing import (
    Importer,
    ImportPlan,
    ImportUnit,
    Skip,
    Tally,
    resolved,
)
from harkback.adapters.sources.transcripts import TranscriptImporter
from harkback.pipeline.progress import Progress
from harkback.stages.errors import QueryRejected, StoreUnavailable
from harkback.stages.imports import ImportLedger, SourceKey, SourceState
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message, Session
from harkback.stages.result import when_text
from harkback.stages.stage import as_result

KINDS = ("hermes", "claude-code", "codex", "jsonl")


# --- what changed -------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class Delta:
    """How a batch of conversations differs from what the store holds."""

    changed: tuple[Conversation, ...] = ()
    sessions_added: int = 0
    sessions_updated: int = 0
    sessions_unchanged: int = 0
    messages_added: int = 0
    messages_updated: int = 0
    messages_removed: int = 0

    def plus(self, other: Delta) -> Delta:
        """The counts of both added up (``changed`` is left empty: it is per batch).

        >>> Delta(sessions_added=1).plus(Delta(sessions_added=2, messages_added=3)).messages_added
        3
        """
        return Delta(**{name: getattr(self, name) + getattr(other, name) for name in COUNTS})


COUNTS = tuple(a.name for a in attrs.fields(Delta) if a.name != "changed")
"""The names of :class:`Delta`'s counters."""


def compare(batch: Sequence[Conversation], stored: Sequence[Session],
            stored_messages: Sequence[Message]) -> Delta:
    """Compare ``batch`` with the stored sessions and messages of the same ids.

    A message is identified by its session and position; the last conversation of an
    id in ``batch`` wins, as in the store's ingest.

    >>> from harkback.stages.records import Message, Session
    >>> old = Message(session_id="s", position=0, role="user", content="hi")
    >>> new = Conversation(Session(id="s"), (old, attrs.evolve(old, position=1)))
    >>> d = compare([new], [Session(id="s")], [old])
    >>> d.sessions_updated, d.messages_added, d.messages_updated
    (1, 1, 0)
    """
    sessions = {s.id: s for s in stored}
    before: dict[str, dict[int, Message]] = {}
    for message in stored_messages:
        before.setdefault(message.session_id, {})[message.position] = message
    delta = Delta()
    changed: list[Conversation] = []
    for conversation in {c.session.id: c for c in batch}.values():
        session = conversation.session
        old = before.get(session.id, {})
        now = {m.position: m for m in conversation.messages}
        added = sum(1 for p in now if p not in old)
        updated = sum(1 for p, m in now.items() if p in old and old[p] != m)
        removed = sum(1 for p in old if p not in now)
        is_new = session.id not in sessions
        differs = is_new or sessions[session.id] != session or bool(added + updated + removed)
        delta = delta.plus(Delta(
            sessions_added=int(is_new), sessions_updated=int(differs and not is_new),
            sessions_unchanged=int(not differs), messages_added=added, messages_updated=updated,
            messages_removed=removed))
        if differs:
            changed.append(conversation)
    return attrs.evolve(delta, changed=tuple(changed))


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

    @property
    def ok(self) -> bool:
        """True when the import ran to its end."""
        return self.error is None

    def add(self, delta: Delta, unit: ImportUnit) -> ImportOutcome:
        """This outcome with one more stored unit counted."""
        tally = Tally(named=list(self.skipped), skips=self.skips)
        tally.merge(self.left_out)
        tally.merge(unit.left_out)
        tally.merge_skips(unit.skipped, unit.skips)
        return attrs.evolve(self, delta=self.delta.plus(delta), left_out=tally.items(),
                            skipped=tuple(tally.named), skips=tally.skips)

    def describe(self) -> str:
        """A few lines for people: counts, then what was left out, notes and errors."""
        d = self.delta
        lines = [
            f"{self.key.kind} {self.key.location}",
            f"  sessions: {d.sessions_added} added, {d.sessions_updated} updated, "
            f"{d.sessions_unchanged} skipped (unchanged since the last import)",
            f"  messages: {d.messages_added} added, {d.messages_updated} updated, "
            f"{d.messages_removed} removed",
        ]
        if self.left_out:
            lines.append("  skipped: " + ", ".join(
                f"{count} {reason}" for reason, count in self.left_out))
        lines += [f"  note: {note}" for note in self.notes]
        if self.error is not None:
            lines.append(f"  stopped: {self.error.message()}")
        return "\n".join(lines)

    def to_payload(self) -> dict[str, Any]:
        """The JSON form of this outcome."""
        d = self.delta
        return {
            "kind": self.key.kind, "location": self.key.location, "success": self.ok,
            "sessions": {"added": d.sessions_added, "updated": d.sessions_updated,
                         "skipped": d.sessions_unchanged},
            "messages": {"added": d.messages_added, "updated": d.messages_updated,
                         "removed": d.messages_removed},
            "skipped": dict(self.left_out),
            "skipped_lines": [{"file": k.file, "line": k.line, "reason": k.reason}
                              for k in self.skipped],
            "skipped_lines_total": self.skips, "notes": list(self.notes),
            **({"error": self.error.message()} if self.error is not None else {}),
        }


# --- running an import --------------------------------------------------------------------

async def run_import(importer: Importer, store: SessionStore, ledger: ImportLedger, *,
                     full: bool = False, progress: bool | None = None,
                     clock: Callable[[], float] = time.time,
                     stream: TextIO | None = None) -> ImportOutcome:
    """Import what changed in ``importer``'s source into ``store``; never raises for I/O.

    ``full`` reads everything again (the store still rewrites only what differs).
    """
    key = importer.key
    outcome = ImportOutcome(key=key)
    remembered = as_result(await ledger.state(key).awaitable())
    if isinstance(remembered, Failure):
        return attrs.evolve(outcome, error=remembered.failure())
    state = remembered.unwrap()
    loop = asyncio.get_running_loop()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="harkback-import") as worker:
        planned = await loop.run_in_executor(worker, partial(importer.plan, state, full=full))
        if isinstance(planned, Failure):
            return attrs.evolve(outcome, error=planned.failure())
        plan = planned.unwrap()
        outcome = attrs.evolve(outcome, delta=Delta(sessions_unchanged=plan.unchanged),
                               notes=plan.notes)
        bar = Progress(total=plan.total, label=f"import {key.kind}", enabled=progress,
                       stream=stream or sys.stderr)
        try:
            outcome = await _store_units(plan, worker, store, ledger, outcome, bar, clock)
        finally:
            bar.finish()
            # The importer's generator closes its files and connections on its own thread.
            await loop.run_in_executor(worker, plan.units.close)
    if outcome.error is None:
        cursor = plan.cursor if plan.cursor is not None else state.cursor
        done = as_result(await ledger.advance(key, cursor, now=clock()).awaitable())
        if isinstance(done, Failure):
            outcome = attrs.evolve(outcome, error=done.failure())
    return outcome


async def _store_units(plan: ImportPlan, worker: ThreadPoolExecutor, store: SessionStore,
                       ledger: ImportLedger, outcome: ImportOutcome, bar: Progress,
                       clock: Callable[[], float]) -> ImportOutcome:
    loop = asyncio.get_running_loop()
    while True:
        step = await loop.run_in_executor(worker, next, plan.units, None)
        if step is None:
            return outcome
        if isinstance(step, Failure):
            return attrs.evolve(outcome, error=step.failure())
        unit = step.unwrap()
        started = time.monotonic()
        stored = await _store_unit(unit, store, ledger, outcome.key, clock)
        plan.took(time.monotonic() - started)
        if isinstance(stored, Failure):
            return attrs.evolve(outcome, error=stored.failure())
        outcome = outcome.add(stored.unwrap(), unit)
        bar.advance(unit.work)


async def _store_unit(unit: ImportUnit, store: SessionStore, ledger: ImportLedger,
                      key: SourceKey, clock: Callable[[], float]
                      ) -> Result[Delta, StoreUnavailable]:
    ids = [c.session.id for c in unit.conversations]
    sessions = as_result(await store.sessions(ids).awaitable())
    if isinstance(sessions, Failure):
        return Failure(sessions.failure())
    messages = as_result(await store.messages(ids).awaitable())
    if isinstance(messages, Failure):
        return Failure(messages.failure())
    delta = compare(unit.conversations, sessions.unwrap(), messages.unwrap())
    if delta.changed:
        written = as_result(await store.ingest(delta.changed).awaitable())
        if isinstance(written, Failure):
            return Failure(written.failure())
    kept = as_result(await ledger.keep(key, unit.marks, now=clock()).awaitable())
    if isinstance(kept, Failure):
        return Failure(kept.failure())
    return Success(delta)


# --- where sources live ---------------------------------------------------------------------

def default_location(kind: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where ``kind``'s transcripts live by default.

    >>> default_location("codex", {"CODEX_HOME": "/x/.codex"}).as_posix()
    '/x/.codex/sessions'
    >>> default_location("hermes", {"HERMES_HOME": "/h"}).as_posix()
    '/h'
    """
    env = os.environ if environ is None else environ
    if kind == "hermes":
        return Path(env.get("HERMES_HOME") or "~/.hermes").expanduser()
    if kind == "claude-code":
        return Path(env.get("CLAUDE_CONFIG_DIR") or "~/.claude").expanduser() / "projects"
    if kind == "codex":
        return Path(env.get("CODEX_HOME") or "~/.codex").expanduser() / "sessions"
    raise ValueError(f"no default location for {kind!r}")


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
        if path is None or not path.is_file():
            return Failure(StoreUnavailable(f"no such file: {path}"))
        from harkback.pipeline.jsonl_source import JsonlImporter
        return Success((JsonlImporter(resolved(path)),))
    where = resolved(path if path is not None else default_location(kind, environ))
    if kind == "hermes":
        found = database_files(where)
        if not found:
            return Failure(StoreUnavailable(
                f"no Hermes state.db at {where} (pass the file or HERMES_HOME)"))
        return Success(tuple(HermesImporter(resolved(p)) for p in found))
    if not where.is_dir():
        return Failure(StoreUnavailable(
            f"no {kind} transcripts folder at {where} (pass the folder)"))
    if kind == "claude-code":
        return Success((TranscriptImporter(CLAUDE_CODE, where),))
    return Success((TranscriptImporter(CODEX, where),))


def describe_sources(sources: Sequence[SourceState]) -> str:
    """A table of imported sources for ``harkback sources``."""
    if not sources:
        return "Nothing imported yet (see `harkback import --help`)."
    header = f"{'kind':<12} {'last import':<30} {'sessions':>8} {'messages':>9}  location"
    lines = [header, "-" * len(header)]
    for s in sources:
        lines.append(f"{s.key.kind:<12} {when_text(s.last_imported_at):<30} {s.sessions:>8} "
                     f"{s.messages:>9}  {s.key.location}")
    return "\n".join(lines)


def source_payload(source: SourceState) -> dict[str, Any]:
    """The JSON form of one imported source."""
    return {"kind": source.key.kind, "location": source.key.location,
            "first_imported_at": source.first_imported_at,
            "last_imported_at": source.last_imported_at,
            "last_import": when_text(source.last_imported_at),
            "sessions": source.sessions, "messages": source.messages}
