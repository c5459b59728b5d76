"""Tests of the Hermes reader: strictly read-only opening, every schema era, the conversion."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from returns.result import Success

from harkback.adapters.sources.hermes import HermesImporter, database_files, read_snapshot
from harkback.adapters.sources.hermes_db import HermesDb, retrying
from harkback.adapters.sources.hermes_rows import (
    decode_content,
    lineage_parent,
    messages_from_rows,
    tool_calls,
)
from harkback.adapters.sources.importing import ImportUnit, Tally
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.imports import SourceKey, SourceState
from tests.support.hermes_db import HermesFile, multimodal

SID = "20260303_100000_aa11bb"


def _hermes(tmp_path: Path, era: str = "v30", folder: str = "hermes") -> Path:
    path = tmp_path / folder / "state.db"
    path.parent.mkdir(parents=True)
    db = HermesFile(path, era)
    db.session(SID, title="Docker")
    db.message(SID, "user", "the docker bridge has no DNS")
    db.message(SID, "assistant", "use a user-defined network")
    db.close()
    return path


def _units(path: Path) -> list[ImportUnit]:
    planned = HermesImporter(path.resolve()).plan(
        SourceState(key=SourceKey(kind="hermes", location=str(path))), full=False)
    assert isinstance(planned, Success), planned
    units = []
    for step in planned.unwrap().units:
        assert isinstance(step, Success), step
        units.append(step.unwrap())
    return units


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    """A WAL-mode Hermes file (no -wal beside it) in a read-only folder, itself read-only."""
    path = _hermes(tmp_path)
    os.chmod(path, 0o444)
    os.chmod(path.parent, 0o555)
    yield path
    os.chmod(path.parent, 0o755)
    os.chmod(path, 0o644)


def test_import_from_a_read_only_folder_writes_nothing(locked: Path) -> None:
    """No side file appears and no byte or mtime changes (as root, chmod stops no write)."""
    before = _snapshot(locked.parent)
    units = _units(locked)
    assert [m.content for m in units[0].conversations[0].messages] == [
        "the docker bridge has no DNS", "use a user-defined network"]
    assert _snapshot(locked.parent) == before
    assert stat.S_IMODE(locked.parent.stat().st_mode) == 0o555


def test_rollback_journal_file_is_read_without_side_files(tmp_path: Path) -> None:
    """An era-v9 file in rollback-journal mode is read with mode=ro, creating nothing."""
    path = _hermes(tmp_path, "v9")
    before = _snapshot(path.parent)
    opened = HermesDb.open(path).unwrap()
    assert opened.mode == "ro"
    opened.close()
    assert len(_units(path)[0].conversations) == 1
    assert _snapshot(path.parent) == before


def test_wal_file_without_its_wal_opens_immutable(tmp_path: Path) -> None:
    """With nothing waiting in a WAL, the reader opens immutable (no -wal/-shm created)."""
    path = _hermes(tmp_path)
    opened = HermesDb.open(path).unwrap()
    try:
        assert opened.mode == "immutable"
        assert sorted(p.name for p in path.parent.iterdir()) == ["state.db"]
    finally:
        opened.close()


def test_commits_still_in_the_wal_of_a_running_hermes_are_read(tmp_path: Path) -> None:
    """While Hermes holds the file open, its committed but un-checkpointed rows are seen."""
    path = _hermes(tmp_path)
    writer = HermesFile.reopen(path, "v30")
    writer.connection.execute("PRAGMA wal_autocheckpoint = 0")
    writer.message(SID, "user", "what about the macvlan driver")
    main_file = path.read_bytes()
    try:
        assert HermesDb.open(path).unwrap().mode == "ro"
        contents = [m.content for m in _units(path)[0].conversations[0].messages]
        assert "what about the macvlan driver" in contents
        assert path.read_bytes() == main_file
    finally:
        writer.close()


def test_a_write_during_an_unlocked_read_is_read_again(tmp_path: Path) -> None:
    """When Hermes writes while an immutable read runs, the unit is read again, correctly."""
    path = _hermes(tmp_path)
    planned = HermesImporter(path.resolve()).plan(
        SourceState(key=SourceKey(kind="hermes", location=str(path))), full=False).unwrap()
    writer = HermesFile.reopen(path, "v30")
    writer.message(SID, "user", "a write while harkback reads")
    writer.close()  # the last connection checkpoints into the main file
    steps = list(planned.units)
    assert all(isinstance(step, Success) for step in steps), steps
    contents = [m.content for m in steps[0].unwrap().conversations[0].messages]
    assert contents[-1] == "a write while harkback reads"


def test_paths_with_question_marks_and_hashes_open(tmp_path: Path) -> None:
    """The file: URI is built by pathlib, so ``?`` and ``#`` in folder names are safe."""
    path = _hermes(tmp_path, folder="we?ird #dir")
    assert len(_units(path)[0].conversations) == 1


