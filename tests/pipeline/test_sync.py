"""``harkback sync``: every source found, only what changed read, what is gone removed with
``--prune`` (kept without it: ``test_sync_keep``)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest

from harkback.adapters.sources.importing import file_fingerprint
from harkback.adapters.sources.replays import fingerprint_of
from harkback.adapters.sources.transcript_lines import TORN
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.cli import main
from harkback.pipeline.sync import locate
from harkback.pipeline.watch import touched
from harkback.stages.imports import SourceKey
from tests.adapters.stores.store_contract import ok
from tests.pipeline.sync_home import (
    ARCHIVED,
    CLAUDE_FILE,
    CLAUDE_SESSION,
    DAMAGED,
    DONE_WITH_SKIPS,
    ENV_HOMES,
    VISIBLE,
    claude_line,
    found_ids,
    make_home,
    repair,
    source_files,
)
from tests.support.hermes_db import HermesFile


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with all three agents' histories, made the user's ``HOME``."""
    made = make_home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(made))
    for name in ENV_HOMES:
        monkeypatch.delenv(name, raising=False)
    return made


def sync(capsys: pytest.CaptureFixture[str], db: Path, *flags: str) -> tuple[int, Any]:
    """Run ``harkback sync --json`` and return its status and payload."""
    status = main(["sync", "--db", str(db), "--json", *flags])
    return status, json.loads(capsys.readouterr().out)


def counts(payload: dict[str, Any], kind: str) -> dict[str, int]:
    """The session counts of the one source of ``kind``."""
    (report,) = [s for s in payload["sources"] if s["kind"] == kind]
    return dict(report["sessions"])


