"""Two transcript files with one session id (a copied rollout): both kept, the copy named."""

from __future__ import annotations

import json
import os
from pathlib import Path

from harkback.adapters.sources.codex import CODEX
from harkback.adapters.sources.transcripts import TranscriptImporter
from harkback.adapters.stores.import_ledger import SqliteImportLedger
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.importing import ImportOutcome, run_import
from harkback.pipeline.sync_gone import settle_gone

DAY = "2026/11/20"
FIRST = f"{DAY}/rollout-2026-11-20T10-00-00-aaaa.jsonl"
COPY = f"{DAY}/rollout-2026-11-20T11-00-00-bbbb.jsonl"


def rollout(root: Path, name: str, text: str) -> None:
    """A one-request Codex rollout of session ``cx1`` at ``root/name``."""
    lines = [{"timestamp": "2026-11-20T10:00:00Z", "type": "session_meta",
              "payload": {"id": "cx1", "cwd": "/w"}},
             {"timestamp": "2026-11-20T10:00:01Z", "type": "response_item",
              "payload": {"type": "message", "role": "user",
                          "content": [{"type": "input_text", "text": text}]}}]
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


async def imported(root: Path, db: Path, *, sync: bool = False) -> ImportOutcome:
    """Import ``root`` into ``db``; with ``sync``, also remove what left the folder (as
    ``sync --prune`` does)."""
    importer = TranscriptImporter(CODEX, root)
    with SqliteStore.open(db).unwrap() as store:
        ledger = SqliteImportLedger(store)
        outcome = await run_import(importer, store, ledger, progress=False)
        if sync:
            (await settle_gone(importer.key, outcome.gone, store, ledger,
                               marked=outcome.marked, prune=True)).unwrap()
        return outcome


async def recalled(db: Path, query: str) -> list[str]:
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        payload = (await Harkback(store=store).search(query)).to_payload()
    return [result["session_id"] for result in payload["results"]]


async def test_both_copies_are_stored_and_the_second_is_named(tmp_path: Path) -> None:
    root, db = tmp_path / "sessions", tmp_path / "h.db"
    rollout(root, FIRST, "zebra migration plan")
    rollout(root, COPY, "yak shaving checklist")
    outcome = await imported(root, db)
    again = await imported(root, db)
    assert await recalled(db, "zebra") == ["cx1"]
    assert await recalled(db, "yak") == ["cx1@rollout-2026-11-20T11-00-00-bbbb"]
    assert [skip.describe() for skip in outcome.skipped] == [
        f"{root / COPY}: duplicate session id: 'cx1' is also in {FIRST}; "
        "stored as 'cx1@rollout-2026-11-20T11-00-00-bbbb'"]
    assert (outcome.delta.sessions_added, again.delta.sessions_added, again.skips) == (2, 0, 0)


async def test_a_copy_that_arrives_later_does_not_replace_the_stored_session(
        tmp_path: Path) -> None:
    root, db = tmp_path / "sessions", tmp_path / "h.db"
    rollout(root, FIRST, "zebra migration plan")
    await imported(root, db)
    rollout(root, COPY, "yak shaving checklist")
    later = await imported(root, db)
    assert await recalled(db, "zebra") == ["cx1"]
    assert await recalled(db, "yak") == ["cx1@rollout-2026-11-20T11-00-00-bbbb"]
    assert later.skips == 1


async def test_syncing_away_one_copy_keeps_the_other(tmp_path: Path) -> None:
    root, db = tmp_path / "sessions", tmp_path / "h.db"
    rollout(root, FIRST, "zebra migration plan")
    rollout(root, COPY, "yak shaving checklist")
    await imported(root, db)
    (root / FIRST).unlink()
    await imported(root, db, sync=True)
    assert await recalled(db, "zebra") == []
    assert await recalled(db, "yak") == ["cx1@rollout-2026-11-20T11-00-00-bbbb"]


async def test_a_renamed_file_keeps_its_session_id(tmp_path: Path) -> None:
    """A file gone from the listing holds no id: its successor is not called a copy."""
    root, db = tmp_path / "sessions", tmp_path / "h.db"
    rollout(root, FIRST, "zebra migration plan")
    await imported(root, db)
    (root / FIRST).rename(root / COPY)
    moved = await imported(root, db, sync=True)
    assert await recalled(db, "zebra") == ["cx1"]
    assert moved.skips == 0


async def test_copies_under_one_file_name_in_two_folders_are_all_kept(tmp_path: Path) -> None:
    """Three day folders holding a rollout of one name: the second copy is stored under the
    file's name, the third under its path (both were stored as ``cx1@NAME``, the third
    replacing the second without a word); a second import keeps the same ids."""
    root, db = tmp_path / "sessions", tmp_path / "h.db"
    name = "rollout-2026-11-20T10-00-00-aaaa.jsonl"
    for day, text in (("2026/11/20", "zebra migration plan"), ("2026/11/21", "yak shaving"),
                      ("2026/11/22", "okapi grooming")):
        rollout(root, f"{day}/{name}", text)
    first = await imported(root, db)
    os.utime(root / f"2026/11/22/{name}", (1_700_000_000, 1_700_000_000))
    again = await imported(root, db)
    copy = "cx1@rollout-2026-11-20T10-00-00-aaaa"
    assert await recalled(db, "zebra") == ["cx1"]
    assert await recalled(db, "yak") == [copy]
    assert await recalled(db, "okapi") == [f"cx1@2026/11/22/{name}"]
    assert (first.delta.sessions_added, again.delta.sessions_added) == (3, 0)
    assert [skip.describe().rsplit("stored as ", 1)[1] for skip in again.skipped] == [
        f"'cx1@2026/11/22/{name}'"]
