"""``harkback sync`` keeps the sessions whose source file or row is gone (Claude Code deletes
transcripts after 30 days), follows files the agents move (Codex's ``archived_sessions``),
and removes only with ``--prune``: on a SQLite file, in memory and on PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from harkback.pipeline.cli import main
from harkback.pipeline.facade import Harkback
from harkback.pipeline.sync import SourceReport, locate, sync
from harkback.pipeline.watch import touched
from harkback.pipeline.watch_layout import Layout
from harkback.stages.imports import SourceKey
from harkback.stages.ports import SessionStore
from tests.adapters.stores.store_contract import ok
from tests.pipeline.sync_home import (
    CLAUDE_FILE,
    CLAUDE_SESSION,
    ENV_HOMES,
    found_ids,
    make_home,
    repair,
)
from tests.pipeline.test_sync_process import watching, watching_started
from tests.support.hermes_db import HermesFile
from tests.support.new_stores import new_stores

SUBAGENT = f"{CLAUDE_SESSION}/agent-a1b2c3d"
CODEX_SESSION = "0199a1b4-1111-7ddd-8eee-ffffffffffff"
CODEX_NAME = f"rollout-2026-03-04T10-00-00-{CODEX_SESSION}.jsonl"
CODEX_FILE = f"2026/03/04/{CODEX_NAME}"


store = new_stores("sqlite", "memory", "postgres")
"""A new, empty store of each kind, open for the whole test."""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with every agent's history (its damaged lines repaired), made ``HOME``."""
    made = make_home(tmp_path / "home")
    repair(made)
    monkeypatch.setenv("HOME", str(made))
    for name in ENV_HOMES:
        monkeypatch.delenv(name, raising=False)
    return made


def synced(store: SessionStore, *, prune: bool = False, dry_run: bool = False,
           **paths: Path) -> dict[str, SourceReport]:
    """Sync the default sources (or ``paths`` by kind, ``claude_code=``) into ``store``; the
    report of each kind."""
    located = locate({kind.replace("_", "-"): path for kind, path in paths.items()})
    reports = asyncio.run(sync(located, store, dry_run=dry_run, progress=False, prune=prune)
                          if prune else  # a plain sync, as any version runs it
                          sync(located, store, dry_run=dry_run, progress=False))
    assert all(r.status != "failed" for r in reports), reports
    return {r.kind: r for r in reports}


def recalled(store: SessionStore, query: str) -> list[str]:
    """The session ids a search of ``store`` recalls."""
    payload = asyncio.run(Harkback(store=store).search(query)).to_payload()
    assert payload["success"], payload
    return [r["session_id"] for r in payload["results"]]


def stored(store: SessionStore, *ids: str) -> list[str]:
    """Which of ``ids`` the store holds."""
    return sorted(s.id for s in asyncio.run(ok(store.sessions(ids))))


def items(store: SessionStore, key: SourceKey) -> dict[str, bool]:
    """The ledger's items of ``key``, each with whether it is marked gone."""
    ledger = store.import_ledger()
    assert ledger is not None
    state = asyncio.run(ok(ledger.state(key)))
    return {mark.item: mark.gone for mark in state.marks}


def test_a_deleted_transcript_is_kept_said_once_then_pruned(
        home: Path, store: SessionStore) -> None:
    """Claude Code deletes a transcript (and its sub-agent's): the sessions stay searchable,
    the sync says they were kept (once: the next sync is quiet), ``--dry-run --prune``
    counts them, and ``--prune`` removes them and forgets their files."""
    synced(store)
    (home / ".claude" / "projects" / CLAUDE_FILE).unlink()
    shutil.rmtree((home / ".claude" / "projects" / CLAUDE_FILE).with_suffix(""))
    claude = synced(store)["claude-code"]
    assert recalled(store, "refresh path untested") == [CLAUDE_SESSION]
    assert stored(store, CLAUDE_SESSION, SUBAGENT) == [CLAUDE_SESSION, SUBAGENT]
    assert (claude.removed, claude.kept_gone, claude.newly_gone) == (0, 2, 2)
    again = synced(store)["claude-code"]
    assert (again.removed, again.kept_gone, again.newly_gone) == (0, 2, 0)
    dry = synced(store, prune=True, dry_run=True)["claude-code"]
    assert (dry.removed, stored(store, CLAUDE_SESSION)) == (2, [CLAUDE_SESSION])
    pruned = synced(store, prune=True)["claude-code"]
    assert (pruned.removed, pruned.kept_gone) == (2, 0)
    assert recalled(store, "refresh path untested") == []
    key = SourceKey("claude-code", str(home / ".claude" / "projects"))
    assert CLAUDE_FILE not in items(store, key) and not any(items(store, key).values())


