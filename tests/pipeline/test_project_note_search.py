"""The project line Claude Code and Codex sessions carry under their first request, through
the CLI on a real SQLite file: its folder and branch are searched, its labels are not."""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from harkback.adapters.sources.transcript_session import with_project
from harkback.stages.project_note import project_note
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run

TOPICS = (("login", "fix the flaky login test", "the token check raced the clock", "main",
           "youer"),
          ("dark", "add a dark mode toggle", "done with a css variable", "main", "storefront"),
          ("ship", "cut the 2.3 release", "tagged v2.3.0 and pushed it", "release-2.3",
           "billing"),
          ("build", "why is the docker build slow", "COPY . busted the cache", "main", "infra"))


def _store(tmp_path: Path) -> Path:
    sessions = []
    for day, (sid, request, reply, branch, folder) in enumerate(TOPICS):
        plain = conversation(sid, ("user", request), ("assistant", reply),
                             started_at=1_770_000_000.0 + day * 86_400, source="claude-code")
        # As the importers write it (transcript_session.Transcript.conversation).
        note = project_note(f"/home/me/code/{folder}", branch)
        sessions.append(attrs.evolve(plain, messages=with_project(plain.messages, note)))
    return ingested(tmp_path, sessions)


def _found(db: Path, query: str) -> list[str]:
    done = run("search", query, "--limit", "10", "--summarizer", "none", "--json", db=db)
    assert done.returncode == 0, done.stderr
    return [r["session_id"] for r in json.loads(done.stdout)["results"]]


def test_the_labels_of_the_project_line_match_no_session(tmp_path: Path) -> None:
    """Every session answered "which branch did we use for the release?" (and any question
    saying project or git), each by the words "project", "git" and "branch" of its
    project line: the release session came first, and the other three after it."""
    db = _store(tmp_path)
    assert _found(db, "which branch did we use for the release?") == ["ship"]
    assert _found(db, "which git branch was the login fix on") == ["login"]
    assert _found(db, "what project was the dark mode in") == ["dark"]
    assert _found(db, "git branch") == []


def test_the_project_folder_and_branch_stay_searchable(tmp_path: Path) -> None:
    """The folder's name and the branch are the session's words still."""
    db = _store(tmp_path)
    assert _found(db, "storefront") == ["dark"]
    assert _found(db, "release-2.3") == ["ship"]


def test_a_reply_ending_in_the_lines_form_keeps_its_words(tmp_path: Path) -> None:
    """Importers add the project line to a user message only, but any message ending in
    its form was read without "project", "git" and "branch": a reply explaining that
    line, which holds the words asked for, was found by nothing of it."""
    plain = conversation("explain", ("user", "what does the header line look like"),
                         ("assistant", "each session's first request ends with\n\n"
                                       "[project: FOLDER, git branch: BRANCH]"),
                         started_at=1_770_900_000.0)
    sessions = [plain]
    for day, (sid, request, reply, branch, folder) in enumerate(TOPICS):
        made = conversation(sid, ("user", request), ("assistant", reply),
                            started_at=1_770_000_000.0 + day * 86_400, source="claude-code")
        note = project_note(f"/home/me/code/{folder}", branch)
        sessions.append(attrs.evolve(made, messages=with_project(made.messages, note)))
    db = ingested(tmp_path, sessions)
    assert _found(db, "git branch") == ["explain"]
    assert _found(db, "project") == ["explain"]


def test_a_folder_or_branch_holding_a_bracket_is_read_without_the_labels(
        tmp_path: Path) -> None:
    """A folder named with a bracket ("site [old]"), or a branch holding one (git allows
    "fix]x"), left the whole line read with its labels: "git branch" found those
    sessions again. Their words are still found."""
    sessions = []
    for sid, folder, branch in (("old", "/home/me/code/site [old]", "main"),
                                ("odd", "/home/me/code/site", "fix]x")):
        plain = conversation(sid, ("user", "tidy the footer"), ("assistant", "done"),
                             started_at=1_770_000_000.0, source="codex")
        note = project_note(folder, branch)
        sessions.append(attrs.evolve(plain, messages=with_project(plain.messages, note)))
    db = ingested(tmp_path, sessions)
    assert _found(db, "git branch") == []
    assert _found(db, "old") == ["old"]
