"""``harkback ingest``: its JSON report, and the one JSON-lines path it shares with
``import jsonl``."""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import json
import os
import pty
import re
import sqlite3
import struct
import subprocess
import sys
import termios
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.pipeline.test_cli import _write_sessions, run


def test_ingest_json_reports_the_counts(tmp_path: Path) -> None:
    """``ingest --json`` prints the import's payload; nothing else goes to stdout."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    done = run("ingest", str(source), "--json", db=tmp_path / "h.db")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["success"] is True
    assert (payload["kind"], payload["location"]) == ("jsonl", str(source.resolve()))
    assert payload["sessions"] == {"added": 3, "updated": 0, "unchanged": 0, "skipped": 0}
    assert payload["messages"] == {"added": 5, "updated": 0, "removed": 0, "kept": 0}


def test_ingest_json_calls_the_sessions_found_unchanged_so_as_its_line_does(
        tmp_path: Path) -> None:
    """A file ingested again: the JSON counts the sessions found unchanged as "unchanged",
    the number the human line gives (and keeps "skipped", their old name); "skipped" also
    names the lines an import leaves out."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    db = tmp_path / "h.db"
    assert run("ingest", str(source), db=db).returncode == 0
    line = run("ingest", str(source), db=db).stdout
    found = re.search(r"(\d+) unchanged", line)
    assert found is not None, line
    payload = json.loads(run("ingest", str(source), "--json", db=db).stdout)
    shown = int(found.group(1))
    assert shown > 0
    assert payload["sessions"]["unchanged"] == shown == payload["sessions"]["skipped"]


def test_ingest_json_with_a_bad_line_is_done_with_skips_and_keeps_the_rest(
        tmp_path: Path) -> None:
    """A bad line: the import's path names it (file:line, stderr and JSON), the good sessions
    are stored, and the status is 3 (done, but damaged input was skipped)."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source, extra_lines=('{"id": "broken", "messages": [',))
    done = run("ingest", str(source), "--json", db=tmp_path / "h.db")
    assert done.returncode == 3, done.stderr
    payload = json.loads(done.stdout)
    assert payload["success"] is True
    assert payload["skipped"] == {"bad line": 1}
    [named] = payload["skipped_lines"]
    assert (named["file"], named["line"]) == (str(source.resolve()), 2)
    assert named["reason"].startswith("bad line: invalid JSON")
    assert payload["skipped_lines_total"] == 1
    assert payload["sessions"]["added"] == 3
    assert f"{source.resolve()}:2: bad line: invalid JSON" in done.stderr


def test_a_bad_line_is_placed_in_its_own_line_not_json_s_count_of_lines(
        tmp_path: Path) -> None:
    """A line cut short was "file:1: ... Expecting value: line 2 column 1 (char 7)": json
    counted the line's end as a second line. Now the reason says the line ended early, and
    a mistake inside a line gives its column."""
    source = tmp_path / "sessions.jsonl"
    source.write_text('{"id":\n{"id": "b", x}\n', encoding="utf-8")
    done = run("ingest", str(source), "--json", db=tmp_path / "h.db")
    assert done.returncode == 3, done.stderr
    reasons = [named["reason"] for named in json.loads(done.stdout)["skipped_lines"]]
    assert reasons == [
        "bad line: invalid JSON: Expecting value: the line ends before its JSON does",
        "bad line: invalid JSON: Expecting property name enclosed in double quotes at column 13"]
    assert f"{source.resolve()}:1: bad line: invalid JSON: Expecting value: the line ends" \
        in done.stderr


def test_ingest_json_of_an_unreadable_file(tmp_path: Path) -> None:
    """A file whose reads fail: a JSON payload with the reason, exit 1."""
    source = tmp_path / "sessions.jsonl"
    source.symlink_to("/proc/self/mem")
    done = run("ingest", str(source), "--json", db=tmp_path / "h.db")
    assert done.returncode == 1
    payload = json.loads(done.stdout)
    assert payload["success"] is False and "cannot read" in payload["error"]


def test_ingest_and_import_jsonl_are_one_path(tmp_path: Path) -> None:
    """What ``ingest`` read, ``import jsonl`` knows it read (one ledger, one importer); an
    ingest again rereads the file and rewrites nothing."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    db = tmp_path / "h.db"
    assert run("ingest", str(source), db=db).returncode == 0
    listed = json.loads(run("sources", "--json", db=db).stdout)["sources"]
    assert [(s["kind"], s["location"]) for s in listed] == [("jsonl", str(source.resolve()))]
    imported = json.loads(run("import", "jsonl", str(source), "--json", db=db).stdout)
    assert imported["sources"][0]["sessions"] == {"added": 0, "updated": 0, "unchanged": 3,
                                                  "skipped": 3}
    again = json.loads(run("ingest", str(source), "--json", db=db).stdout)
    assert again["sessions"] == {"added": 0, "updated": 0, "unchanged": 3, "skipped": 3}
    assert again["messages"] == {"added": 0, "updated": 0, "removed": 0, "kept": 0}