def test_every_source_at_its_default_location_is_imported(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Hermes, Claude Code and Codex are found under HOME and become searchable."""
    db = tmp_path / "h.db"
    status, payload = sync(capsys, db)
    assert (status, payload["found"], payload["not_found"]) == (
        DONE_WITH_SKIPS, ["hermes", "claude-code", "codex"], [])
    assert counts(payload, "hermes")["new"] == 1
    assert counts(payload, "claude-code")["new"] > 0 and counts(payload, "codex")["new"] > 0
    assert found_ids(db, "pelican") == [VISIBLE]
    assert found_ids(db, "refresh path untested") == [CLAUDE_SESSION]
    assert found_ids(db, "location block Access-Control-Allow-Origin")[0] == (
        "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")


def test_damaged_lines_are_named_as_an_import_names_them(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each damaged transcript line is named file:line on stderr and in ``skipped_lines``,
    and the status is 3; once the files are repaired, a sync exits 0 with none named."""
    db = tmp_path / "h.db"
    status = main(["sync", "--db", str(db), "--json"])
    printed = capsys.readouterr()
    payload = json.loads(printed.out)
    assert (status, payload["success"]) == (DONE_WITH_SKIPS, True)
    for kind, (file, line) in DAMAGED.items():
        (report,) = [s for s in payload["sources"] if s["kind"] == kind]
        assert report["skipped_lines"] == [{"file": str(home / file), "line": line,
                                            "reason": "unreadable line: not JSON",
                                            "outcome": "skipped"}]
        assert report["skipped_lines_total"] == 1
    assert printed.err.splitlines() == [
        f"harkback: {home / file}:{line}: unreadable line: not JSON (skipped)"
        for file, line in DAMAGED.values()]
    repair(home)
    status, payload = sync(capsys, db)
    assert status == 0
    assert [s["skipped_lines"] for s in payload["sources"]] == [[], [], []]


def test_the_agents_own_variables_move_their_defaults(tmp_path: Path) -> None:
    """CLAUDE_CONFIG_DIR, CODEX_HOME and HERMES_HOME are honoured, as the agents do."""
    make_home(tmp_path)
    located = locate({}, environ={"HERMES_HOME": str(tmp_path / ".hermes"),
                                  "CLAUDE_CONFIG_DIR": str(tmp_path / ".claude"),
                                  "CODEX_HOME": str(tmp_path / ".codex")})
    assert [p.where for p in located] == [
        str(tmp_path / ".hermes" / "state.db"), str(tmp_path / ".claude" / "projects"),
        str(tmp_path / ".codex" / "sessions")]


def test_a_flag_overrides_a_location_and_naming_nothing_fails(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--claude-code PATH`` reads that folder; a flag naming no source is a failure."""
    moved = home / "elsewhere"
    (home / ".claude" / "projects").rename(moved)
    status, payload = sync(capsys, tmp_path / "h.db", "--claude-code", str(moved))
    assert status == DONE_WITH_SKIPS and counts(payload, "claude-code")["new"] > 0
    status, payload = sync(capsys, tmp_path / "h.db", "--codex", str(home / "nope"))
    (codex,) = [s for s in payload["sources"] if s["kind"] == "codex"]
    assert (status, codex["status"]) == (1, "failed")
    assert str(home / "nope") in codex["error"]
    assert "codex" in payload["not_found"] and "codex" not in payload["found"]
    assert main(["sync", "--db", str(tmp_path / "h.db"), "--codex", str(home / "nope")]) == 1
    found, _, missing = capsys.readouterr().out.splitlines()[-1].partition("; not found: ")
    assert "codex" in missing.split(", ") and "codex" not in found


class _Opens:
    """Records every file opened under ``root`` while ``active`` (an audit hook)."""

    root: ClassVar[str | None] = None
    seen: ClassVar[list[str]] = []

    @classmethod
    def hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if cls.root is None or event not in ("open", "sqlite3.connect") or not args:
            return
        target = args[0]
        if isinstance(target, str | bytes | os.PathLike) and cls.root in os.fsdecode(target):
            cls.seen.append(f"{event} {os.fsdecode(target)}")


sys.addaudithook(_Opens.hook)


def test_an_unchanged_machine_opens_no_source_file(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second sync stats the sources but opens none of their files, and changes nothing."""
    db = tmp_path / "h.db"
    _, first = sync(capsys, db)
    _Opens.root, _Opens.seen = str(home), []
    try:
        status, again = sync(capsys, db)
    finally:
        _Opens.root = None
    assert _Opens.seen == []
    assert status == 0
    for kind in ("hermes", "claude-code", "codex"):
        assert counts(again, kind) == {**counts(first, kind), "new": 0,
                                       "unchanged": counts(first, kind)["found"],
                                       "skipped": counts(first, kind)["found"]}


def test_sessions_a_sync_found_unchanged_are_called_so_in_its_table_and_its_json(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A second sync's table and JSON both call the sessions it found unchanged
    "unchanged" (the JSON keeps "skipped", their old name): "skipped" also named the lines
    an import leaves out."""
    db = tmp_path / "h.db"
    sync(capsys, db)
    main(["sync", "--db", str(db)])
    table = capsys.readouterr().out.splitlines()
    column = table[0].split().index("unchanged")
    rows = {line.split()[0]: line.split() for line in table[2:5]}
    _, payload = sync(capsys, db)
    for kind in ("hermes", "claude-code", "codex"):
        shown = int(rows[kind][column])
        assert shown > 0
        assert counts(payload, kind)["unchanged"] == shown == counts(payload, kind)["skipped"]


def test_a_deleted_transcript_takes_its_sessions_out_of_the_store(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --prune, sessions whose files are deleted (a session and its sub-agent's) are
    removed; the others stay; the ledger forgets the files."""
    db = tmp_path / "h.db"
    sync(capsys, db)
    main_file = home / ".claude" / "projects" / CLAUDE_FILE
    main_file.unlink()
    shutil.rmtree(main_file.with_suffix(""))
    status, payload = sync(capsys, db, "--prune")
    assert status == 0 and counts(payload, "claude-code")["removed"] == 2
    assert found_ids(db, "refresh path untested") == []
    assert found_ids(db, "NATS p99 latency") == ["5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"]
    assert counts(sync(capsys, db, "--prune")[1], "claude-code")["removed"] == 0


def test_hermes_hidden_and_archived_sessions_stay_out(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Hidden and archived sessions (and a continuation of one) are left out, and a session
    archived later is removed, then back once unarchived or with --archived."""
    db = tmp_path / "h.db"
    _, payload = sync(capsys, db)
    (hermes,) = [s for s in payload["sources"] if s["kind"] == "hermes"]
    assert hermes["left_out"] == {"hidden session": 1, "archived session": 2}
    assert found_ids(db, "quokka") == [] and found_ids(db, "wombat") == []
    assert found_ids(db, "wombat", hidden_sources=()) == []  # not stored at all
    writer = HermesFile.reopen(home / ".hermes" / "state.db", "v30")
    writer.update("sessions", VISIBLE, archived=1)
    writer.close()
    assert counts(sync(capsys, db)[1], "hermes")["removed"] == 1
    assert found_ids(db, "pelican") == []
    _, with_archived = sync(capsys, db, "--archived")
    assert counts(with_archived, "hermes")["new"] == 3
    assert found_ids(db, "wombat") == [ARCHIVED] and found_ids(db, "quokka") == []
    assert found_ids(db, "pelican") == [VISIBLE]


def test_a_session_deleted_from_hermes_is_removed(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A Hermes session whose rows are deleted leaves the store at the next sync --prune."""
    db = tmp_path / "h.db"
    sync(capsys, db)
    writer = HermesFile.reopen(home / ".hermes" / "state.db", "v30")
    writer.connection.execute("DELETE FROM messages WHERE session_id = ?", (VISIBLE,))
    writer.connection.execute("DELETE FROM sessions WHERE id = ?", (VISIBLE,))
    writer.close()
    assert counts(sync(capsys, db, "--prune")[1], "hermes")["removed"] == 1
    assert found_ids(db, "pelican") == []


def test_a_transcript_being_written_is_read_again_next_time(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A half-written last line is not imported nor the file marked as read; once the line
    is complete the next sync picks it up."""
    db = tmp_path / "h.db"
    sync(capsys, db)
    path = home / ".claude" / "projects" / CLAUDE_FILE
    line = claude_line(CLAUDE_SESSION, "the flamingo cache warms too slowly", "u-late")
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line[:40])
    _, payload = sync(capsys, db)
    (claude,) = [s for s in payload["sources"] if s["kind"] == "claude-code"]
    assert (claude["left_out"][TORN], claude["left_out"]["unreadable line"]) == (1, 1)
    assert found_ids(db, "flamingo") == []

    async def mark() -> str:
        with SqliteStore.open(db, readonly=True).unwrap() as store:
            ledger = store.import_ledger()
            state = await ok(ledger.state(SourceKey("claude-code",
                                                    str(home / ".claude" / "projects"))))
        # The file's fingerprint, without what the mark keeps of its lines (summaries ...).
        return fingerprint_of(state.marks_by_item()[CLAUDE_FILE].fingerprint)
    assert asyncio.run(mark()) != file_fingerprint(path)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line[40:])
    _, payload = sync(capsys, db)
    assert counts(payload, "claude-code")["updated"] == 1
    assert found_ids(db, "flamingo cache") == [CLAUDE_SESSION]
    assert asyncio.run(mark()) == file_fingerprint(path)


def test_missing_sources_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Sources not found are listed as such; with none at all, sync fails and writes nothing."""
    home = make_home(tmp_path / "home")
    monkeypatch.setenv("HOME", str(home))
    for name in ENV_HOMES:
        monkeypatch.delenv(name, raising=False)
    for folder in (".hermes", ".claude"):
        os.rename(home / folder, tmp_path / folder)
    db = tmp_path / "h.db"
    assert main(["sync", "--db", str(db)]) == DONE_WITH_SKIPS
    out = capsys.readouterr().out
    assert "found: codex; not found: hermes, claude-code" in out
    assert f"not found at {home / '.hermes'}\n" in out
    os.rename(home / ".codex", tmp_path / ".codex")
    empty = tmp_path / "empty.db"
    assert main(["sync", "--db", str(empty)]) == 1
    error = capsys.readouterr().err
    assert error.startswith("harkback: no agent history found (looked in ")
    assert error.endswith("; name one with --hermes, --claude-code or --codex\n")
    assert error.count("\n") == 1
    assert str(home / ".codex" / "sessions") in error and not empty.exists()


def test_sync_never_writes_to_a_source(home: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """No byte, mtime or file changes under the agents' folders, across syncs that import,
    skip and remove."""
    db = tmp_path / "h.db"
    before = source_files(home)
    sync(capsys, db)
    sync(capsys, db, "--archived")
    assert source_files(home) == before
    (home / ".codex" / "sessions" / "2025").rename(tmp_path / "moved")
    before = source_files(home)
    assert counts(sync(capsys, db, "--prune")[1], "codex")["removed"] == 1
    assert source_files(home) == before


def test_a_dry_run_writes_nothing(home: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A dry run counts what would change without creating or changing the store."""
    db = tmp_path / "h.db"
    status, payload = sync(capsys, db, "--dry-run")
    assert (status, payload["dry_run"], counts(payload, "hermes")["new"]) == (
        DONE_WITH_SKIPS, True, 1)
    assert not db.exists()
    sync(capsys, db)
    (home / ".claude" / "projects" / CLAUDE_FILE).unlink()
    stamp = db.stat().st_mtime_ns
    _, payload = sync(capsys, db, "--dry-run", "--prune")
    assert counts(payload, "claude-code")["removed"] == 1
    assert db.stat().st_mtime_ns == stamp
    assert found_ids(db, "refresh path untested") == [CLAUDE_SESSION]


def test_the_table_has_a_row_per_source(home: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Without --json, a table: found, new, updated, removed, unchanged, seconds."""
    assert main(["sync", "--db", str(tmp_path / "h.db")]) == DONE_WITH_SKIPS
    printed = capsys.readouterr()
    lines = printed.out.splitlines()
    assert lines[0].split() == ["source", "found", "new", "updated", "removed", "unchanged",
                                "seconds", "location"]
    assert [line.split()[0] for line in lines[2:5]] == ["hermes", "claude-code", "codex"]
    assert lines[-1] == "found: hermes, claude-code, codex"
    # no progress bar when stdout is not a terminal: stderr only names the damaged lines
    assert [line.endswith("(skipped)") for line in printed.err.splitlines()] == [True, True]


def test_progress_bars_when_asked(home: Path, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    """--progress draws a bar per source that has work, on stderr."""
    assert main(["sync", "--db", str(tmp_path / "h.db"), "--progress"]) == DONE_WITH_SKIPS
    err = capsys.readouterr().err
    assert all(f"import {kind} [" in err and "100%" in err
               for kind in ("hermes", "claude-code", "codex"))


def test_watch_without_watchfiles_names_the_extra(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Without the watch extra, --watch fails with one line naming the install command."""
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # as if it were not installed
    assert main(["sync", "--db", str(tmp_path / "h.db"), "--watch"]) == 1
    assert capsys.readouterr().err == (
        "harkback: sync --watch needs watchfiles: pip install 'harkback[watch]'\n")
    assert not (tmp_path / "h.db").exists()


def test_watch_re_syncs_only_the_source_a_change_belongs_to(tmp_path: Path) -> None:
    """A transcript under a folder touches that folder's source; other files touch none."""
    make_home(tmp_path)
    located = locate({"hermes": tmp_path / ".hermes",
                      "claude-code": tmp_path / ".claude" / "projects",
                      "codex": tmp_path / ".codex" / "sessions"})
    importers = [i for place in located for i in place.importers]
    claude = str(tmp_path / ".claude" / "projects" / CLAUDE_FILE)
    assert [i.key.kind for i in touched(importers, [(1, claude)])] == ["claude-code"]
    notes = tmp_path / ".codex" / "sessions" / "notes.txt"
    notes.write_text("not a transcript", encoding="utf-8")  # a file there, not a folder
    assert [i.key.kind for i in touched(importers, [
        (2, str(tmp_path / ".hermes" / "state.db-wal")), (2, str(notes))])] == ["hermes"]
    # A folder moved out is a path gone: it may have held transcripts.
    assert [i.key.kind for i in touched(importers, [
        (3, str(tmp_path / ".codex" / "sessions" / "2026" / "gone"))])] == ["codex"]
    assert touched(importers, [(2, str(tmp_path / ".hermes" / "state.db-shm"))]) == []


def test_import_hermes_honours_the_same_flags(home: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``harkback import hermes`` leaves hidden and archived sessions out too; --archived
    brings the archived ones in (never the hidden one)."""
    db = tmp_path / "h.db"
    hermes = str(home / ".hermes")
    assert main(["import", "hermes", hermes, "--db", str(db), "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)["sources"]
    assert (report["sessions"]["added"], report["skipped"]) == (
        1, {"hidden session": 1, "archived session": 2})
    assert main(["import", "hermes", hermes, "--db", str(db), "--archived", "--json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)["sources"]
    assert (report["sessions"]["added"], report["skipped"]) == (2, {"hidden session": 1})
    assert found_ids(db, "wombat") == [ARCHIVED] and found_ids(db, "quokka") == []


def test_files_imported_before_marks_named_their_sessions_are_read_once_more(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After an import by a harkback whose ledger kept no session ids, one sync reads the
    files again to learn them, so a file deleted later still takes its sessions along."""
    db = tmp_path / "h.db"
    sync(capsys, db)
    with sqlite3.connect(db) as raw:
        raw.execute("DROP TABLE import_mark_sessions")  # as an older ledger has it
    raw.close()
    assert counts(sync(capsys, db)[1], "claude-code")["skipped"] > 0  # read, found unchanged
    main_file = home / ".claude" / "projects" / CLAUDE_FILE
    main_file.unlink()
    shutil.rmtree(main_file.with_suffix(""))
    assert counts(sync(capsys, db, "--prune")[1], "claude-code")["removed"] == 2


def test_a_file_gone_from_one_folder_leaves_a_session_another_folder_still_holds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """One projects folder imported under two paths (or two sources sharing a session id):
    the file deleted under one path takes its session out only when no other imported
    file holds it; the other folder's ledger says it is imported and would never bring it
    back."""
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    for name in ENV_HOMES:
        monkeypatch.delenv(name, raising=False)
    folders = [tmp_path / "a", tmp_path / "b"]
    for folder in folders:
        (folder / "-w").mkdir(parents=True)
        (folder / "-w" / "s1.jsonl").write_text(claude_line("s1", "pelican nesting", "u1"))
    db = tmp_path / "h.db"
    for folder in folders:
        assert main(["import", "claude-code", str(folder), "--db", str(db)]) == 0
    assert found_ids(db, "pelican") == ["s1"]
    capsys.readouterr()  # the imports' reports
    (folders[1] / "-w" / "s1.jsonl").unlink()
    status, _ = sync(capsys, db, "--claude-code", str(folders[1]), "--prune")
    assert status == 0
    assert found_ids(db, "pelican") == ["s1"]
    # Gone from both: now it goes.
    (folders[0] / "-w" / "s1.jsonl").unlink()
    status, _ = sync(capsys, db, "--claude-code", str(folders[0]), "--prune")
    assert (status, found_ids(db, "pelican")) == (0, [])
