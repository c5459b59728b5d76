"""Claude Code, Codex and ingest-format files imported and searched through the pipeline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.sources.claude_code import CLAUDE_CODE
from harkback.adapters.sources.codex import CODEX
from harkback.adapters.sources.importing import Importer, ImportUnit
from harkback.adapters.sources.transcripts import TranscriptFormat, TranscriptImporter
from harkback.adapters.stores.import_ledger import MemoryImportLedger, SqliteImportLedger
from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.importing import (
    Delta,
    ImportOutcome,
    importers_for,
    run_import,
)
from harkback.pipeline.ingest import JsonlImporter
from harkback.stages.errors import QueryRejected, SourceUnreadable, StoreUnavailable
from harkback.stages.imports import SourceKey, SourceState

FIXTURES = Path(__file__).parent.parent / "fixtures"
S1 = "7f3c2a10-5b1e-4c0a-9d8e-1a2b3c4d5e6f"
S2 = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"
T1 = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
FORK = "0199a1b4-1111-7ddd-8eee-ffffffffffff"


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    """A copy of the Claude Code fixture projects folder."""
    return Path(shutil.copytree(FIXTURES / "claude-code" / "projects", tmp_path / "projects"))


@pytest.fixture
def rollouts(tmp_path: Path) -> Path:
    """A copy of the Codex fixture sessions folder."""
    return Path(shutil.copytree(FIXTURES / "codex" / "sessions", tmp_path / "sessions"))


async def run(importer: Importer, db: Path, *, full: bool = False) -> ImportOutcome:
    """Import into the SQLite store at ``db``."""
    with SqliteStore.open(db).unwrap() as store:
        return await run_import(importer, store, SqliteImportLedger(store), full=full,
                                progress=False)


async def found(db: Path, query: str, **options: Any) -> list[str]:
    """The session ids recalled for ``query``."""
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        payload = (await Harkback(store=store).search(query, **options)).to_payload()
    assert payload["success"], payload
    return [r["session_id"] for r in payload["results"]]


async def test_claude_code_subagent_hits_recall_the_session_that_started_it(
        projects: Path, tmp_path: Path) -> None:
    """A match inside a sub-agent transcript recalls its parent session."""
    db = tmp_path / "h.db"
    await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    assert await found(db, "refresh path untested") == [S1]
    assert await found(db, "NATS p99 latency") == [S2]


async def test_claude_code_project_folder_is_searchable(projects: Path, tmp_path: Path) -> None:
    """The project folder's name finds the sessions that ran in it."""
    db = tmp_path / "h.db"
    await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    assert set(await found(db, "agent-bus")) == {S2}
    assert S1 in await found(db, "youer-server")


async def test_claude_code_chinese_question_finds_the_fix(projects: Path, tmp_path: Path) -> None:
    """A Chinese question recalls the Chinese session that answers it."""
    db = tmp_path / "h.db"
    await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    assert (await found(db, "上次登录接口 token 过期是怎么修的？"))[0] == S1


async def test_claude_code_reimport_skips_unchanged_files(projects: Path, tmp_path: Path) -> None:
    """A second import reads nothing; a grown file updates only its own session."""
    db = tmp_path / "h.db"
    first = await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    again = await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    assert (first.delta.sessions_added, first.delta.sessions_unchanged) == (6, 0)
    counts = again.delta
    assert (counts.sessions_added, counts.sessions_updated, counts.sessions_unchanged) == (0, 0, 6)
    grown = projects / "-home-mei-code-agent-bus" / f"{S2}.jsonl"
    with grown.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"type": "user", "sessionId": S2,
                                 "timestamp": "2025-11-21T08:00:00Z",
                                 "message": {"role": "user",
                                             "content": "switch the bus to gRPC"}}) + "\n")
    third = await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    counts = third.delta
    assert (counts.sessions_updated, counts.messages_added, counts.messages_updated) == (1, 1, 0)
    assert third.delta.sessions_unchanged == 4 + 1  # other files, and the unchanged sidechain
    assert await found(db, "gRPC") == [S2]