def test_ingest_of_a_folder_or_a_pipe_says_what_it_is(tmp_path: Path) -> None:
    """``ingest <(cat f)`` or a folder: not a regular file, exit 1; the path exists, so
    "no such file" (as was said) sent users looking for a typo."""
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    for given in (tmp_path, pipe):
        for command in (("ingest", str(given)), ("import", "jsonl", str(given))):
            done = run(*command, db=tmp_path / "h.db")
            assert (done.returncode, done.stderr) == (1, f"harkback: not a regular file: {given} "
                                                      "(a file is read, not a folder or a pipe)\n")
    assert run("ingest", str(tmp_path / "none"), db=tmp_path / "h.db").stderr == \
        f"harkback: no such file: {tmp_path / 'none'}\n"


def test_a_session_id_holding_a_nul_is_a_bad_line_and_a_second_ingest_works(
        tmp_path: Path) -> None:
    """An id with a NUL was stored, then could not be replaced: ingesting the file again
    stopped on "UNIQUE constraint failed" (SQLite's JSON lists end at the NUL)."""
    source = tmp_path / "nul.jsonl"
    source.write_text(
        json.dumps({"id": "a\u0000b", "messages": [{"role": "user", "content": "heron"}]})
        + "\n" + json.dumps({"id": "ok", "messages": [{"role": "user", "content": "egret"}]})
        + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    first = run("ingest", str(source), "--json", db=db)
    again = run("ingest", str(source), "--json", db=db)
    assert (first.returncode, again.returncode) == (3, 3), again.stderr
    assert f"{source}:1: bad line: id: a session id cannot hold a NUL character" in (
        again.stderr)
    assert json.loads(again.stdout)["sessions"] == {"added": 0, "updated": 0, "unchanged": 1,
                                                   "skipped": 1}


def test_a_dash_for_standard_input_says_a_file_is_needed(tmp_path: Path) -> None:
    """``cat s.jsonl | harkback ingest -`` said "no such file: -"."""
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "ingest", "-",
                           "--db", str(tmp_path / "h.db")], input="{}\n", cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    assert done.stderr == ("harkback: standard input is not read: save the sessions to a "
                           "file and name it\n")
    assert not (tmp_path / "h.db").exists()


@pytest.mark.parametrize(("name", "made", "said"), [
    ("sessions.jsonl.gz", gzip.compress, "gzip-compressed: decompress it "
     "first (gunzip -k FILE)"),
    ("state.db", None, "a SQLite database (a Hermes state.db is read by: harkback import "
     "hermes PATH)")])
@pytest.mark.parametrize("command", [("ingest",), ("import", "jsonl")])
def test_a_compressed_file_or_a_database_is_named_for_what_it_is(
        tmp_path: Path, name: str, made: Callable[[bytes], bytes] | None, said: str,
        command: tuple[str, ...]) -> None:
    """A .jsonl.gz or a SQLite file read as text was lines of undecodable bytes, each named
    as damage with a hint of Latin-1, status 3 and an empty store made; now one line
    saying what the file is, status 1, no store."""
    source = tmp_path / name
    if made is None:
        sqlite3.connect(source).execute("CREATE TABLE sessions (id TEXT)").connection.close()
    else:
        _write_sessions(tmp_path / "plain.jsonl")
        source.write_bytes(made((tmp_path / "plain.jsonl").read_bytes()))
    done = run(*command, str(source), db=tmp_path / "h.db")
    assert done.returncode == 1
    assert done.stderr.endswith(f"{source} is not JSON lines but {said}\n"), done.stderr
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "h.db").exists()


def _accented(path: Path, encoding: str) -> Path:
    """Two sessions with accented text, written in ``encoding``."""
    lines = [json.dumps({"id": f"s{i}", "messages": [
        {"role": "user", "content": "café crème docker"}]}, ensure_ascii=False)
        for i in range(2)]
    path.write_bytes(("\n".join(lines) + "\n").encode(encoding))
    return path


