"""A transcript cut shorter and then written again with other text (an older copy restored
while the agent keeps writing) loses nothing: the new messages are stored after the kept
ones, through ``import``, ``import --full``, ``sync`` and ``sync --prune``, run as commands
on a SQLite file and on PostgreSQL; a transcript emptied to nothing is named as a cut one."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations

SID = "0f0e0d0c-0000-4000-8000-0000000000d8"

db = store_locations("sqlite", "postgres")


def write(path: Path, *runs: tuple[str, int]) -> None:
    """A Claude Code transcript of ``runs`` of messages, each ``(tag, count)``: message ``n``
    of a run says ``TAG n`` and is stamped apart from every other run's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"type": "user", "sessionId": SID, "uuid": f"{tag}{n}",
                         "timestamp": f"2026-03-01T{10 + hour:02d}:{n // 60:02d}:{n % 60:02d}Z",
                         "message": {"role": "user", "content": f"{tag} {n}"}})
             for hour, (tag, count) in enumerate(runs) for n in range(count)]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def command(tmp_path: Path, db: str, *args: str) -> dict[str, int]:
    """``harkback ARGS --json`` on the projects folder (the other sources looked for in an
    empty home): the messages it added, updated, removed and kept, those not none (a sync
    counts only those kept: what it stored is checked with :func:`stored`)."""
    projects = str(tmp_path / "projects")
    where = ["claude-code", projects] if args[0] == "import" else ["--claude-code", projects]
    done = harkback(args[0], *where, *args[1:], "--db", db, "--json",
                    env={"HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"]})
    assert done.returncode == 0, done.stderr
    [outcome] = [s for s in json.loads(done.stdout)["sources"] if s["kind"] == "claude-code"]
    return {what: n for what, n in outcome["messages"].items() if n}


def stored(db: str) -> list[str]:
    """The session's messages as stored, in order."""
    shown = harkback("show", SID, "--db", db, "--json", "--limit", "200")
    assert shown.returncode == 0, shown.stderr
    return [m["content"] for m in json.loads(shown.stdout)["messages"]]


def test_a_transcript_cut_then_written_on_keeps_what_it_kept(db: str, tmp_path: Path) -> None:
    """30 messages; an older copy of 10 put back; the agent writes 5 more: the 20 kept stay,
    the 5 come after them (added, none updated); read again in full, synced, cut and
    restored again, nothing moves or doubles; ``sync --prune`` mirrors the file."""
    path = tmp_path / "projects" / "-w-app" / f"{SID}.jsonl"
    write(path, ("old", 30))
    assert command(tmp_path, db, "import")["added"] == 30
    write(path, ("old", 10))
    assert command(tmp_path, db, "import")["kept"] == 20
    write(path, ("old", 10), ("new", 5))
    counts = command(tmp_path, db, "import")
    assert counts == {"added": 5}
    whole = [f"old {n}" for n in range(30)] + [f"new {n}" for n in range(5)]
    assert stored(db) == whole
    assert command(tmp_path, db, "import", "--full") == {}
    assert command(tmp_path, db, "sync") == {}
    assert stored(db) == whole
    write(path, ("old", 10), ("new", 2))  # cut again (a copy being put back) ...
    assert command(tmp_path, db, "sync")["kept"] == 23
    write(path, ("old", 10), ("new", 5), ("more", 1))  # ... then whole, and written on
    assert command(tmp_path, db, "sync") == {}
    assert stored(db) == [*whole, "more 0"]
    searched = harkback("search", "old 25", "--db", db, "--json")
    assert SID in searched.stdout, searched.stdout[-400:]
    write(path, ("old", 10), ("new", 5), ("more", 2))  # a pruning sync reads it: mirrored
    assert command(tmp_path, db, "sync", "--prune") == {}
    assert stored(db) == [*whole[:10], *whole[30:], "more 0", "more 1"]
    write(path, ("old", 10), ("new", 5), ("more", 3))  # and from then on read as it is
    assert command(tmp_path, db, "sync") == {}
    assert stored(db) == [*whole[:10], *whole[30:], "more 0", "more 1", "more 2"]


def test_a_transcript_emptied_is_named_and_written_on_after_what_it_held(
        db: str, tmp_path: Path) -> None:
    """A transcript emptied to nothing is named as one cut shorter (it said "no claude-code
    transcripts found"), its 12 messages kept; written on, its new messages come after them."""
    path = tmp_path / "projects" / "-w-app" / f"{SID}.jsonl"
    write(path, ("old", 12))
    assert command(tmp_path, db, "import")["added"] == 12
    path.write_bytes(b"")
    emptied = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db)
    assert emptied.returncode == 0, emptied.stderr
    assert emptied.stdout.splitlines()[1:] == [
        "  sessions: 0 added, 0 updated, 0 skipped (unchanged since the last import)",
        "  messages: 0 added, 0 updated, 0 removed, 12 kept past a cut",
        f"  note: {path} is shorter than when last read: 12 stored message(s) kept"]
    write(path, ("", 0), ("new", 3))  # written after: stamped later than the 12
    assert command(tmp_path, db, "sync") == {}
    assert stored(db) == [*(f"old {n}" for n in range(12)), "new 0", "new 1", "new 2"]