async def test_full_reimport_is_idempotent(projects: Path, tmp_path: Path) -> None:
    """Reading everything again stores nothing new."""
    db = tmp_path / "h.db"
    await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    again = await run(TranscriptImporter(CLAUDE_CODE, projects), db, full=True)
    counts = again.delta
    assert (counts.sessions_added, counts.sessions_updated, counts.messages_added) == (0, 0, 0)
    assert again.delta.sessions_unchanged == 6


async def test_codex_subagent_hits_recall_the_parent_and_forks_stand_alone(
        rollouts: Path, tmp_path: Path) -> None:
    """A spawned sub-agent's match recalls its parent thread; a fork is its own session."""
    db = tmp_path / "h.db"
    outcome = await run(TranscriptImporter(CODEX, rollouts), db)
    assert outcome.delta.sessions_added == 4
    assert await found(db, "location block Access-Control-Allow-Origin") == [T1]
    assert (await found(db, "OPTIONS handler gateway"))[0] == FORK
    assert (await found(db, "preflight 405 limit_except"))[0] == T1


async def test_codex_reimport_after_a_resume_reads_only_that_rollout(rollouts: Path,
                                                                      tmp_path: Path) -> None:
    """Codex appends to the rollout it resumes; only that file is read again."""
    db = tmp_path / "h.db"
    await run(TranscriptImporter(CODEX, rollouts), db)
    rollout = next(rollouts.glob(f"2026/03/03/rollout-*-{T1}.jsonl"))
    with rollout.open("a", encoding="utf-8") as handle:
        handle.write('{"timestamp": "2026-03-05T08:00:00Z", "type": "response_item", "payload":'
                     ' {"type": "message", "role": "user", "content": [{"type": "input_text",'
                     ' "text": "also allow PATCH through limit_except"}]}}\n')
    again = await run(TranscriptImporter(CODEX, rollouts), db)
    counts = again.delta
    assert (counts.sessions_updated, counts.messages_added, counts.sessions_unchanged) == (1, 1, 3)


async def test_import_works_on_the_in_memory_store(rollouts: Path) -> None:
    """The importer needs only the store and ledger ports."""
    store, ledger = MemoryStore(), MemoryImportLedger()
    outcome = await run_import(TranscriptImporter(CODEX, rollouts), store, ledger, progress=False)
    again = await run_import(TranscriptImporter(CODEX, rollouts), store, ledger, progress=False)
    assert (outcome.delta.sessions_added, again.delta.sessions_unchanged) == (4, 4)
    payload = (await Harkback(store=store).search("rotate nginx logs")).to_payload()
    assert payload["results"][0]["session_id"] == "6f1e2d3c-4b5a-4978-8a1b-2c3d4e5f6a7b"


async def test_jsonl_import_names_bad_lines_and_skips_an_unchanged_file(tmp_path: Path) -> None:
    """A bad line and a bad message are counted and named file:line; the bad message's
    session is kept; the same file again is skipped whole."""
    source = tmp_path / "sessions.jsonl"
    source.write_text('{"id": "j1", "messages": [{"role": "user", "content": "heron"}]}\n'
                      '{"id": "j2", "messages": [{"role": "bot"}, {"role": "user"}]}\n'
                      '{"id": 3}\n', encoding="utf-8")
    db = tmp_path / "h.db"
    first = await run(JsonlImporter(source), db)
    again = await run(JsonlImporter(source), db)
    assert (first.delta.sessions_added, first.delta.messages_added) == (2, 2)
    assert dict(first.left_out) == {"message dropped": 1, "bad line": 1}
    assert [skip.describe() for skip in first.skipped] == [
        f"{source}:2: message dropped: messages[0].role: expected one of user, assistant, "
        "tool, system, got 'bot'",
        f"{source}:3: bad line: id: expected a non-empty string, got 3"]
    assert first.skips == 2
    assert (again.delta.sessions_added, again.delta.sessions_unchanged) == (0, 2)