def _ingested(tmp_path: Path, command: tuple[str, ...], encoding: str, db: Path
              ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The accented sessions written in ``encoding``, given to ``command`` with ``--json``:
    the finished process and the file's report (``import`` nests it under ``sources``)."""
    source = _accented(tmp_path / "sessions.jsonl", encoding)
    done = run(*command, str(source), "--json", db=db)
    payload = json.loads(done.stdout)
    return done, payload["sources"][0] if command[0] == "import" else payload


@pytest.mark.parametrize("command", [("ingest",), ("import", "jsonl")])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_utf16_or_utf32_file_is_read_as_what_it_is(
        tmp_path: Path, command: tuple[str, ...], encoding: str) -> None:
    """A "Unicode" file of a Windows editor (UTF-16, with or without a byte order mark;
    UTF-32 too) is read whole and text intact, and the report says which encoding it was."""
    db = tmp_path / "h.db"
    done, report = _ingested(tmp_path, command, encoding, db)
    assert done.returncode == 0, done.stderr
    assert report["sessions"]["added"] == 2
    assert any("UTF-16" in note or "UTF-32" in note for note in report["notes"])
    shown = json.loads(run("show", "s1", "--json", db=db).stdout)
    assert shown["messages"][0]["content"] == "café crème docker"


@pytest.mark.parametrize("command", [("ingest",), ("import", "jsonl")])
def test_bytes_that_are_not_utf8_are_counted_and_named(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """A Latin-1 file: each line holding bytes that are not UTF-8 is named (file:line), the
    bytes are counted in a note, and the status says damaged input was met (3); the rest of
    the text is stored."""
    db = tmp_path / "h.db"
    done, report = _ingested(tmp_path, command, "latin-1", db)
    assert done.returncode == 3, done.stderr
    assert report["sessions"]["added"] == 2
    assert [(s["line"], s["reason"]) for s in report["skipped_lines"]] == [
        (1, "not UTF-8: 2 byte(s) replaced by U+FFFD"),
        (2, "not UTF-8: 2 byte(s) replaced by U+FFFD")]
    assert any("4 byte(s) on 2 line(s) are not UTF-8" in note for note in report["notes"])
    shown = json.loads(run("show", "s0", "--json", db=db).stdout)
    assert shown["messages"][0]["content"] == "caf\ufffd cr\ufffdme docker"


def test_ingest_says_in_words_that_bytes_were_replaced(tmp_path: Path) -> None:
    """Without --json: the lines on stderr, the count of bytes on stdout."""
    source = _accented(tmp_path / "sessions.jsonl", "latin-1")
    done = run("ingest", str(source), db=tmp_path / "h.db")
    assert done.returncode == 3
    assert "sessions.jsonl:2: not UTF-8: 2 byte(s) replaced by U+FFFD (repaired)" in done.stderr
    assert "(skipped)" not in done.stderr  # the line was read
    assert "note: 4 byte(s) on 2 line(s) are not UTF-8" in done.stdout


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_the_progress_bar_ends_full_whatever_the_encoding(tmp_path: Path, encoding: str) -> None:
    """The bar counts the bytes read from the file against the file's size: a UTF-16 file
    (two bytes a character) ends at 100 %, not at about half."""
    source = tmp_path / "sessions.jsonl"
    source.write_bytes("".join(json.dumps({"id": f"s{i}", "messages": [
        {"role": "user", "content": "café crème docker " * 40}]}, ensure_ascii=False) + "\n"
        for i in range(60)).encode(encoding))
    done = run("ingest", str(source), "--progress", db=tmp_path / "h.db")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1].endswith("100%"), done.stderr  # \r read as a newline


def _bar_rows(columns: int, source: Path, db: Path) -> list[str]:
    """What ``harkback ingest`` drew on a terminal (a pseudo-terminal) ``columns`` wide."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "HARKBACK_DB")}
    with subprocess.Popen([sys.executable, "-m", "harkback.pipeline.cli", "ingest",
                           str(source), "--db", str(db)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=follower, env=env) as child:
        os.close(follower)
        drawn = b""
        with contextlib.suppress(OSError):  # EIO once the child has closed its side
            while chunk := os.read(leader, 65536):
                drawn += chunk
        os.close(leader)
        assert child.wait(timeout=120) == 0, drawn
    return re.split(r"[\r\n]+", drawn.decode())


@pytest.mark.parametrize("columns", [20, 12, 4])
def test_the_progress_bar_fits_a_narrow_terminal(tmp_path: Path, columns: int) -> None:
    """A bar of 50 columns on a terminal 20 wide wrapped, and each redraw (a carriage
    return, back to the start of the last row only) left rows behind: a narrow pane filled
    with bars. Every row drawn now fits the terminal, and the bar still ends at 100 %."""
    source = tmp_path / "sessions.jsonl"
    source.write_text("".join(json.dumps({"id": f"s{i}", "messages": [
        {"role": "user", "content": "docker bridge " * 40}]}) + "\n" for i in range(3000)),
        encoding="utf-8")
    rows = _bar_rows(columns, source, tmp_path / "h.db")
    assert all(len(row) < columns for row in rows), [r for r in rows if len(r) >= columns]
    if columns > len(" 100%"):  # else no room for the share: nothing is drawn
        assert rows[-1] == "" and rows[-2].endswith("100%"), rows[-3:]


def test_a_damaged_line_names_its_file_as_the_location_does(tmp_path: Path) -> None:
    """A file name with a byte that is not UTF-8: ``location`` wrote it ``\\xe9`` and each
    ``skipped_lines`` entry U+FFFD, so the two named one file two ways."""
    source = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9.jsonl"))
    source.write_text('{"id": "a"}\n{"id":\n', encoding="utf-8")
    done = run("ingest", str(source), "--json", db=tmp_path / "h.db")
    assert done.returncode == 3, done.stderr
    payload = json.loads(done.stdout)
    assert payload["location"].endswith("/caf\\xe9.jsonl")
    assert [named["file"] for named in payload["skipped_lines"]] == [payload["location"]]


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize(("kind", "transcript", "said"), [
    ("claude-code", "claude-code/projects/-home-mei-code-youer-server/"
     "0b9e8d7c-6a5f-4e3d-8c2b-1a0f9e8d7c6b.jsonl", "a Claude Code transcript"),
    ("codex", "codex/sessions/2026/03/04/"
     "rollout-2026-03-04T10-00-00-0199a1b4-1111-7ddd-8eee-ffffffffffff.jsonl",
     "a Codex rollout")])
@pytest.mark.parametrize("command", [("ingest",), ("import", "jsonl")])
def test_another_agent_s_transcript_is_named_with_the_import_that_reads_it(
        tmp_path: Path, kind: str, transcript: str, said: str,
        command: tuple[str, ...]) -> None:
    """A transcript given as the ingest format named every line ("id: expected a
    non-empty string, got None"), stored nothing and ended with status 3; now one line
    naming what it is and the import that reads it, status 1, no store. That import,
    given the transcript's folder as the line says, stores its sessions."""
    source = FIXTURES / transcript
    done = run(*command, str(source), db=tmp_path / "h.db")
    assert done.returncode == 1
    assert (f"{source} is not the ingest format (a session a line) but {said}: "
            f"harkback import {kind} [DIR] reads them") in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "h.db").exists()
    folder = FIXTURES / Path(transcript).parts[0] / Path(transcript).parts[1]
    imported = run("import", kind, str(folder), db=tmp_path / "h.db")
    assert imported.returncode in (0, 3), imported.stderr
    counted = run("stats", "--json", db=tmp_path / "h.db")
    assert json.loads(counted.stdout)["sessions"] > 0


@pytest.mark.parametrize(("indent", "wrapped", "said"), [
    (None, False, "a JSON array: write each session on a line of its own"),
    (2, False, "a JSON array: write each session on a line of its own"),
    (2, True, "a JSON document over several lines: write each session on a line of its "
              "own")])
@pytest.mark.parametrize("command", [("ingest",), ("import", "jsonl")])
def test_sessions_saved_as_one_json_document_are_named_so(
        tmp_path: Path, indent: int | None, wrapped: bool, said: str,
        command: tuple[str, ...]) -> None:
    """Sessions saved as a JSON array (json.dump of a list), on one line or pretty-printed,
    or in a pretty-printed object, named each line as damage, stored nothing and ended
    with status 3; now one line saying what the file is, status 1, no store. The same
    sessions one a line are stored."""
    sessions = [{"id": f"s{i}", "messages": [{"role": "user", "content": f"docker {i}"}]}
                for i in range(2)]
    source = tmp_path / "sessions.json"
    source.write_text(json.dumps({"sessions": sessions} if wrapped else sessions,
                                 indent=indent), encoding="utf-8")
    done = run(*command, str(source), db=tmp_path / "h.db")
    assert done.returncode == 1
    assert f"{source} is not the ingest format (a session a line) but {said}" in done.stderr
    assert len(done.stderr.splitlines()) == 1 and not (tmp_path / "h.db").exists()
    lines = tmp_path / "sessions.jsonl"
    lines.write_text("".join(json.dumps(s) + "\n" for s in sessions), encoding="utf-8")
    stored = run(*command, str(lines), db=tmp_path / "h.db")
    assert stored.returncode == 0, stored.stderr
    assert json.loads(run("stats", "--json", db=tmp_path / "h.db").stdout)["sessions"] == 2