def test_a_transcript_rewritten_longer_with_other_lines_keeps_what_it_held(
        db: str, tmp_path: Path) -> None:
    """30 messages, then the file replaced by an older copy of 10 written on with 25 others
    (larger than before, so not shorter): the bytes read before are not there, the file is
    named and the 20 it no longer holds are kept, the 25 stored after them."""
    path = tmp_path / "projects" / "-w-app" / f"{SID}.jsonl"
    write(path, ("old", 30))
    assert command(tmp_path, db, "import")["added"] == 30
    write(path, ("old", 10), ("new", 25))
    rewritten = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db)
    assert rewritten.returncode == 0, rewritten.stderr
    assert rewritten.stdout.splitlines()[2:] == [
        "  messages: 25 added, 0 updated, 0 removed, 20 kept past a cut",
        f"  note: {path} holds other lines than when last read (rewritten): 20 stored "
        "message(s) kept"]
    assert stored(db) == [*(f"old {n}" for n in range(30)), *(f"new {n}" for n in range(25))]
    write(path, ("old", 10), ("new", 26))  # appended to: read as it grows, unsaid
    assert command(tmp_path, db, "sync") == {}
    assert stored(db) == [*(f"old {n}" for n in range(30)), *(f"new {n}" for n in range(26))]


def test_an_older_copy_imported_from_a_backup_keeps_the_store_s_copy_as_it_grows(
        db: str, tmp_path: Path) -> None:
    """A backup holding an older copy (10 of the store's 40 messages) keeps the 40; read again
    once it grew by 2 other messages, it keeps them still (28 were removed), the 2 after."""
    write(tmp_path / "projects" / "-w-app" / f"{SID}.jsonl", ("old", 40))
    assert command(tmp_path, db, "import")["added"] == 40
    backup = tmp_path / "backup" / "-w-app" / f"{SID}.jsonl"
    write(backup, ("old", 10))
    imported = harkback("import", "claude-code", str(tmp_path / "backup"), "--db", db)
    assert "30 kept past a cut" in imported.stdout, imported.stdout
    write(backup, ("old", 10), ("new", 2))
    grown = harkback("import", "claude-code", str(tmp_path / "backup"), "--db", db)
    assert "messages: 2 added, 0 updated, 0 removed" in grown.stdout, grown.stdout
    assert stored(db) == [*(f"old {n}" for n in range(40)), "new 0", "new 1"]


def test_a_copy_of_a_transcript_whose_messages_moved_read_from_elsewhere_moves_them_too(
        db: str, tmp_path: Path) -> None:
    """A transcript cut and written on (its 5 new messages stored after the 20 kept), copied
    to a backup folder and imported from there (no mark: new to that source): the 5 are found
    where they are stored, so nothing kept is overwritten (5 were, counted updated) and
    nothing is stored twice; the backup, grown by one, stores it after them."""
    path = tmp_path / "projects" / "-w-app" / f"{SID}.jsonl"
    write(path, ("old", 30))
    command(tmp_path, db, "import")
    write(path, ("old", 10))
    command(tmp_path, db, "import")
    write(path, ("old", 10), ("new", 5))
    command(tmp_path, db, "import")
    whole = [f"old {n}" for n in range(30)] + [f"new {n}" for n in range(5)]
    backup = tmp_path / "backup" / "-w-app" / f"{SID}.jsonl"
    backup.parent.mkdir(parents=True)
    backup.write_bytes(path.read_bytes())
    imported = harkback("import", "claude-code", str(tmp_path / "backup"), "--db", db)
    assert "0 added, 0 updated, 0 removed" in imported.stdout, imported.stdout
    assert stored(db) == whole
    write(backup, ("old", 10), ("new", 6))
    grown = harkback("import", "claude-code", str(tmp_path / "backup"), "--db", db)
    assert "messages: 1 added, 0 updated, 0 removed" in grown.stdout, grown.stdout
    assert stored(db) == [*whole, "new 5"]


def test_a_transcript_cut_and_written_on_between_two_reads_keeps_what_it_held(
        db: str, tmp_path: Path) -> None:
    """30 messages; before the next read an older copy of 10 is put back and written on with
    5 others (still shorter than before): the 5 come after the 30 (they overwrote 5 of them,
    counted updated), and the file goes on from there."""
    path = tmp_path / "projects" / "-w-app" / f"{SID}.jsonl"
    write(path, ("old", 30))
    command(tmp_path, db, "import")
    write(path, ("old", 10), ("new", 5))
    assert command(tmp_path, db, "import") == {"added": 5, "kept": 20}
    whole = [f"old {n}" for n in range(30)] + [f"new {n}" for n in range(5)]
    assert stored(db) == whole
    write(path, ("old", 10), ("new", 6))
    command(tmp_path, db, "sync")
    assert stored(db) == [*whole, "new 5"]


def test_a_rewritten_transcript_whose_stored_text_reads_otherwise_now_is_not_stored_twice(
        db: str, tmp_path: Path) -> None:
    """30 messages synced with ``--keep-secrets``, the first holding a token; the file then
    rewritten (an older copy of 10 written on with 25 others) and synced with secrets
    redacted: the 10 are the stored ones (the first now redacted), so they are not stored
    again after the store's end (all 10 were, the session holding 65)."""
    path = tmp_path / "projects" / "-w-app" / f"{SID}.jsonl"
    token = "ghp_" + "abcdefghijklmnopqrstuvwxyz0123456789"
    write(path, ("old", 30))
    path.write_text(path.read_text(encoding="utf-8").replace('"old 0"', f'"old 0 {token}"'),
                    encoding="utf-8")
    command(tmp_path, db, "sync", "--keep-secrets")
    older = path.read_text(encoding="utf-8").splitlines(keepends=True)[:10]
    write(path, ("old", 10), ("new", 25))
    path.write_text("".join(older) + "".join(path.read_text(encoding="utf-8").splitlines(
        keepends=True)[10:]), encoding="utf-8")
    assert command(tmp_path, db, "sync")["kept"] == 20
    messages = stored(db)
    assert token not in messages[0]
    assert messages[1:] == [*(f"old {n}" for n in range(1, 30)),
                            *(f"new {n}" for n in range(25))]
