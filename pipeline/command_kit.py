"""What every ``harkback`` command shares: exit statuses, the one-line error, settings, stores.

A command fails by raising :class:`CliError` with the status to use; the entry point
(:mod:`harkback.pipeline.cli`) prints its one line.

>>> CliError("no database at x.db").status == EXIT_FAILED
True
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from returns.result import Failure, Result

from harkback.adapters.stores.migration import FIRST_VERSION, Migrated
from harkback.adapters.stores.sqlite_adopt import left_commits, no_store_yet
from harkback.pipeline import wiring
from harkback.pipeline.cli_edges import EXIT_USAGE as EXIT_USAGE  # its one home (cold path)
from harkback.pipeline.command_basics import (  # the light part, re-exported for commands
    EXIT_FAILED as EXIT_FAILED,
)
from harkback.pipeline.command_basics import EXIT_INTERNAL as EXIT_INTERNAL
from harkback.pipeline.command_basics import EXIT_OK as EXIT_OK
from harkback.pipeline.command_basics import EXIT_SKIPPED as EXIT_SKIPPED
from harkback.pipeline.command_basics import BadStore as BadStore
from harkback.pipeline.command_basics import CliError as CliError
from harkback.pipeline.command_basics import error_line as error_line
from harkback.pipeline.command_basics import settings_of as settings_of
from harkback.pipeline.embed import EmbedSummary, embed_missing
from harkback.pipeline.terminal import line_of
from harkback.stages.errors import QueryRejected, StoreUnavailable
from harkback.stages.ports import Embedder, SessionStore
from harkback.stages.shown_url import shown_url
from harkback.stages.stage import as_result

if TYPE_CHECKING:
    from harkback.adapters.sources.importing import Skip

NAMED_SKIPS = 10
"""Without --verbose, this many damaged lines are named on stderr, the rest counted."""

T = TypeVar("T")


def db_of(args: argparse.Namespace) -> str:
    return settings_of(args).db


def needs_file(target: str) -> None:
    folder = wiring.folder_named(target)
    if folder is not None:
        raise BadStore(folder)
    if wiring.store_kind(target) == "sqlite" and not Path(target).is_file():
        # "ingest first" would meet the refusal to take a moved store's left commits
        left = left_commits(Path(target))
        raise BadStore(error_line(left) if left else no_store_yet(target))


def unwrap(result: Result[T, Any], status: int = EXIT_FAILED) -> T:
    if isinstance(result, Failure):
        error = result.failure()
        raise CliError(error_line(error),
                       EXIT_USAGE if isinstance(error, QueryRejected) else status)
    return result.unwrap()


def opened(result: Result[T, StoreUnavailable]) -> T:
    """The store ``result`` holds, or :class:`BadStore` saying why it could not be opened."""
    if isinstance(result, Failure):
        raise BadStore(error_line(result.failure()))
    return result.unwrap()


async def named_origin(command: Awaitable[int], args: argparse.Namespace) -> int:
    """``command``'s status; a :class:`BadStore` it raises names where the ``db`` value came
    from when not from a flag (``$HARKBACK_DB``, a line of the config file): the user would
    look at a command line that never named it."""
    try:
        return await command
    except BadStore as error:
        told = settings_of(args).told("db")
        if told is None:
            raise
        raise CliError(f"{error} ({told})", error.status) from None


def open_store(target: str, *, readonly: bool, create: bool = False,
               args: argparse.Namespace | None = None, existing: bool = False) -> SessionStore:
    """Open the store ``target`` names or raise :class:`CliError` saying why not
    (``create``: adopt an existing empty file whatever its name; ``existing``: make no
    store in an empty PostgreSQL database, see :func:`wiring.open_store`).

    A writable open migrates a store of an older schema: that is said in one line on
    stderr, never silently, and kept for the ``--json`` payload of the command of
    ``args`` (:func:`noted`)."""
    store = opened(wiring.open_store(target, readonly=readonly, create=create,
                                     existing=existing))
    note = None if readonly else migration_note(store, target)
    if note is not None:
        print(line_of(f"harkback: note: {note}"), file=sys.stderr)
        if args is not None:
            args.store_notes = [*getattr(args, "store_notes", ()), note]
    return store


def migration_note(store: SessionStore, target: str) -> str | None:
    """What the note on a store that opening migrated says (None: it was not migrated).

    >>> class Old:
    ...     schema = Migrated(1, 3, ("add a column",), latest=3)
    >>> migration_note(Old(), "h.db")
    'h.db was migrated from schema version 1 to 3 (harkback migrate does only that)'
    """
    schema = getattr(store, "schema", None)
    if (not isinstance(schema, Migrated) or schema.before == schema.after
            or schema.before < FIRST_VERSION):  # a new store, made at the latest version
        return None
    return (f"{shown_url(target)} was migrated from schema version {schema.before} to "
            f"{schema.after} (harkback migrate does only that)")


def noted(args: argparse.Namespace, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` with the notes on the store the command opened (its migration, see
    :func:`open_store`) added to its ``notes``, when there are any."""
    notes: list[str] = getattr(args, "store_notes", [])
    return {**payload, "notes": [*payload.get("notes", ()), *notes]} if notes else payload


