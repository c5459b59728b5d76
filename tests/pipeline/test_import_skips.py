"""Importers say what they skipped: file:line and why, an exit status of 3, and a damaged
time or message never moves or drops its session."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.test_import_cli import harkback
from tests.support.hermes_db import HermesFile

NOW = "2026-03-03T14:15:00.000Z"


def _line(kind: str, text: str, when: object, uuid: str) -> str:
    return json.dumps({"type": kind, "sessionId": "c1", "uuid": uuid, "timestamp": when,
                       "cwd": "/w/app", "message": {"role": kind, "content": text}})


def _transcript(folder: Path, *lines: str) -> Path:
    path = folder / "projects" / "-w-app" / "c1.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def test_a_numeric_timestamp_never_moves_a_claude_code_session(tmp_path: Path) -> None:
    """``"timestamp": 12345`` on one line is ignored and named; the session keeps its time
    and still shows in ``recent --since``."""
    path = _transcript(tmp_path, _line("user", "rotate the heron logs", NOW, "u1"),
                       _line("assistant", "rotated", 12345, "u2"),
                       _line("user", "thanks", "1970-01-01T03:25:45Z", "u3"))
    db = str(tmp_path / "h.db")
    done = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db, "--json")
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        f"harkback: {path}:2: time ignored: '12345' is not an ISO 8601 string (ignored)",
        f"harkback: {path}:3: time ignored: '1970-01-01T03:25:45Z' is before 2020 or in "
        "the future (ignored)"]
    source = json.loads(done.stdout)["sources"][0]
    assert source["skipped_lines_total"] == 2
    assert [(s["line"], s["file"]) for s in source["skipped_lines"]] == [
        (2, str(path)), (3, str(path))]
    assert source["messages"]["added"] == 3  # the messages stay, without their times
    recent = json.loads(harkback("recent", "--since", "2026-03-01", "--json", "--db", db).stdout)
    [result] = recent["results"]
    assert result["session_id"] == "c1"
    assert result["started_at"] == 1772547300.0  # 2026-03-03T14:15:00Z


def test_verbose_names_every_skipped_line_and_the_default_names_ten(tmp_path: Path) -> None:
    """Twelve torn lines: ten named and a count without --verbose, all twelve with it."""
    _transcript(tmp_path, _line("user", "heron", NOW, "u1"), *(["{torn"] * 12))
    db = str(tmp_path / "h.db")
    quiet = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db)
    loud = harkback("import", "claude-code", str(tmp_path / "projects"), "--db", db,
                    "--full", "--verbose")
    assert quiet.returncode == loud.returncode == 3
    assert quiet.stderr.count("unreadable line: not JSON (skipped)") == 10
    assert quiet.stderr.splitlines()[-1] == (
        "harkback: 2 more damaged line(s) or field(s) (--verbose names them)")
    named = [line for line in loud.stderr.splitlines() if line.endswith("(skipped)")]
    assert [line.split(".jsonl:")[1].split(":")[0] for line in named] == [
        str(n) for n in range(2, 14)]


def test_a_clean_import_exits_zero(tmp_path: Path) -> None:
    """Nothing damaged, nothing named: status 0 and empty skipped_lines."""
    _transcript(tmp_path, _line("user", "heron", NOW, "u1"))
    done = harkback("import", "claude-code", str(tmp_path / "projects"), "--json",
                    "--db", str(tmp_path / "h.db"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sources"][0]["skipped_lines"] == []


def test_jsonl_reports_a_duplicate_id_and_keeps_a_session_with_a_bad_time(
        tmp_path: Path) -> None:
    """A session id seen twice is named (the last copy kept); one bad message time loses
    the time, not the session; a bad message loses itself only."""
    source = tmp_path / "s.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in [
        {"id": "a", "messages": [{"role": "user", "content": "first copy"}]},
        {"id": "b", "started_at": 1_772_000_000, "messages": [
            {"role": "user", "content": "heron", "timestamp": "soon"},
            {"role": "robot", "content": "lost"},
            {"role": "assistant", "content": "kept", "timestamp": 1_772_000_100}]},
        {"id": "a", "messages": [{"role": "user", "content": "second copy"}]}]) + "\n",
        encoding="utf-8")
    db = str(tmp_path / "h.db")
    done = harkback("import", "jsonl", str(source), "--db", db, "--json")
    assert done.returncode == 3, done.stderr
    named = json.loads(done.stdout)["sources"][0]["skipped_lines"]
    assert [(s["line"], s["reason"].split(":")[0], s["outcome"]) for s in named] == [
        (2, "time ignored", "ignored"), (2, "message dropped", "dropped"),
        (3, "duplicate session id", "kept")]
    assert "'a' (also on line 1; the last copy is kept)" in named[2]["reason"]
    shown = json.loads(harkback("show", "b", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == ["heron", "kept"]
    shown = json.loads(harkback("show", "a", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == ["second copy"]


def test_jsonl_keeps_a_session_naming_itself_as_its_parent(tmp_path: Path) -> None:
    """``"parent_session_id"`` equal to the session's own id loses the link, named as
    ignored, not the session (the whole line was skipped): it is stored as a root, listed
    by ``recent`` and found."""
    source = tmp_path / "s.jsonl"
    source.write_text(json.dumps({"id": "loop", "parent_session_id": "loop", "messages": [
        {"role": "user", "content": "the heron migration"}]}) + "\n", encoding="utf-8")
    db = str(tmp_path / "h.db")
    done = harkback("ingest", str(source), "--db", db)
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        f"harkback: {source}:1: parent ignored: parent_session_id: a session cannot be its "
        "own parent (ignored)"]
    recent = json.loads(harkback("recent", "--json", "--db", db).stdout)
    assert [r["session_id"] for r in recent["results"]] == ["loop"]
    found = json.loads(harkback("search", "heron", "--json", "--db", db).stdout)
    assert [r["session_id"] for r in found["results"]] == ["loop"]


def test_a_hermes_time_that_cannot_be_right_is_named_and_ignored(tmp_path: Path) -> None:
    """A Hermes session started in 1970 (a stray number) and a message time in milliseconds
    are each named where they are and ignored, status 3: the first moved its session to
    1970 without a word, the second was only counted, and the import ended 0."""
    path = tmp_path / "state.db"
    hermes = HermesFile(path, "v30")
    hermes.session("h1", started_at=12345)
    hermes.message("h1", "user", "rotate the heron logs", timestamp=1.7e12)
    hermes.message("h1", "assistant", "rotated")
    hermes.close()
    db = str(tmp_path / "h.db")
    done = harkback("import", "hermes", str(path), "--db", db, "--json")
    assert done.returncode == 3, done.stderr
    named = json.loads(done.stdout)["sources"][0]["skipped_lines"]
    assert [(s["reason"], s["outcome"]) for s in named] == [
        ("time out of range: started_at of session h1: 12345.0 is not a time a session can "
         "have (before 2020 or in the future)", "ignored"),
        ("time out of range: message 1 of session h1: 1700000000000.0 is not a time a "
         "session can have (before 2020 or in the future)", "ignored")]
    shown = json.loads(harkback("show", "h1", "--json", "--db", db).stdout)
    # Its start ignored, the session starts at its one message time that can be right.
    assert shown["session"]["started_at"] == shown["messages"][1]["timestamp"] is not None
    assert [m["content"] for m in shown["messages"]] == ["rotate the heron logs", "rotated"]


def test_a_long_hermes_time_is_named_cut_by_the_one_rule(tmp_path: Path) -> None:
    """A Hermes time column holding 5,000 characters of text is named cut as every echo of
    what someone gave is (60 characters and "…", control characters escaped): it was cut to
    40 characters with no mark, so the reason did not say the value went on."""
    path = tmp_path / "state.db"
    hermes = HermesFile(path, "v30")
    hermes.session("h1", started_at="\x1b" + "y" * 5000)
    hermes.message("h1", "user", "rotate the heron logs")
    hermes.close()
    done = harkback("import", "hermes", str(path), "--db", str(tmp_path / "h.db"), "--json")
    assert done.returncode == 3, done.stderr
    named = json.loads(done.stdout)["sources"][0]["skipped_lines"]
    assert [s["reason"] for s in named] == [
        "time out of range: started_at of session h1: '\\x1b" + "y" * 59 + "…' is not "
        "epoch seconds or an ISO 8601 time"]


def test_jsonl_keeps_a_session_with_nan_or_infinity_for_a_time(tmp_path: Path) -> None:
    """``NaN`` and ``Infinity``, as Python's json.dumps writes a float that is not a number,
    in a time are that time ignored and named; the session was skipped whole, its line
    'invalid JSON: NaN is not valid JSON'."""
    source = tmp_path / "s.jsonl"
    source.write_text('{"id": "n", "started_at": NaN, "messages": [{"role": "user", '
                      '"content": "the heron migration", "timestamp": Infinity}]}\n',
                      encoding="utf-8")
    db = str(tmp_path / "h.db")
    done = harkback("ingest", str(source), "--db", db)
    assert done.returncode == 3, done.stderr
    assert [line.rsplit(": ", 1)[0] for line in done.stderr.splitlines()] == [
        f"harkback: {source}:1: time ignored: started_at",
        f"harkback: {source}:1: time ignored: messages[0].timestamp"]
    shown = json.loads(harkback("show", "n", "--json", "--db", db).stdout)
    assert shown["session"]["started_at"] is None
    assert [m["content"] for m in shown["messages"]] == ["the heron migration"]


def test_ingest_exits_three_and_help_documents_the_status() -> None:
    """``--help`` of the program, ingest, import and sync names status 3."""
    for args in ([], ["ingest"], ["import", "jsonl"], ["sync"]):
        text = " ".join(harkback(*args, "--help").stdout.split())
        assert "3 done, but ingest, import or sync met damaged input" in text, args


def test_a_session_id_another_source_stored_is_named_when_replaced(tmp_path: Path) -> None:
    """Two ingest files that number their sessions alike: the second replaces session "1",
    and says so (human output and ``--json``), naming both sources."""
    db = str(tmp_path / "h.db")
    for source, text in (("alpha", "heron logs rotated"), ("beta", "kestrel cache cleared")):
        path = tmp_path / f"{source}.jsonl"
        path.write_text(json.dumps({"id": "1", "source": source, "messages": [
            {"role": "user", "content": text}]}) + "\n", encoding="utf-8")
    first = harkback("ingest", str(tmp_path / "alpha.jsonl"), "--db", db)
    assert first.returncode == 0, first.stderr
    assert "note:" not in first.stdout
    human = harkback("ingest", str(tmp_path / "beta.jsonl"), "--db", db)
    assert human.returncode == 0, human.stderr
    note = ("session '1' was stored from source 'alpha'; the copy from source 'beta' "
            "replaced it")
    assert f"note: {note}" in human.stdout.splitlines()
    shown = json.loads(harkback("show", "1", "--json", "--db", db).stdout)
    assert [m["content"] for m in shown["messages"]] == ["kestrel cache cleared"]
    back = harkback("ingest", str(tmp_path / "alpha.jsonl"), "--db", db, "--json")
    assert json.loads(back.stdout)["notes"] == [
        "session '1' was stored from source 'beta'; the copy from source 'alpha' replaced it"]
    again = harkback("ingest", str(tmp_path / "alpha.jsonl"), "--db", db, "--json")
    assert json.loads(again.stdout)["notes"] == []  # the same source again: no note
