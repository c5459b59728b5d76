"""``sync --watch`` names an unreadable file among the transcripts once, not again at every
re-sync that meets it (two lines per appended message, for as long as it ran)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import attrs

from harkback.adapters.sources.importing import Skip
from harkback.pipeline.named_once import NamedOnce
from harkback.pipeline.sync import SourceReport
from tests.pipeline.sync_home import (
    CLAUDE_FILE,
    CLAUDE_SESSION,
    DONE_WITH_SKIPS,
    claude_line,
    found_ids,
    make_home,
    repair,
)
from tests.pipeline.test_sync_process import stop_once_found, watching


def test_a_watch_names_an_unreadable_file_once_while_it_is_unchanged(tmp_path: Path) -> None:
    """A named pipe beside a transcript: named by the first sync, then not at the three
    re-syncs that each appended message brings; Ctrl-C still ends it with 3."""
    home = make_home(tmp_path / "home")
    repair(home)
    path = home / ".claude" / "projects" / CLAUDE_FILE
    pipe = path.parent / "pipe.jsonl"
    os.mkfifo(pipe)
    db = tmp_path / "h.db"
    with watching(home, db) as watcher:
        assert watcher.stderr is not None
        first = [watcher.stderr.readline()]
        while not first[-1].startswith("watching "):
            first.append(watcher.stderr.readline())
        assert sum(str(pipe) in line for line in first) == 1, first
        for word in ("okapi", "tapir"):
            with path.open("a", encoding="utf-8") as handle:
                handle.write(claude_line(CLAUDE_SESSION, f"the {word} queue is stuck",
                                         f"u-{word}"))
            deadline = time.monotonic() + 30
            while not found_ids(db, word) and time.monotonic() < deadline:
                time.sleep(0.05)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(claude_line(CLAUDE_SESSION, "the quokka log rotates", "u-quokka"))
        _, err = stop_once_found(watcher, db, "quokka")
    assert watcher.returncode == DONE_WITH_SKIPS, err
    assert str(pipe) not in err, err


def test_a_file_named_once_is_named_again_once_it_changes(tmp_path: Path) -> None:
    """Its size, mtime or kind changed (a real file here): named again, then not again."""
    odd = tmp_path / "odd.jsonl"
    odd.write_bytes(b"\x00")
    report = SourceReport(kind="claude-code", location=str(tmp_path), status="synced",
                          skipped=(Skip(str(odd), None, "unreadable file: odd"),), skips=3)
    once = NamedOnce()
    assert [once.fresh(report).skips for _ in range(2)] == [3, 2]
    odd.write_bytes(b"\x00\x00")
    assert [once.fresh(report).skips for _ in range(2)] == [3, 2]
    odd.unlink()
    odd.symlink_to(tmp_path / "nowhere")
    assert [once.fresh(report).skipped for _ in range(2)] == [report.skipped, ()]


def test_a_file_read_in_between_is_named_again_once_it_cannot_be_read_again(
        tmp_path: Path) -> None:
    """A link to a disk not mounted is named; mounted, its transcript is read (the re-sync
    names nothing); unmounted again, the link is as it was when named, and is named again
    (it was left unsaid for good)."""
    disk = tmp_path / "disk"
    link = tmp_path / "t.jsonl"
    link.symlink_to(disk / "t.jsonl")
    named = SourceReport(kind="claude-code", location=str(tmp_path), status="synced",
                         skipped=(Skip(str(link), None, "unreadable file: No such file"),),
                         skips=1)
    read = attrs.evolve(named, skipped=(), skips=0)
    once = NamedOnce()
    assert [once.fresh(named).skips, once.fresh(named).skips] == [1, 0]
    disk.mkdir()
    (disk / "t.jsonl").write_text("", encoding="utf-8")
    assert once.fresh(read).skips == 0
    shutil.rmtree(disk)
    assert [once.fresh(named).skips, once.fresh(named).skips] == [1, 0]
