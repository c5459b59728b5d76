"""A transcript cut shorter (a rotation, an older copy put back, damage) keeps the stored
messages past the cut, on ``import`` and ``sync``, SQLite and PostgreSQL; the file is named
once; ``sync --prune`` mirrors it instead."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from harkback.pipeline.facade import Harkback
from harkback.pipeline.sync import SourceReport, locate, sync
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message, Session
from tests.adapters.stores.store_contract import ok
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import new_stores

SID = "0f0e0d0c-0000-4000-8000-0000000000c7"
WORDS = ("apricot", "bramble", "cobalt", "dulcimer", "ember", "fjord", "gossamer", "halcyon")

store = new_stores("sqlite", "postgres")
"""A new, empty store of each kind."""


def write(path: Path, count: int, *, first: int = 0) -> None:
    """A Claude Code transcript of messages ``first`` .. ``count - 1`` (each names its number
    in words no other message has), written whole under ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"type": "user", "sessionId": SID, "uuid": f"u{n}", "cwd": "/w/app",
                         "timestamp": f"2026-03-01T10:{n // 60 % 60:02d}:{n % 60:02d}Z",
                         "message": {"role": "user",
                                     "content": f"note {n} {WORDS[n % 8]}{n}zz"}})
             for n in range(first, count)]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def transcript(tmp_path: Path) -> Path:
    return tmp_path / "projects" / "-w-app" / f"{SID}.jsonl"


def synced(tmp_path: Path, store: SessionStore, *, prune: bool = False) -> SourceReport:
    located = locate({"claude-code": tmp_path / "projects", "hermes": tmp_path / "none",
                      "codex": tmp_path / "none"})
    reports = asyncio.run(sync(located, store, progress=False, prune=prune))
    [report] = [r for r in reports if r.located]
    assert report.status == "synced", report
    return report


def contents(store: SessionStore) -> list[str]:
    return [m.content for m in asyncio.run(ok(store.messages([SID])))]


def found(store: SessionStore, word: str) -> list[str]:
    payload = asyncio.run(Harkback(store=store).search(word)).to_payload()
    assert payload["success"], payload
    return [r["session_id"] for r in payload["results"]]


def test_a_sync_of_a_transcript_cut_shorter_keeps_what_is_past_the_cut(
        store: SessionStore, tmp_path: Path) -> None:
    """300 messages, then the file replaced by its first 10: all 300 stay, found and
    counted kept, the file named once; appended to, it grows past the cut as it is read."""
    path = transcript(tmp_path)
    write(path, 300)
    assert synced(tmp_path, store).new == 1
    write(path, 10)
    report = synced(tmp_path, store)
    assert report.messages_kept == 290
    assert report.to_payload()["messages"] == {"kept": 290}
    assert report.notes == (f"{path} is shorter than when last read: 290 stored message(s) "
                            "kept",)
    assert len(contents(store)) == 300
    assert found(store, "bramble249zz") == [SID]
    # The file unchanged: not read again, not named again.
    assert synced(tmp_path, store).notes == ()
    assert len(contents(store)) == 300
    # Grown again (still shorter than what is stored): read again, what is past kept.
    write(path, 12)
    assert synced(tmp_path, store).notes == ()
    assert len(contents(store)) == 300
    assert found(store, "cobalt298zz") == [SID]


def test_sync_prune_mirrors_a_transcript_cut_shorter(store: SessionStore,
                                                     tmp_path: Path) -> None:
    """With ``--prune`` the messages past the cut go, as the sessions of deleted files go,
    and the note says so."""
    path = transcript(tmp_path)
    write(path, 40)
    synced(tmp_path, store)
    write(path, 5)
    report = synced(tmp_path, store, prune=True)
    assert report.messages_kept == 0
    assert report.notes == (f"{path} is shorter than when last read: 35 stored message(s) "
                            "removed (sync --prune)",)
    assert len(contents(store)) == 5
    assert found(store, "bramble25zz") == []


def test_import_of_a_transcript_cut_shorter_removes_nothing_and_says_so(
        tmp_path: Path) -> None:
    """``harkback import`` never removes: a SQLite file, the CLI's line and its JSON."""
    path = transcript(tmp_path)
    db = str(tmp_path / "h.db")
    write(path, 120)
    first = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db)
    assert first.returncode == 0, first.stderr
    write(path, 20)
    again = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db)
    assert again.returncode == 0, again.stderr
    assert "messages: 0 added, 0 updated, 0 removed, 100 kept past a cut" in again.stdout
    assert again.stdout.count(f"{path} is shorter than when last read: 100 stored "
                              "message(s) kept") == 1
    shown = harkback("show", SID, "--db", db, "--json", "--around", "115")
    assert "dulcimer115zz" in shown.stdout, shown.stdout[-400:]
    searched = harkback("search", "dulcimer115zz", "--db", db, "--json")
    assert SID in searched.stdout, searched.stdout[-400:]
    write(path, 30, first=0)  # grown again, still shorter than the store
    grown = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db,
                     "--json")
    [outcome] = json.loads(grown.stdout)["sources"]
    assert outcome["messages"] == {"added": 0, "updated": 0, "removed": 0, "kept": 0}
    assert outcome["notes"] == []  # named once, when it was found shorter
    searched = harkback("search", "dulcimer115zz", "--db", db, "--json")
    assert SID in searched.stdout, searched.stdout[-400:]


def test_a_transcript_cut_to_one_line_keeps_its_session(tmp_path: Path) -> None:
    """A file cut to its first line (damage): nothing removed."""
    path = transcript(tmp_path)
    db = str(tmp_path / "h.db")
    write(path, 30)
    harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db)
    write(path, 1)
    again = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db)
    assert again.returncode == 0, again.stderr
    assert "0 removed" in again.stdout, again.stdout
    shown = harkback("show", SID, "--db", db, "--json", "--around", "28")
    assert "ember28zz" in shown.stdout, shown.stdout[-400:]


def test_an_older_copy_imported_from_another_folder_keeps_what_the_store_holds_past_it(
        store: SessionStore, tmp_path: Path) -> None:
    """A backup imported to recover sessions Claude Code deleted holds an older, shorter
    copy of a session the store has whole: the store keeps all of it and names the file
    (the session was cut to the backup's 10 messages, unsaid)."""
    write(transcript(tmp_path), 60)
    synced(tmp_path, store)
    backup = tmp_path / "backup"
    write(transcript(backup), 10)
    report = synced(backup, store)
    assert report.messages_kept == 50
    assert report.notes == (f"{transcript(backup)} holds less of its session than the store "
                            "(an older copy?): 50 stored message(s) kept",)
    assert len(contents(store)) == 60
    assert found(store, "gossamer54zz") == [SID]


def test_a_session_stored_from_another_source_is_replaced_not_mixed(
        store: SessionStore, tmp_path: Path) -> None:
    """Two sources that use one id hold two conversations: the transcript's copy replaces
    the other source's, named as before, and keeps none of its messages."""
    other = tuple(Message(session_id=SID, position=n, role="user", content=f"other {n}")
                  for n in range(20))
    asyncio.run(ok(store.ingest([Conversation(Session(id=SID, source="hermes"), other)])))
    write(transcript(tmp_path), 5)
    report = synced(tmp_path, store)
    assert report.messages_kept == 0
    assert [n.split(";")[1] for n in report.notes] == [
        " the copy from source 'claude-code' replaced it"]
    assert len(contents(store)) == 5
