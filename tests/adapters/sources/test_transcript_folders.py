"""Finding transcript files in a folder tree: links to folders, loops of links."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.sources.claude_code import CLAUDE_CODE
from harkback.adapters.sources.importing import ImportUnit
from harkback.adapters.sources.transcript_lines import TORN
from harkback.adapters.sources.transcript_walk import find_files
from harkback.adapters.sources.transcripts import TranscriptImporter
from harkback.adapters.stores.import_ledger import SqliteImportLedger
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.importing import run_import
from harkback.stages.imports import SourceKey, SourceState
from tests.adapters.stores.store_contract import ok

PATTERNS = CLAUDE_CODE.patterns


def _session(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"type": "user", "uuid": "u1", "timestamp": "2026-03-03T14:15:00Z",
                                "message": {"role": "user", "content": text}}) + "\n",
                    encoding="utf-8")


async def test_a_project_folder_linked_in_from_elsewhere_is_imported(tmp_path: Path) -> None:
    """A project folder kept on another disk and linked into ``projects`` (as GNU stow
    does) was passed over: its sessions were never imported, and no one was told."""
    projects = tmp_path / "projects"
    _session(projects / "-w-app" / "s1.jsonl", "the heron logs")
    _session(tmp_path / "elsewhere" / "-w-api" / "s2.jsonl", "the kestrel queue")
    (projects / "-w-api").symlink_to(tmp_path / "elsewhere" / "-w-api")
    db = tmp_path / "h.db"
    with SqliteStore.open(db).unwrap() as store:
        outcome = await run_import(TranscriptImporter(CLAUDE_CODE, projects), store,
                                   SqliteImportLedger(store), full=False, progress=False)
        stored = await ok(store.sessions(["s1", "s2"]))
    assert outcome.delta.sessions_added == 2
    assert [s.id for s in stored] == ["s1", "s2"]


def test_loops_of_links_end_and_no_file_is_found_twice(tmp_path: Path) -> None:
    """A link back up the tree or to its parent, a link to a folder already in it, and two
    links to one folder outside: each file once, under the first path that reaches it."""
    projects = tmp_path / "projects"
    _session(projects / "-w-app" / "s1.jsonl", "a")
    _session(tmp_path / "elsewhere" / "s2.jsonl", "b")
    (projects / "-w-app" / "up").symlink_to(projects)
    (projects / "-again").symlink_to(projects / "-w-app")
    (projects / "-x1").symlink_to(tmp_path / "elsewhere")
    (projects / "-x2").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere" / "back").symlink_to(tmp_path / "elsewhere")
    (projects / "-w-app" / "parent").symlink_to(tmp_path)
    found = find_files(projects, PATTERNS)
    assert [name.split("/")[-1] for name in found] == ["s1.jsonl", "s2.jsonl"]
    assert found[0] == "-w-app/s1.jsonl"
    # Codex's patterns reach any depth: a link to the tree's parent walked it all again.
    rollouts = find_files(projects, ("**/*.jsonl",))
    assert [name.split("/")[-1] for name in rollouts] == ["s1.jsonl", "s2.jsonl"]


def _plan_units(projects: Path) -> Callable[[], list[ImportUnit]]:
    """Plan an import of ``projects`` now; the call reads its units."""
    planned = TranscriptImporter(CLAUDE_CODE, projects).plan(
        SourceState(key=SourceKey(kind="claude-code", location=str(projects))), full=False)
    units = planned.unwrap().units
    return lambda: [step.unwrap() for step in units]


def test_a_transcript_deleted_after_the_listing_is_no_damage(tmp_path: Path) -> None:
    """Claude Code deletes old transcripts as it starts: one gone between the listing and
    its reading was named 'unreadable file' (a sync's status 3, damaged input)."""
    projects = tmp_path / "projects"
    _session(projects / "-w-app" / "s1.jsonl", "the heron logs")
    _session(projects / "-w-app" / "s2.jsonl", "the kestrel queue")
    read = _plan_units(projects)
    (projects / "-w-app" / "s1.jsonl").unlink()
    units = read()
    assert [c.session.id for u in units for c in u.conversations] == ["s2"]
    assert [s for u in units for s in u.skipped] == []
    assert dict(pair for u in units for pair in u.left_out) == {
        "file deleted while importing": 1}


def test_a_folder_deleted_while_listing_is_no_damage(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A session's folder (its sub-agents) deleted between its parent's listing and its
    own was named 'unreadable folder'."""
    projects = tmp_path / "projects"
    _session(projects / "-w-app" / "s1.jsonl", "the heron logs")
    _session(projects / "-w-app" / "s1" / "subagents" / "agent-a1.jsonl", "the kestrel")
    listing = os.scandir

    def deleting(path: Any) -> Any:
        if str(path).endswith("s1"):
            shutil.rmtree(path)
        return listing(path)

    monkeypatch.setattr(os, "scandir", deleting)
    unreadable: list[tuple[str, str]] = []
    assert find_files(projects, PATTERNS, unreadable=unreadable) == ["-w-app/s1.jsonl"]
    assert unreadable == []


async def test_a_cut_last_line_no_agent_writes_any_more_is_named_once(tmp_path: Path) -> None:
    """A last line cut short is read again next time (an agent still writing it); one left
    by an agent that died was read again at every sync for ever, and never named. Unchanged
    since the import that found it cut, it is named, by its line too (it was named by its
    file alone, as no other damaged line is), and the file is not read again."""
    projects = tmp_path / "projects"
    path = projects / "-w-app" / "s1.jsonl"
    _session(path, "the heron logs")
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"type": "assistant", "uuid": "a1", "message": {"content": "rot')
    db = tmp_path / "h.db"
    outcomes = []
    for _ in range(3):
        with SqliteStore.open(db).unwrap() as store:
            outcomes.append(await run_import(TranscriptImporter(CLAUDE_CODE, projects), store,
                                             SqliteImportLedger(store), full=False,
                                             progress=False))
    first, second, third = outcomes
    assert first.skipped == () and first.delta.sessions_added == 1
    last = len(path.read_text(encoding="utf-8").splitlines())
    assert [(Path(s.file).name, s.line, s.reason) for s in second.skipped] == [
        ("s1.jsonl", last, "unreadable line: the last line is cut short, and the file was "
                           "not written to since the last import")]
    assert TORN not in dict(second.left_out)
    assert third.skipped == () and third.delta.sessions_unchanged == 1


def test_folders_deeper_than_any_transcript_are_never_listed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code's transcripts lie at most three folders down: a link to a big tree (a
    home folder) was walked whole, and an unreadable folder holding no transcript (a
    session's tool results) was named as damage."""
    projects = tmp_path / "projects"
    _session(projects / "-w-app" / "s1.jsonl", "a")
    _session(projects / "-w-app" / "s1" / "subagents" / "agent-a1.jsonl", "b")
    deep = projects / "-w-app" / "s1" / "subagents" / "cache" / "more"
    deep.mkdir(parents=True)
    (projects / "-w-home").symlink_to(tmp_path / "home", target_is_directory=True)
    (tmp_path / "home" / "src" / "big" / "tree").mkdir(parents=True)
    listed: list[str] = []
    listing = os.scandir

    def recording(path: Any) -> Any:
        listed.append(os.path.relpath(path, projects))
        return listing(path)

    monkeypatch.setattr(os, "scandir", recording)
    assert find_files(projects, PATTERNS) == ["-w-app/s1.jsonl",
                                              "-w-app/s1/subagents/agent-a1.jsonl"]
    assert not any(name.count("/") >= 3 for name in listed), listed