def test_missing_and_foreign_files_fail_clearly(tmp_path: Path) -> None:
    """A missing file, a non-SQLite file and a non-Hermes database each say what they are."""
    missing = HermesDb.open(tmp_path / "nope.db").failure().reason
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    foreign = tmp_path / "harkback.db"
    SqliteStore.open(foreign).unwrap().close()
    assert missing.startswith("no Hermes database at")
    assert "is not a SQLite database" in HermesDb.open(text).failure().reason
    assert "is a harkback database" in HermesDb.open(foreign).failure().reason
    assert not (tmp_path / "nope.db").exists()


def test_only_core_columns_are_required(tmp_path: Path) -> None:
    """A schema with nothing but the core columns is still read."""
    path = tmp_path / "state.db"
    with sqlite3.connect(path) as raw:
        raw.executescript("""
            CREATE TABLE sessions (id TEXT PRIMARY KEY);
            CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT,
                                   content TEXT);
            INSERT INTO sessions VALUES ('s1');
            INSERT INTO messages VALUES (1, 's1', 'user', 'bare bones');""")
    raw.close()
    conversation = _units(path)[0].conversations[0]
    assert (conversation.session.source, conversation.messages[0].content) == ("cli",
                                                                               "bare bones")


def test_transient_io_errors_are_retried_then_raised() -> None:
    """A disk I/O error is tried three times in all; other errors are not retried."""
    calls: list[str] = []

    def failing() -> None:
        calls.append("io")
        raise sqlite3.OperationalError("disk I/O error")

    with pytest.raises(sqlite3.OperationalError):
        retrying(failing, sleep=lambda _: None)
    assert len(calls) == 3

    def locked_out() -> None:
        calls.append("other")
        raise sqlite3.OperationalError("no such table: sessions")

    with pytest.raises(sqlite3.OperationalError):
        retrying(locked_out, sleep=lambda _: None)
    assert calls.count("other") == 1


def test_profiles_beside_the_main_database_are_found(tmp_path: Path) -> None:
    """A Hermes home lists its state.db and each profiles/<name>/state.db; a hidden folder
    (``profiles/.trash``) is no profile, as the ``profiles/*`` pattern always read it."""
    home = tmp_path / "home"
    for folder in ("", "profiles/work/", "profiles/play/", "profiles/.trash/"):
        (home / folder).mkdir(parents=True, exist_ok=True)
        (home / folder / "state.db").write_bytes(b"")
    (home / "profiles" / "empty").mkdir()
    found = [p.relative_to(home).as_posix() for p in database_files(home)]
    assert found == ["state.db", "profiles/play/state.db", "profiles/work/state.db"]


@pytest.mark.parametrize(("row", "parent", "kept"), [
    ({"parent_session_id": "p", "source": "subagent"}, {"end_reason": "new_session"}, True),
    ({"parent_session_id": "p", "model_config": '{"_delegate_from": "p"}'}, None, True),
    ({"parent_session_id": "p"}, {"end_reason": "compression"}, True),
    ({"parent_session_id": "p", "source": "tool"}, {"end_reason": None}, True),
    ({"parent_session_id": "p", "model_config": '{"_branched_from": "p"}'}, {}, False),
    ({"parent_session_id": "p"}, {"end_reason": "branched"}, False),
    ({"parent_session_id": "p", "model_config": json.dumps(json.dumps({"_reset_from": "p"}))},
     {}, False),
    ({"parent_session_id": "p"}, {"end_reason": "daily"}, False),
    ({"parent_session_id": "p", "session_key": "tg:1"}, {"session_key": "tg:1"}, False),
    ({"parent_session_id": "p", "session_key": "tg:1"},
     {"session_key": "tg:1", "end_reason": "compression"}, True),
    ({"parent_session_id": "p"}, None, True),
    ({"parent_session_id": None}, None, False),
])
def test_lineage_follows_hermes_meanings(row: dict[str, object], parent: dict[str, object] | None,
                                          kept: bool) -> None:
    """Delegates and continuations keep their parent; branches and resets start anew."""
    assert (lineage_parent({"id": "c", **row}, parent) == "p") is kept