async def test_an_unreadable_file_is_counted_and_tried_again(projects: Path,
                                                             tmp_path: Path) -> None:
    """A file that cannot be opened does not stop the import and is read next time."""
    locked = projects / "-home-mei-code-agent-bus" / "agent-4e5f6a7b.jsonl"
    content = locked.read_bytes()
    # File modes do not stop root (CI runs as root), so point the file at one whose
    # reads fail for everyone: reading /proc/self/mem at offset 0 raises EIO.
    locked.unlink()
    locked.symlink_to("/proc/self/mem")
    db = tmp_path / "h.db"
    first = await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    locked.unlink()
    locked.write_bytes(content)
    again = await run(TranscriptImporter(CLAUDE_CODE, projects), db)
    assert any(reason.startswith("unreadable file") for reason, _ in first.left_out)
    assert again.delta.sessions_added == 1


def _import_json(kind: str, folder: Path, db: Path) -> dict[str, Any]:
    """``harkback import KIND FOLDER --json``'s one source report (at most 60 s)."""
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "import", kind,
                           str(folder), "--db", str(db), "--json"],
                          capture_output=True, text=True, timeout=60, check=False)
    (report,) = json.loads(done.stdout)["sources"]
    found: dict[str, Any] = report
    return found


@pytest.mark.parametrize("kind", ["claude-code", "codex"])
def test_a_named_pipe_among_the_transcripts_is_passed_over(
        projects: Path, rollouts: Path, tmp_path: Path, kind: str) -> None:
    """A FIFO named like a transcript is not opened (opening one waits for a writer that
    never comes: the import hung); the real files are imported as without it."""
    folder = projects if kind == "claude-code" else rollouts
    pipe = folder / ("-home-mei-code-agent-bus/11111111-2222-3333-4444-555555555555.jsonl"
                     if kind == "claude-code" else "2026/03/04/rollout-2026-03-04T11-00-00-"
                     "0199a1b4-1111-7ddd-8eee-fffffffffff0.jsonl")
    os.mkfifo(pipe)
    with_pipe = _import_json(kind, folder, tmp_path / "h.db")
    pipe.unlink()
    without = _import_json(kind, folder, tmp_path / "plain.db")
    assert with_pipe["sessions"] == without["sessions"]
    assert with_pipe["sessions"]["added"] > 0


def test_nothing_to_import_is_an_error_record_not_text(tmp_path: Path) -> None:
    """A missing folder is a SourceUnreadable (a StoreUnavailable to callers), an unknown
    kind a QueryRejected."""
    nowhere = tmp_path.resolve() / "nowhere"
    missing = importers_for("codex", nowhere).failure()
    assert isinstance(missing, StoreUnavailable)
    assert missing == SourceUnreadable(
        f"no codex transcripts folder at {nowhere} (pass the folder)")
    assert isinstance(importers_for("fax", nowhere).failure(), QueryRejected)


@pytest.mark.parametrize("form", [CLAUDE_CODE, CODEX], ids=lambda form: form.kind)
def test_a_missing_transcripts_folder_fails_the_plan(tmp_path: Path,
                                                     form: TranscriptFormat) -> None:
    """Both folder importers plan alike: no folder is a StoreUnavailable naming it."""
    missing = tmp_path / "none"
    planned = TranscriptImporter(form, missing).plan(
        SourceState(key=SourceKey(kind="x", location="y")), full=False)
    assert f"folder at {missing}" in planned.failure().reason


def test_an_outcome_adds_up_the_deltas_of_its_units() -> None:
    """Counts of stored units add up; what was left out merges by reason."""
    unit = ImportUnit(left_out=(("bad line", 1),))
    outcome = ImportOutcome(key=SourceKey(kind="jsonl", location="f")).add(
        Delta(sessions_added=1, messages_added=3), unit).add(
        Delta(sessions_unchanged=2, messages_added=1), unit)
    assert outcome.delta == Delta(sessions_added=1, sessions_unchanged=2, messages_added=4)
    assert outcome.left_out == (("bad line", 2),)