def test_a_rollout_codex_archives_stays_one_session(home: Path, store: SessionStore) -> None:
    """A rollout moved from sessions/ to archived_sessions/ between two syncs: the same
    session, once, still found; nothing new, updated, removed or kept as gone; the ledger
    names it at its new path; ``--prune`` then removes nothing."""
    first = synced(store)["codex"]
    sessions = home / ".codex" / "sessions"
    archive = home / ".codex" / "archived_sessions"
    archive.mkdir()
    (sessions / CODEX_FILE).rename(archive / CODEX_NAME)
    moved = synced(store)["codex"]
    assert CODEX_SESSION in recalled(store, "OPTIONS handler preflight")
    assert (moved.new, moved.updated, moved.removed, moved.kept_gone, moved.found) == (
        0, 0, 0, 0, first.found)
    assert stored(store, CODEX_SESSION, f"{CODEX_SESSION}@{CODEX_NAME[:-6]}") == [CODEX_SESSION]
    assert items(store, SourceKey("codex", str(sessions))).get(
        f"../archived_sessions/{CODEX_NAME}") is False
    assert CODEX_FILE not in items(store, SourceKey("codex", str(sessions)))
    pruned = synced(store, prune=True)["codex"]
    assert (pruned.removed, pruned.new, pruned.unchanged) == (0, 0, first.found)
    assert CODEX_SESSION in recalled(store, "OPTIONS handler preflight")


def test_a_project_folder_renamed_is_followed(home: Path, store: SessionStore) -> None:
    """A Claude Code project folder renamed: a dry run counts nothing gone nor to prune (it
    counted its sessions as removed: the marks a dry run would keep were not looked at);
    the sync finds nothing new nor gone, and a ``--prune`` after removes nothing."""
    projects = home / ".claude" / "projects"
    first = synced(store)["claude-code"]
    (projects / "-home-mei-code-agent-bus").rename(projects / "-home-mei-code-bus")
    dry = synced(store, dry_run=True, prune=True)["claude-code"]
    assert (dry.new, dry.removed, dry.found) == (0, 0, first.found)
    assert synced(store, dry_run=True)["claude-code"].newly_gone == 0
    renamed = synced(store)["claude-code"]
    assert (renamed.new, renamed.removed, renamed.found) == (0, 0, first.found)
    assert recalled(store, "NATS latency") == ["5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"]
    assert synced(store, prune=True)["claude-code"].removed == 0
    assert recalled(store, "NATS latency") == ["5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"]
    assert renamed.kept_gone == 0


def test_a_hermes_row_deleted_is_kept_until_pruned(home: Path, store: SessionStore) -> None:
    """A session deleted from state.db follows the same rule as a deleted transcript."""
    synced(store)
    writer = HermesFile.reopen(home / ".hermes" / "state.db", "v30")
    writer.connection.execute("DELETE FROM messages WHERE session_id = 'h_visible'")
    writer.connection.execute("DELETE FROM sessions WHERE id = 'h_visible'")
    writer.close()
    hermes = synced(store)["hermes"]
    assert recalled(store, "pelican") == ["h_visible"]
    assert (hermes.removed, hermes.kept_gone, hermes.newly_gone) == (0, 1, 1)
    unchanged = synced(store)["hermes"]  # state.db not touched since: not opened
    assert (unchanged.kept_gone, unchanged.newly_gone, unchanged.found) == (1, 0, 0)
    assert synced(store, prune=True)["hermes"].removed == 1
    assert recalled(store, "pelican") == []