async def holds_nothing(store: SessionStore) -> bool:
    """True when ``store`` can count its sessions and holds none (a store a failed
    import created, to take away again: :func:`~harkback.pipeline.wiring.discard_new`)."""
    counting = store.stats()
    if counting is None:
        return False
    counted = as_result(await counting.awaitable())
    return counted.map(lambda stats: stats.sessions == 0).value_or(False)


def embedder_of(args: argparse.Namespace) -> Embedder | None:
    chosen = settings_of(args)
    return unwrap(wiring.embedder_for(chosen.embedder, chosen.model_environment(os.environ)))


async def embed_after(store: SessionStore, embedder: Embedder | None, progress: bool | None,
                      counted: Callable[[int], None] | None = None,
                      sessions: Collection[str] | None = None) -> EmbedSummary | None:
    """Embed what an ingest, import or sync stored (of ``sessions`` only, when given:
    ``None`` embeds every message lacking a vector), when an embedder is configured
    (``counted`` hears how many messages have a vector so far)."""
    if embedder is None:
        return None
    vectors = store.vector_store()
    if vectors is None:
        raise CliError("this store keeps no vectors; leave out --embedder")
    return await embed_missing(vectors, embedder, progress=progress, counted=counted,
                               sessions=sessions)


async def release(embedder: Embedder | None) -> None:
    if embedder is not None:
        await embedder.aclose()


def name_stopped(embedded: EmbedSummary | None, *, after_import: bool = False) -> None:
    """Name an embedding that stopped in one line on stderr, as every failure is (the
    ``--json`` payload, or an import's report of what it stored, says it too);
    ``after_import``: it followed an ingest or import, whose sessions are stored whatever
    became of it."""
    if embedded is None or embedded.ok:
        return
    if after_import and embedded.error is not None:
        print(line_of(
            f"harkback: the sessions are stored; their vectors are not (embedded "
            f"{embedded.embedded} message(s) with {embedded.model}, then stopped: "
            f"{embedded.error.message()}); {embedded.go_on_when()}, harkback embed makes "
            "the rest"), file=sys.stderr)
        return
    print(line_of(f"harkback: {embedded.describe()}"), file=sys.stderr)


def embed_payload(summary: EmbedSummary, note: str | None = None) -> dict[str, Any]:
    """The ``embedding`` of a ``--json`` payload; ``note``: what is left to ``harkback
    embed`` (:func:`~harkback.pipeline.embed_scope.left_to_embed`), when there is some."""
    return {"model": summary.model, "embedded": summary.embedded, "complete": summary.ok,
            "error": summary.error.message() if summary.error is not None else None,
            **({"note": note} if note else {})}


def name_skips(named: Sequence[Skip], total: int, *, verbose: bool) -> None:
    """Name damaged input on stderr (``total`` pieces, ``named`` of them known by place),
    each with what became of it (``(skipped)``, ``(repaired)``, ``(ignored)`` ...): all of
    it with --verbose, else the first :data:`NAMED_SKIPS`, then a count."""
    shown = named if verbose else named[:NAMED_SKIPS]
    for skip in shown:
        # stderr is not made safe as human stdout is: a damaged line may hold escapes
        print(line_of(f"harkback: {skip.describe()} ({skip.outcome})"), file=sys.stderr)
    rest = total - len(shown)
    if rest > 0:
        more = "" if verbose else " (--verbose names them)"
        print(f"harkback: {rest} more damaged line(s) or field(s){more}", file=sys.stderr)


def finished(ok: bool, skips: int, embedded: EmbedSummary | None = None) -> int:
    """The exit status of an ingest, import or sync: failed, done with skips (or with the
    sessions stored but their vectors not all made: ``embedded`` stopped), or done.

    >>> finished(True, 0), finished(True, 2), finished(False, 2)
    (0, 3, 1)
    """
    partial = skips > 0 or (embedded is not None and not embedded.ok)
    return EXIT_FAILED if not ok else EXIT_SKIPPED if partial else EXIT_OK
