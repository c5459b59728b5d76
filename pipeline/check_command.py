"""``harkback check [--repair]``: say whether a store is damaged, what is fine, what is
not and the next step; with ``--repair``, rebuild what can be rebuilt from the stored
messages (a SQLite store's indexes) and check again.

Exit status 0: the store is fine (or was mended); 1: damage remains. A check only reads
(a SQLite file is opened read-only, a PostgreSQL database in a read-only transaction).

Its arguments: :mod:`~harkback.pipeline.cli_check`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from harkback.pipeline import wiring
from harkback.pipeline.command_kit import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    db_of,
    needs_file,
    opened,
)
from harkback.pipeline.in_memory import in_memory_note
from harkback.pipeline.output import print_json
from harkback.pipeline.terminal import line_of
from harkback.stages.shell_words import shell_quoted


async def check(args: argparse.Namespace) -> int:
    """``harkback check``: the findings, and with ``--repair`` the rebuild and re-check."""
    target = db_of(args)
    needs_file(target)
    note = in_memory_note(target, "check")
    if note is not None:
        return _said(args, {"db": target, "healthy": True, "note": note}, note, EXIT_OK)
    kind = wiring.store_kind(target)
    if kind == "postgresql":
        return _postgres(args, target)
    if kind != "sqlite":
        # A URL of another kind: refused in the words every command refuses it with.
        opened(wiring.open_store(target, readonly=True))
        raise CliError(f"{target} names no store harkback checks", EXIT_USAGE)
    if not args.repair:
        from harkback.adapters.stores.sqlite_check import check as check_file
        found = check_file(Path(target))
        return _said(args, found.to_payload(), found.describe(),
                     EXIT_OK if found.healthy else EXIT_FAILED)
    from harkback.adapters.stores.sqlite_repair import repair
    # Progress on stderr, --json or not (stdout keeps the findings), as ingest's bar.
    mended = repair(Path(target), say=lambda line: print(
        line_of(f"{shell_quoted(target)}: {line}"), file=sys.stderr, flush=True))
    lines = [mended.before.describe()]
    if mended.failed is not None:
        lines.append(f"repair: {mended.failed}")
    if mended.done:
        lines += [f"repair: {line}" for line in mended.done]
        lines.append(f"checked again: {mended.after.describe()}")
    elif mended.before.healthy:
        lines.append("repair: nothing to repair")
    else:
        lines.append("repair: nothing was written")
    payload = {**mended.before.to_payload(), "repaired": list(mended.done),
               "repair_failed": mended.failed, "after": mended.after.to_payload()}
    return _said(args, payload, "\n".join(lines),
                 EXIT_OK if mended.after.healthy else EXIT_FAILED)


def _postgres(args: argparse.Namespace, target: str) -> int:
    from harkback.adapters.stores.postgres_check import REPAIR_LINE
    from harkback.adapters.stores.postgres_check import check as check_database
    from harkback.stages.errors import StoreUnavailable
    found = check_database(target)
    if isinstance(found, StoreUnavailable):
        raise CliError(found.reason)
    payload: dict[str, Any] = found.to_payload()
    text = found.describe()
    if args.repair:
        payload["repair_failed"] = REPAIR_LINE
        text += f"\nrepair: {REPAIR_LINE}"
    return _said(args, payload, text, EXIT_OK if found.healthy else EXIT_FAILED)


def _said(args: argparse.Namespace, payload: dict[str, Any], text: str, status: int) -> int:
    if args.json:
        print_json({"success": status == EXIT_OK, **payload})
    else:
        print(text)
    return status