def test_multimodal_content_keeps_its_text_parts() -> None:
    """Text parts in any nesting are kept, an image as a placeholder; broken JSON is not."""
    value = multimodal({"type": "text", "text": "first"},
                       {"type": "image_url", "image_url": {"url": "data:x"}},
                       {"type": "input_text", "text": "second"})
    assert decode_content(value) == "first\n[image]\nsecond"
    assert decode_content(b"bytes too") == "bytes too"
    assert decode_content("\x00json:[1, ") is None


def test_a_message_that_is_only_an_image_stays_as_a_placeholder() -> None:
    """A screenshot sent alone was left out as an empty message (the request vanished);
    it is ``[image]`` now, its base64 never stored."""
    tally = Tally()
    image = multimodal({"type": "image_url", "image_url": {"url": "data:image/png;base64,"
                                                                 + "iVBOR" * 1000}})
    kept = messages_from_rows("s", [_row(1, "user", image),
                                    _row(2, "assistant", "a stack trace")], tally)
    assert [(m.role, m.content) for m in kept] == [("user", "[image]"),
                                                   ("assistant", "a stack trace")]
    assert tally.items() == ()


def test_tool_calls_accept_object_arguments_and_reject_garbage() -> None:
    """Arguments stored as objects become JSON text; unreadable JSON is reported as None."""
    calls = tool_calls(json.dumps([{"id": "c", "function": {"name": "t", "arguments": {"a": 1}}}]))
    assert calls is not None and calls[0].arguments == '{"a": 1}'
    assert tool_calls("{not json") is None
    assert tool_calls(None) == ()


def _row(row_id: int, role: str, content: str, **extra: object) -> dict[str, object]:
    return {"id": row_id, "role": role, "content": content, **extra}


def test_review_prompts_and_their_replies_are_left_out() -> None:
    """An old build's background review prompt and the reply after it are not imported."""
    tally = Tally()
    kept = messages_from_rows("s", [
        _row(1, "user", "real question"),
        _row(2, "user", "Review the conversation above and consider saving to memory"),
        _row(3, "assistant", "Saved two memories."),
        _row(4, "assistant", "real answer")], tally)
    assert [m.content for m in kept] == ["real question", "real answer"]
    assert tally.items() == (("background review prompt or reply", 2),)


def test_memory_context_blocks_are_removed_and_empty_rows_skipped() -> None:
    """Injected memory blocks are not history; a row left empty is skipped and counted."""
    tally = Tally()
    kept = messages_from_rows("s", [
        _row(1, "user", "<memory-context>likes tea</memory-context>\nwhich port?"),
        _row(2, "assistant", "   "),
        _row(3, "critic", "not a role harkback knows")], tally)
    assert [m.content for m in kept] == ["which port?"]
    assert dict(tally.items()) == {"empty message": 1, "message with role 'critic'": 1}


def test_a_long_role_no_message_has_is_named_cut_short() -> None:
    """A row's role that is none of harkback's is counted under a reason that names it cut,
    as ingest and a library caller's record name it (60 characters and "…", the rule of every
    echo): a 5,000-character role was the reason, then one cut to 57 and "..."."""
    tally = Tally()
    assert messages_from_rows("s", [_row(1, "r" * 5000, "hi")], tally) == ()
    ((reason, count),) = tally.items()
    assert (reason, count) == ("message with role '" + "r" * 60 + "…'", 1), reason[:80]


