"""``harkback check`` while a sync writes the store: a file opened ``immutable`` (no
writer was there) and then written reads as pages from two moments; that is no damage."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harkback.adapters.sqlite_files import read_only_mode
from harkback.adapters.stores import sqlite_check
from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run


def test_a_sync_writing_during_the_check_is_not_taken_for_damage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = ingested(tmp_path, [conversation(f"s{i}", ("user", f"docker note {i}"),
                                          ("assistant", "restart " * 30), title=f"t{i}")
                             for i in range(100)])
    assert read_only_mode(db) == "immutable"  # no writer around: the check reads so
    more = tmp_path / "more.jsonl"
    more.write_text("\n".join(json.dumps(conversation_to_json(conversation(
        f"m{i}", ("user", f"kube {i} " * 20), ("assistant", "ok " * 50), title=f"x{i}")))
        for i in range(1000)) + "\n", encoding="utf-8")
    pages = sqlite_check._pages
    writes = [more]

    def a_sync_meanwhile(connection: sqlite3.Connection, fine: list[str],
                         damaged: list[str]) -> bool:
        while writes:  # a real writer, once, between the check's open and its reads
            done = run("ingest", str(writes.pop()), db=db)
            assert done.returncode == 0, done.stderr
        return pages(connection, fine, damaged)

    monkeypatch.setattr(sqlite_check, "_pages", a_sync_meanwhile)
    found = sqlite_check.check(db)
    assert (found.damaged, found.advice) == ((), None)
    assert "all 2200 messages are in the full-text index" in found.fine
