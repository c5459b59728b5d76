"""Bytes that are not UTF-8 in a Claude Code or Codex transcript, or in a Hermes state.db,
are never replaced silently: each place is named, the rest is read, and the status is 3."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.test_import_cli import harkback
from tests.support.hermes_db import HermesFile

NOW = "2026-03-03T14:15:00.000Z"
REPLACED = "not UTF-8: 2 byte(s) replaced by U+FFFD"


def _latin1_lines(path: Path, lines: list[dict[str, object]]) -> Path:
    """``lines`` as a JSON-lines file written in Latin-1 (``é`` is one byte, not UTF-8)."""
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(json.dumps(line, ensure_ascii=False).encode("latin-1") + b"\n"
                              for line in lines))
    return path


def _claude_code(folder: Path) -> Path:
    def line(kind: str, text: str, uuid: str) -> dict[str, object]:
        return {"type": kind, "sessionId": "c1", "uuid": uuid, "timestamp": NOW,
                "message": {"role": kind, "content": text}}
    return _latin1_lines(folder / "-w-app" / "c1.jsonl", [
        line("user", "the heron logs", "u1"), line("assistant", "café crème rotated", "u2")])


def _codex(folder: Path) -> Path:
    def said(role: str, text: str) -> dict[str, object]:
        return {"timestamp": NOW, "type": "response_item", "payload": {
            "type": "message", "role": role, "content": [{"type": "input_text", "text": text}]}}
    return _latin1_lines(
        folder / "2026" / "03" / "03" /
        "rollout-2026-03-03T14-15-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
        [{"timestamp": NOW, "type": "session_meta", "payload": {"id": "c1", "cwd": "/w"}},
         said("user", "the heron logs"), said("assistant", "café crème rotated")])


def test_a_claude_code_or_codex_line_that_is_not_utf8_is_named_and_read(tmp_path: Path) -> None:
    """A Latin-1 line in either transcript: named ``file:line`` on stderr and in --json,
    status 3, and its message stored with U+FFFD where the bytes were."""
    for kind, write in (("claude-code", _claude_code), ("codex", _codex)):
        folder = tmp_path / kind
        path = write(folder)
        db = str(tmp_path / f"{kind}.db")
        done = harkback("import", kind, str(folder), "--db", db, "--json")
        assert done.returncode == 3, (kind, done.stderr)
        assert f"harkback: {path}:{3 if kind == 'codex' else 2}: {REPLACED} (repaired)" in (
            done.stderr)
        source = json.loads(done.stdout)["sources"][0]
        assert [(s["file"], s["reason"], s["outcome"]) for s in source["skipped_lines"]] == [
            (str(path), REPLACED, "repaired")], kind
        assert source["skipped"]["not UTF-8"] == 1  # the JSON key stays
        told = harkback("import", kind, str(folder), "--db", db, "--full").stdout
        assert "  left out or changed: not UTF-8 (1)" in told.splitlines(), kind
        shown = json.loads(harkback("show", "c1", "--json", "--db", db).stdout)
        assert shown["messages"][-1]["content"] == "caf\ufffd cr\ufffdme rotated", kind
def _latin1(file: HermesFile, table: str, row_id: str | int, **columns: str) -> None:
    """Store ``columns`` of a row as TEXT holding their Latin-1 bytes (invalid UTF-8), as a
    writer that does not check its encoding would."""
    for column, text in columns.items():
        file.connection.execute(f'UPDATE {table} SET "{column}" = CAST(? AS TEXT) WHERE id = ?',
                                (text.encode("latin-1"), row_id))


def test_a_hermes_row_that_is_not_utf8_is_named_and_read(tmp_path: Path) -> None:
    """Invalid UTF-8 in a session's title and in a message's content (SQLite's default
    reader raises "Could not decode to UTF-8"): every session is imported, the message
    kept with U+FFFD, each row named, status 3."""
    home = tmp_path / "hermes"
    home.mkdir()
    file = HermesFile(home / "state.db", "v30")
    file.session("s1", title="Docker")
    file.message("s1", "user", "the docker bridge")
    odd = file.message("s1", "assistant", "placeholder")
    file.session("s2", title="placeholder")
    file.message("s2", "user", "export the invoices")
    _latin1(file, "messages", odd, content="café crème bridge")
    _latin1(file, "sessions", "s2", title="Réunion")
    file.close()
    db = str(tmp_path / "h.db")
    done = harkback("import", "hermes", str(home / "state.db"), "--db", db, "--json")
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    source = json.loads(done.stdout)["sources"][0]
    assert source["sessions"]["added"] == 2
    where = str((home / "state.db").resolve())
    assert sorted((s["file"], s["reason"]) for s in source["skipped_lines"]) == [
        (where, f"not UTF-8: message {odd} of session s1: 2 byte(s) in content replaced by "
                "U+FFFD"),
        (where, "not UTF-8: session s2: 1 byte(s) in title replaced by U+FFFD")]
    shown = json.loads(harkback("show", "s1", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == [
        "the docker bridge", "caf\ufffd cr\ufffdme bridge"]
    titled = json.loads(harkback("show", "s2", "--json", "--db", db).stdout)
    assert titled["session"]["title"] == "R\ufffdunion"


def test_a_hermes_session_id_that_is_not_utf8_keeps_its_messages(tmp_path: Path) -> None:
    """A session id holding a Latin-1 byte: the session is stored under its id with the
    byte written as ``\\xe9``, with its messages, and named; a later sync does not take it
    for deleted."""
    home = tmp_path / "hermes"
    home.mkdir()
    file = HermesFile(home / "state.db", "v30")
    file.session("placeholder")
    file.message("placeholder", "user", "the heron logs")
    file.connection.execute("UPDATE messages SET session_id = CAST(? AS TEXT)",
                            ("café".encode("latin-1"),))
    _latin1(file, "sessions", "placeholder", id="café")
    file.close()
    db = str(tmp_path / "h.db")
    sync = ("sync", "--hermes", str(home / "state.db"), "--db", db, "--json")
    done = harkback(*sync, env={"HOME": str(tmp_path)})
    assert done.returncode == 3, done.stderr
    [source] = [s for s in json.loads(done.stdout)["sources"] if s["skipped_lines"]]
    assert [(s["reason"], s["outcome"]) for s in source["skipped_lines"]] == [
        ("not UTF-8: session caf\\xe9: 1 byte(s) in id written as \\xNN", "renamed")]
    shown = json.loads(harkback("show", "caf\\xe9", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == ["the heron logs"]
    writer = HermesFile.reopen(home / "state.db", "v30")
    writer.session("s2")
    writer.message("s2", "user", "export the invoices")
    writer.close()
    assert harkback(*sync, env={"HOME": str(tmp_path)}).returncode == 0
    shown = json.loads(harkback("show", "caf\\xe9", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == ["the heron logs"]


def test_hermes_ids_that_differ_only_in_bytes_not_utf8_stay_two_sessions(
        tmp_path: Path) -> None:
    """"café" and "cafè" in Latin-1 (both one byte that is not UTF-8): replaced by U+FFFD
    they would be one id and one session lost. Both are stored with their own messages,
    and a child keeps its damaged parent."""
    home = tmp_path / "hermes"
    home.mkdir()
    file = HermesFile(home / "state.db", "v30")
    for name, said in (("one", "the heron logs"), ("two", "the invoice export")):
        file.session(name)
        file.message(name, "user", said)
    file.session("child", parent="one", source="subagent")
    file.message("child", "user", "the delegated heron task")
    for name, spelled in (("one", "café"), ("two", "cafè")):
        raw = spelled.encode("latin-1")
        for column in ("session_id",):
            file.connection.execute(f"UPDATE messages SET {column} = CAST(? AS TEXT) "
                                    f"WHERE {column} = ?", (raw, name))
        file.connection.execute("UPDATE sessions SET parent_session_id = CAST(? AS TEXT) "
                                "WHERE parent_session_id = ?", (raw, name))
        _latin1(file, "sessions", name, id=spelled)
    file.close()
    db = str(tmp_path / "h.db")
    done = harkback("import", "hermes", str(home / "state.db"), "--db", db, "--json")
    assert done.returncode == 3, done.stderr
    assert json.loads(done.stdout)["sources"][0]["sessions"]["added"] == 3
    for shown_id, said in (("caf\\xe9", "the heron logs"), ("caf\\xe8", "the invoice export")):
        shown = json.loads(harkback("show", shown_id, "--json", "--db", db).stdout)
        assert [m["content"] for m in shown["messages"]] == [said], shown_id
    child = json.loads(harkback("show", "child", "--json", "--db", db).stdout)
    assert child["lineage"]["parent"]["session_id"] == "caf\\xe9"


def test_a_transcript_starting_with_nul_bytes_is_read_as_utf8(tmp_path: Path) -> None:
    """Claude Code and Codex write UTF-8: a transcript whose head a crash filled with NUL
    bytes is not taken for UTF-32 (one unreadable "line", the session lost, status 0);
    the NUL bytes are named (removed) and the session's messages are stored."""
    folder = tmp_path / "claude"
    path = _claude_code(folder)
    path.write_bytes(b"\x00" * 64 + b"\n" + path.read_bytes().decode("latin-1").encode())
    db = str(tmp_path / "c.db")
    done = harkback("import", "claude-code", str(folder), "--db", db, "--json")
    assert done.returncode == 3, done.stderr
    source = json.loads(done.stdout)["sources"][0]
    assert [(s["line"], s["reason"]) for s in source["skipped_lines"]] == [
        (1, "NUL bytes: 64 removed")]
    shown = json.loads(harkback("show", "c1", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == [
        "the heron logs", "café crème rotated"]


def test_a_hermes_session_id_stored_as_a_blob_keeps_its_messages(tmp_path: Path) -> None:
    """A session row whose id a writer bound as bytes (a BLOB; its messages name it as
    TEXT): the session is stored with its messages, not empty."""
    home = tmp_path / "hermes"
    home.mkdir()
    file = HermesFile(home / "state.db", "v30")
    file.session("b1")
    file.message("b1", "user", "the heron logs")
    file.connection.execute("UPDATE sessions SET id = CAST(id AS BLOB)")
    file.close()
    db = str(tmp_path / "h.db")
    done = harkback("import", "hermes", str(home / "state.db"), "--db", db)
    assert done.returncode == 0, done.stderr
    shown = json.loads(harkback("show", "b1", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == ["the heron logs"]