def test_long_tool_output_is_clipped_with_a_marker() -> None:
    """Tool output beyond the limit keeps head and tail, and the clip is counted."""
    tally = Tally()
    kept = messages_from_rows("s", [_row(1, "tool", "h" * 40_000 + "TAIL")], tally)
    assert kept[0].content.startswith("h" * 100) and kept[0].content.endswith("TAIL")
    assert len(kept[0].content) < 33_000
    assert tally.items() == (("tool output clipped", 1),)


def test_long_tool_call_arguments_are_clipped_like_tool_output() -> None:
    """A write_file call of a 200 KB file was stored, and indexed, whole: its arguments keep
    head and tail now, as tool output does, and the clip is counted."""
    tally = Tally()
    arguments = json.dumps({"path": "app.py", "content": "w" * 200_000 + "END"})
    row = {**_row(1, "assistant", ""), "tool_calls": json.dumps(
        [{"id": "c1", "function": {"name": "write_file", "arguments": arguments}}])}
    call, = messages_from_rows("s", [row], tally)[0].tool_calls
    assert call.arguments.startswith('{"path": "app.py"') and call.arguments.endswith('END"}')
    assert len(call.arguments) < 33_000
    assert tally.items() == (("tool call arguments clipped", 1),)


class _WritesBetweenReads:
    """A connection on which Hermes commits a message right after the first read of
    ``messages`` (standing in for a write that lands between two statements)."""

    def __init__(self, connection: sqlite3.Connection, write: Callable[[], object]) -> None:
        self.connection, self.write, self.written = connection, write, False

    def execute(self, sql: str, parameters: tuple[object, ...] = ()) -> sqlite3.Cursor:
        result = self.connection.execute(sql, parameters)
        if "messages" in sql and not self.written:
            self.written = True
            self.write()
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.connection, name)


def test_a_message_written_during_the_snapshot_is_never_below_the_cursor_unread(
        tmp_path: Path) -> None:
    """Every session with messages between the old cursor and the new one is re-read."""
    path = _hermes(tmp_path)
    writer = HermesFile.reopen(path, "v30")
    try:
        cursor = writer.connection.execute("SELECT MAX(id) FROM messages").fetchone()[0]
        db = HermesDb.open(path).unwrap()
        assert db.mode == "ro"
        reader = _WritesBetweenReads(
            db.connection, lambda: writer.message(SID, "user", "written mid-snapshot"))
        snapshot = read_snapshot(reader, db.session_columns, cursor)  # type: ignore[arg-type]
        db.close()
        gained = {r[0] for r in writer.connection.execute(
            "SELECT session_id FROM messages WHERE id > ? AND id <= ?", (cursor, snapshot.top))}
    finally:
        writer.close()
    assert reader.written
    assert gained == set(snapshot.fresh)


def test_out_of_range_times_are_unknown_and_counted(tmp_path: Path) -> None:
    """A millisecond message time and an absurd session time are read as unknown."""
    path = tmp_path / "hermes" / "state.db"
    path.parent.mkdir()
    db = HermesFile(path, "v30")
    db.session(SID, started_at=1e20)
    db.message(SID, "user", "when was this", timestamp=1.7e12)
    db.message(SID, "assistant", "just now")
    db.close()
    unit, = _units(path)
    conversation, = unit.conversations
    assert conversation.session.started_at is None
    assert [m.timestamp is None for m in conversation.messages] == [True, False]
    assert dict(unit.left_out)["time out of range"] == 2


def test_a_message_id_past_what_a_store_holds_is_dropped_and_named(tmp_path: Path) -> None:
    """A Hermes message id over 2**31 - 1 (a position no store can hold) leaves that message
    out, named with its file and id; the session and its other messages are imported (the
    message's ValueError stopped the whole import)."""
    path = tmp_path / "hermes" / "state.db"
    path.parent.mkdir()
    db = HermesFile(path, "v30")
    db.session(SID)
    db.message(SID, "user", "the docker bridge has no DNS")
    db.message(SID, "assistant", "use a user-defined network", id=2**31)
    db.close()
    unit, = _units(path)
    conversation, = unit.conversations
    assert [m.content for m in conversation.messages] == ["the docker bridge has no DNS"]
    skip, = unit.skipped
    assert skip.describe() == (f"{path.resolve()}: message id past what a store holds: "
                               f"message {2**31} of session {SID} dropped")
