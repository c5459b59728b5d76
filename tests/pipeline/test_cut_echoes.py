"""A transcript once cut shorter, imported by a harkback that stored its ``/clear`` echo, read
on by one that leaves the echo out: the places its mark keeps by position no longer fit the
file's messages, which were stored over others (``written on`` before what was kept past the
cut, the echo overwritten), and in some files twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harkback.adapters.sources import claude_commands
from harkback.stages.ports import SessionStore
from tests.pipeline.test_transcript_cut import SID, contents, synced, transcript
from tests.support.new_stores import new_stores

store = new_stores("sqlite")
"""A new, empty store."""

CLEAR = ("<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
         "<command-args></command-args>")


def write(path: Path, *texts: str) -> None:
    """A Claude Code transcript of these user lines, a second apart."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({
        "type": "user", "sessionId": SID, "uuid": f"u{n}", "cwd": "/w/app",
        "timestamp": f"2026-03-01T10:00:{n:02d}Z", "message": {"role": "user", "content": text},
    }) + "\n" for n, text in enumerate(texts)), encoding="utf-8")


def test_a_cut_file_read_on_after_its_echo_is_left_out_keeps_each_message_in_place(
        tmp_path: Path, store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stored as an older harkback read it (the echo kept), cut shorter, written on past the
    cut (its mark then maps the file's later messages after the kept ones), then read on:
    each message stays where the store holds it, the new one after them all."""
    path = transcript(tmp_path)
    head = (CLEAR, "redis keys never expire", "ttl set on write")
    with monkeypatch.context() as older:  # how the older harkback read the echo: as typed
        older.setattr(claude_commands, "typed_command", lambda text: None)
        for texts in ((*head, "kept a", "kept b"), head, (*head, "", "", "written on", "w2")):
            write(path, *texts)
            synced(tmp_path, store)
    write(path, *head, "", "", "written on", "w2", "and read on")
    synced(tmp_path, store)
    assert [text.split("\n")[0] for text in contents(store)] == [
        "<command-name>/clear</command-name>", "redis keys never expire", "ttl set on write",
        "kept a", "kept b", "written on", "w2", "and read on"]