def _rollout(path: Path, session: str, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [{"timestamp": "2026-05-01T10:00:00Z", "type": "session_meta",
              "payload": {"id": session, "cwd": "/w"}},
             {"timestamp": "2026-05-01T10:00:01Z", "type": "response_item",
              "payload": {"type": "message", "role": "user",
                          "content": [{"type": "input_text", "text": text}]}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_a_rollout_written_into_the_archive_is_imported(
        home: Path, tmp_path: Path, store: SessionStore) -> None:
    """archived_sessions is read at the default location, beside a sessions folder a flag
    names, and without a sessions folder at all; a folder of another name is read alone."""
    archive = home / ".codex" / "archived_sessions"
    _rollout(archive / "rollout-2026-05-01T10-00-00-arch1.jsonl", "arch1", "quetzal feathers")
    assert recalled(store, "quetzal") == [] and synced(store)["codex"].new == 5
    assert recalled(store, "quetzal") == ["arch1"]
    other = tmp_path / "other" / ".codex"
    _rollout(other / "sessions" / "rollout-a.jsonl", "arch2", "tapir snout")
    _rollout(other / "archived_sessions" / "rollout-b.jsonl", "arch3", "tapir tail")
    assert synced(store, codex=other / "sessions")["codex"].new == 2
    assert sorted(recalled(store, "tapir")) == ["arch2", "arch3"]
    shutil.rmtree(other / "sessions")
    _rollout(other / "archived_sessions" / "rollout-c.jsonl", "arch4", "tapir ears")
    assert synced(store, codex=other / "sessions")["codex"].new == 1
    copy = tmp_path / "copy"
    shutil.copytree(other / "archived_sessions", copy / "rollouts")
    _rollout(copy / "archived_sessions" / "rollout-d.jsonl", "arch5", "tapir hooves")
    assert synced(store, codex=copy / "rollouts")["codex"].found == 2
    assert "arch5" not in recalled(store, "tapir")


def _cli(capsys: pytest.CaptureFixture[str], db: Path, *flags: str) -> tuple[int, str]:
    status = main(["sync", "--db", str(db), *flags])
    return status, capsys.readouterr().out


def test_the_table_and_json_say_what_was_kept(home: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """The table says once how many sessions were kept whose files are gone, why, and what
    removes them; --json gives the counts at every sync."""
    db = tmp_path / "h.db"
    assert _cli(capsys, db)[0] == 0
    (home / ".claude" / "projects" / CLAUDE_FILE).unlink()
    status, table = _cli(capsys, db)
    assert status == 0
    assert ("claude-code: 1 session(s) kept whose transcripts are gone at the source (Claude "
            "Code deletes transcripts older than cleanupPeriodDays, 30 days by default); 1 "
            "kept in all; `harkback sync --prune` removes them") in table.splitlines()
    assert "kept whose" not in _cli(capsys, db)[1]
    status, printed = _cli(capsys, db, "--json")
    (claude,) = [s for s in json.loads(printed)["sources"] if s["kind"] == "claude-code"]
    assert (claude["sessions"]["kept_gone"], claude["sessions"]["newly_gone"],
            claude["sessions"]["removed"]) == (1, 0, 0)


def _report(printed: str, kind: str) -> dict[str, Any]:
    (report,) = [s for s in json.loads(printed)["sources"] if s["kind"] == kind]
    return dict(report["sessions"])


def test_a_dry_run_counts_what_would_be_kept_and_marks_nothing(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--dry-run says a deleted file's session would be kept, and leaves it to the real sync
    to say so."""
    db = tmp_path / "h.db"
    _cli(capsys, db)
    (home / ".claude" / "projects" / CLAUDE_FILE).unlink()
    assert _report(_cli(capsys, db, "--json", "--dry-run")[1], "claude-code")["newly_gone"] == 1
    assert _report(_cli(capsys, db, "--json")[1], "claude-code")["newly_gone"] == 1


def test_a_file_deleted_while_watching_keeps_its_sessions(home: Path, tmp_path: Path) -> None:
    """``sync --watch`` re-syncs a deletion as ``sync`` does: the project's sessions stay
    searchable, and the watch says once that they were kept."""
    db = tmp_path / "h.db"
    lines: list[str] = []
    with watching(home, db) as watcher:
        watching_started(watcher)
        out, err = watcher.stdout, watcher.stderr
        assert out is not None and err is not None
        reader = threading.Thread(target=lambda: lines.extend(iter(out.readline, "")),
                                  daemon=True)
        reader.start()
        shutil.rmtree(home / ".claude" / "projects" / "-home-mei-code-agent-bus")
        deadline = time.monotonic() + 30
        while not any(" claude-code: " in line for line in lines) and (
                time.monotonic() < deadline):
            time.sleep(0.05)  # the re-sync's line is printed once it is done
        assert found_ids(db, "NATS latency") == ["5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"]
        watcher.send_signal(signal.SIGINT)
        watcher.wait(timeout=30)
        reader.join(timeout=5)
        printed = err.read()
    assert watcher.returncode == 0, printed
    assert sum("claude-code: 0 new, 0 updated, 0 removed" in line for line in lines) == 1, lines
    assert sum("claude-code: 3 session(s) kept whose transcripts are gone" in line
               for line in lines) == 1, lines


def test_the_watch_watches_the_codex_archive(home: Path) -> None:
    """A rollout archived (moved into archived_sessions) touches the Codex source, whose
    archive is watched once it is there, and not said missing before."""
    importers = [i for place in locate({}) for i in place.importers]
    archive = home / ".codex" / "archived_sessions"
    assert Layout.of(importers).missing == ()
    archive.mkdir()
    assert archive in Layout.of(importers).folders
    assert [i.key.kind for i in touched(importers, [(1, str(archive / CODEX_NAME))])] == [
        "codex"]


def test_an_archive_that_cannot_be_read_is_named_and_the_sessions_still_synced(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """archived_sessions a loop of links: named as damaged input (status 3), the sessions
    folder synced all the same (the whole Codex source failed, blamed on sessions/)."""
    archive = home / ".codex" / "archived_sessions"
    archive.symlink_to(archive)
    status = main(["sync", "--db", str(tmp_path / "h.db"), "--json"])
    printed = capsys.readouterr()
    codex = _report(printed.out, "codex")
    assert (status, codex["new"]) == (3, 4)
    assert printed.err == (f"harkback: {archive}: unreadable folder: not a folder that can be "
                           "read (skipped)\n")


def test_a_session_one_source_prunes_is_no_longer_kept_by_another(
        home: Path, tmp_path: Path, store: SessionStore) -> None:
    """A copy of the projects folder (imported under its own path, then its file deleted)
    keeps the session as gone; the default folder then holds it too, is deleted and pruned:
    the session is removed. The copy went on counting it as kept (``kept_gone`` 1 for a
    session no longer stored) until its own ``--prune``; now its mark lets go of it."""
    copy = tmp_path / "copy" / "projects"
    shutil.copytree(home / ".claude" / "projects", copy)
    assert synced(store, claude_code=copy)["claude-code"].new > 0
    (copy / CLAUDE_FILE).unlink()
    assert synced(store, claude_code=copy)["claude-code"].newly_gone == 1
    projects = home / ".claude" / "projects"
    synced(store, claude_code=projects)
    (projects / CLAUDE_FILE).unlink()
    assert synced(store, prune=True, claude_code=projects)["claude-code"].removed == 1
    assert stored(store, CLAUDE_SESSION) == []
    again = synced(store, claude_code=copy)["claude-code"]
    assert (again.kept_gone, again.removed) == (0, 0)
    assert CLAUDE_FILE not in items(store, SourceKey("claude-code", str(copy)))


def listed(store: SessionStore, key: SourceKey) -> tuple[int, int]:
    """What ``harkback sources`` counts of ``key``: its sessions, and those kept gone."""
    ledger = store.import_ledger()
    assert ledger is not None
    (source,) = [s for s in asyncio.run(ok(ledger.sources())) if s.key == key]
    return source.sessions, source.kept_gone


def test_the_sources_list_counts_what_is_kept_gone(home: Path, store: SessionStore) -> None:
    """A deleted transcript's sessions stay in the source's count: that count now says how
    many of them are kept although gone (as sync's ``kept_gone``), none once pruned."""
    key = SourceKey("claude-code", str(home / ".claude" / "projects"))
    synced(store)
    total, kept = listed(store, key)
    assert kept == 0
    (home / ".claude" / "projects" / CLAUDE_FILE).unlink()
    shutil.rmtree((home / ".claude" / "projects" / CLAUDE_FILE).with_suffix(""))
    claude = synced(store)["claude-code"]
    assert listed(store, key) == (total, claude.kept_gone) and claude.kept_gone > 0
    pruned = synced(store, prune=True)["claude-code"]
    assert listed(store, key) == (total - pruned.removed, 0)


def test_the_sources_table_and_json_name_the_kept_gone(
        home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``harkback sources`` gives the kept-gone count beside the sessions (a column and a
    line saying what it is; ``kept_gone`` in the JSON), for the one source that has them."""
    db = tmp_path / "h.db"
    _cli(capsys, db)
    (home / ".claude" / "projects" / CLAUDE_FILE).unlink()
    kept = _report(_cli(capsys, db, "--json")[1], "claude-code")["kept_gone"]
    assert main(["sources", "--db", str(db), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)["sources"]
    assert {s["kind"]: s["kept_gone"] for s in payload} == {
        "claude-code": kept, "codex": 0, "hermes": 0}
    assert main(["sources", "--db", str(db)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert "kept gone" in table[0] and table[-1].startswith("kept gone: ")
    (row,) = [line for line in table if line.startswith("claude-code ")]
    sessions = {s["kind"]: s["sessions"] for s in payload}["claude-code"]
    assert re.search(rf" {sessions} +{kept} +\d+  ", row), row
