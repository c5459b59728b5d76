"""What a new user met trying the command line with hostile input, each through a real
subprocess and a real SQLite file: the exit statuses, messages and payloads the README
promises."""

from __future__ import annotations

import json
import signal
import socket
import sqlite3
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run
from tests.support.hermes_db import HermesFile

USAGE = 2
README = Path(__file__).parents[2] / "README.md"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store holding one session."""
    return ingested(tmp_path, [conversation("s1", ("user", "the docker bridge drops packets"),
                                            started_at=1_780_000_000.0)])


@pytest.mark.parametrize("flags", [
    ("search", "docker", "--role", "wizard"),
    ("search", "docker", "--since", "2026-03-01", "--until", "2026-01-01"),
    ("recent", "--since", "2026-03-01", "--until", "2026-01-01"),
    ("search", "docker", "--since", "99999999999999"),
    ("recent", "--until", "nan"),
])
def test_a_request_the_store_cannot_answer_as_asked_is_a_usage_error(
        db: Path, flags: tuple[str, ...]) -> None:
    """An unknown role or a window that ends before it starts: exit 2, one line on stderr,
    and with --json the failure payload (as for an unreadable --since)."""
    plain = run(*flags, db=db)
    assert plain.returncode == USAGE, plain.stderr
    (line,) = plain.stderr.splitlines()
    assert any(why in line for why in ("wizard", "is later than --until",
                                       "not a moment a session can have"))
    as_json = run(*flags, "--json", db=db)
    assert as_json.returncode == USAGE, as_json.stderr
    assert json.loads(as_json.stdout) == {"success": False, "usage": True,
                                          "error": line.removeprefix("harkback: ")}


@pytest.mark.parametrize("flags", [
    ("search", "docker", "--bogus"),                  # argparse
    ("import", "fax"),                                # argparse: a choice
    ("search", "docker", "--role", "bogus"),          # the request
    ("search", "docker", "--since", "bogus"),         # the time flags
    ("recent", "--until", "bogus"),
    ("search", "docker", "--as-of", "bogus"),
    ("search", "docker", "--summarizer", "llm"),      # the wiring: no model configured
    ("show", "s1", "--around", "zz"),                 # the read back
    ("embed", "--role", "bogus"),                     # a command's own check
    ("stats", "--config-problem"),                    # the config file (below)
])
def test_every_usage_error_says_so_in_its_json_payload(
        db: Path, tmp_path: Path, flags: tuple[str, ...]) -> None:
    """Whoever finds a usage error (argparse, the settings, a command, the pipeline), exit
    status 2 comes with ``"usage": true`` in the --json payload, as argparse's always had."""
    env = None
    if flags[-1] == "--config-problem":
        bad = tmp_path / "config.toml"
        bad.write_text("limit = 'many'\n", encoding="utf-8")
        flags, env = flags[:-1], {"HARKBACK_CONFIG": str(bad)}
    done = run(*flags, "--json", db=db, env=env)
    assert done.returncode == USAGE, done.stderr
    payload = json.loads(done.stdout)
    assert (payload["success"], payload["usage"]) == (False, True), payload


def strictly_parsed(raw: str) -> Any:
    """``raw`` as a strict JSON parser reads it: no string may hold a lone surrogate
    (``"\\udcff"`` is valid JSON text that encodes no character; serde, for one, refuses it)."""
    payload = json.loads(raw)
    json.dumps(payload, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
    return payload


@pytest.mark.parametrize("flags", [
    ("search", "caf\udce9 docker"),                  # echoed as the payload's query
    ("search", "docker", "--role", "\udcff"),        # named in the usage error
    ("search", "docker", "--\udcff"),                # argparse's usage error
])
def test_json_output_is_strict_utf8_whatever_the_arguments(
        db: Path, flags: tuple[str, ...]) -> None:
    """An argument holding bytes that are not UTF-8 (Python reads them as lone surrogates)
    is echoed with U+FFFD in their place, so every --json payload parses strictly."""
    done = run(*flags, "--json", db=db)
    assert done.stdout, done.stderr
    payload = strictly_parsed(done.stdout)
    assert "\ufffd" in json.dumps(payload, ensure_ascii=False)


@pytest.mark.parametrize(("flags", "status"), [
    (("show", "caf\udce9"), 1),
    (("search", "docker", "--current-session", "caf\udce9"), 0),
    (("search", "docker", "--source", "caf\udce9"), 0),
    (("recent", "--project", "caf\udce9"), 0),
])
def test_an_id_or_filter_that_is_not_utf8_is_no_internal_error(
        db: Path, flags: tuple[str, ...], status: int) -> None:
    """A session id or filter holding bytes that are not UTF-8 matches nothing, as any
    unknown one: it was an internal error (the store cannot encode a lone surrogate)."""
    done = run(*flags, "--json", db=db)
    assert done.returncode == status, done.stderr
    assert "internal error" not in done.stderr
    strictly_parsed(done.stdout)


def test_a_session_found_by_its_title_points_at_a_message_it_has(tmp_path: Path) -> None:
    """Hermes numbers messages by their row ids, so a session's first message need not be
    at position 0; the id a title match gives must still open with ``show --around``."""
    hermes = HermesFile(tmp_path / "state.db", "v30")
    hermes.session("20260303_100000_aa11bb", title="Postgres vacuum")
    hermes.message("20260303_100000_aa11bb", "user", "the nightly job is slow again")
    hermes.message("20260303_100000_aa11bb", "assistant", "raise the cost limit")
    hermes.close()
    db = tmp_path / "h.db"
    assert run("import", "hermes", str(tmp_path / "state.db"), db=db).returncode == 0
    found = run("search", "postgres vacuum", "--json", db=db)
    (result,) = json.loads(found.stdout)["results"]
    first = result["matched_message_ids"][0]
    shown = run("show", result["session_id"], "--around", first, "--json", db=db)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["messages"][0]["content"] == "the nightly job is slow again"


def test_a_file_that_opens_with_a_byte_order_mark_loses_no_session(tmp_path: Path) -> None:
    """Editors on Windows save UTF-8 with a BOM; the first session is read, not skipped."""
    source = tmp_path / "sessions.jsonl"
    lines = [json.dumps({"id": f"s{i}", "messages": [{"role": "user", "content": "docker"}]})
             for i in range(2)]
    source.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode() + b"\n")
    done = run("ingest", str(source), "--json", db=tmp_path / "h.db")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sessions"]["added"] == 2


def test_ctrl_c_under_json_still_prints_a_payload(db: Path) -> None:
    """SIGINT while a search waits for a model that never answers: exit 130, one line on
    stderr, and --json's failure payload on stdout."""
    with socket.socket() as endpoint:
        endpoint.bind(("127.0.0.1", 0))
        endpoint.listen()
        port = endpoint.getsockname()[1]
        search = subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", "search", "docker", "--json",
             "--db", str(db), "--model", "m", "--base-url", f"http://127.0.0.1:{port}/v1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        endpoint.settimeout(60)
        connection, _ = endpoint.accept()  # the summary's call: in flight, never answered
        with connection:
            search.send_signal(signal.SIGINT)
            out, err = search.communicate(timeout=60)
    assert search.returncode == 130, err
    assert err == "harkback: interrupted\n"
    assert json.loads(out) == {"success": False, "error": "interrupted"}


def test_tables_show_the_claude_code_source_whole(tmp_path: Path) -> None:
    """The source column fits the longest source the importers write ('claude-code', the
    name --source takes); it was cut to 'claude-cod'."""
    db = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge drops packets"),
                                          source="claude-code", started_at=1_780_000_000.0)])
    for flags in (("recent",), ("search", "docker")):
        shown = run(*flags, db=db)
        assert shown.returncode == 0, shown.stderr
        (row,) = [line for line in shown.stdout.splitlines() if line.startswith(" 1  ")]
        assert row.split()[8] == "claude-code"  # after "#" and the seven words of "when"


def _terminal_columns(text: str) -> int:
    """Columns a terminal gives ``text``: two for East Asian wide characters."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def _count_ends_at(row: str) -> int:
    """The terminal column where a table row's count ends: the number after "#", the seven
    words of "when" (its zone last) and the source (hits in search, messages in recent)."""
    words = row.split()
    cell = f" {words[9]}  {words[10]}"
    return _terminal_columns(row[:row.index(cell) + len(words[9]) + 1])


def test_tables_line_up_with_chinese_text(tmp_path: Path) -> None:
    """A source named in Chinese (two columns a character) pads by columns, not
    characters: the counts after it line up in search, recent and stats, and config's
    origins line up beside a Chinese store path."""
    db = ingested(tmp_path, [
        conversation("s1", ("user", "docker bridge"), source="飞书", title="网桥修复",
                     started_at=1_780_000_000.0),
        conversation("s2", ("user", "docker bridge"), ("assistant", "docker network ls"),
                     source="cli", title="bridge", started_at=1_780_000_100.0)])
    tables = {flags: run(*flags, db=db).stdout.splitlines()
              for flags in (("search", "docker"), ("recent",), ("stats",))}
    for flags in (("search", "docker"), ("recent",)):
        rows = [line for line in tables[flags] if line.startswith((" 1  ", " 2  "))]
        assert len(rows) == 2 and len({_count_ends_at(row) for row in rows}) == 1, rows
    (chinese,) = [line for line in tables[("stats",)] if line.startswith("飞书")]
    (latin,) = [line for line in tables[("stats",)] if line.startswith("cli ")]
    assert _terminal_columns(chinese) == _terminal_columns(latin)
    store = tmp_path / "数据库" / "h.db"
    shown = run("config", env={"HARKBACK_DB": str(store)}).stdout.splitlines()
    # where each origin starts: after the value column and two spaces
    assert len({_terminal_columns(line.rsplit("  ", 1)[0]) for line in shown[:7]}) == 1, shown


def test_a_bad_option_value_gets_no_hint_about_queries(db: Path) -> None:
    """'--timeout -1' is a bad value of --timeout, not a query beginning with '-': the
    error names the option and says nothing of '--'."""
    done = run("search", "docker", "--timeout", "-1", "--json", db=db)
    assert done.returncode == USAGE
    assert json.loads(done.stdout)["error"] == "argument --timeout: must be positive, got -1"
    hinted = run("search", "-x", db=db)  # the hint stays where it helps
    assert "goes after '--': harkback search -- -x" in hinted.stderr


def test_import_claude_code_help_names_the_folder_it_reads(tmp_path: Path) -> None:
    """Without a folder, ``import claude-code`` reads $CLAUDE_CONFIG_DIR/projects when the
    variable is set (as sync does); its help and the README said only ~/.claude/projects."""
    projects = tmp_path / "claude" / "projects" / "-home-me-app"
    projects.mkdir(parents=True)
    (projects / "11111111-1111-4111-8111-111111111111.jsonl").write_text(json.dumps(
        {"type": "user", "sessionId": "11111111-1111-4111-8111-111111111111",
         "timestamp": "2026-03-03T14:15:00Z",
         "message": {"role": "user", "content": "docker"}}) + "\n", encoding="utf-8")
    done = run("import", "claude-code", "--json", db=tmp_path / "h.db",
               env={"CLAUDE_CONFIG_DIR": str(tmp_path / "claude")})
    assert json.loads(done.stdout)["sources"][0]["sessions"]["added"] == 1
    helped = " ".join(run("import", "claude-code", "--help").stdout.split())
    assert "(default: $CLAUDE_CONFIG_DIR/projects or ~/.claude/projects)" in helped


def test_the_readme_ingest_example_ingests_once_on_one_line(tmp_path: Path) -> None:
    """The README shows its example session wrapped over lines; copied as shown that is
    seven bad lines, so the README says to put it on one line, and then it ingests whole."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Ingest format"):]
    assert "(wrapped here: in a file each session is one line)" in " ".join(section.split())
    example = section.split("```json\n", 1)[1].split("```", 1)[0]
    source = tmp_path / "example.jsonl"
    source.write_text(" ".join(example.split("\n")).strip() + "\n", encoding="utf-8")
    done = run("ingest", str(source), "--json", db=tmp_path / "h.db")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["sessions"]["added"], report["messages"]["added"]) == (1, 3)


@pytest.mark.parametrize("command", [("search", "docker"), ("recent",), ("stats",),
                                     ("show", "s1"), ("ingest", "IN"), ("optimize",),
                                     ("sources",), ("migrate",), ("redact",),
                                     ("embed", "--embedder", "openai:e@http://127.0.0.1:9/v1"),
                                     ("import", "jsonl", "IN"), ("demo",),
                                     ("sync", "--dry-run", "--codex", "DIR")])
def test_a_folder_given_as_db_is_named_a_folder(tmp_path: Path, command: tuple[str, ...]
                                                ) -> None:
    """--db naming a folder: one line that says so and names a file to use instead (it
    said "no harkback database ...; ingest sessions first", or "disk I/O error")."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": []}) + "\n", encoding="utf-8")
    folder = tmp_path / "stores"
    folder.mkdir()
    named = {"IN": str(source), "DIR": str(tmp_path)}
    done = run(*[named.get(a, a) for a in command], db=folder)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert line.endswith(f"{folder} is a folder, not a database file: name a file in it, "
                         f"such as {folder / 'harkback.db'}")
    assert list(folder.iterdir()) == []


def test_a_failed_ingest_under_json_still_says_why_on_stderr(tmp_path: Path) -> None:
    """A file that fails while read (/proc/self/mem: an I/O error at offset 0): exit 1,
    the payload on stdout and one line on stderr, as ``import`` and every other failure
    give it (``ingest --json`` left stderr empty)."""
    done = run("ingest", "/proc/self/mem", "--json", db=tmp_path / "h.db")
    assert done.returncode == 1
    payload = json.loads(done.stdout)
    assert payload["success"] is False
    (line,) = done.stderr.splitlines()
    assert line.startswith("harkback: ") and payload["error"] in line


def test_optimize_of_a_file_it_refuses_says_only_why(tmp_path: Path) -> None:
    """A text file as --db: the one line of the refusal, not first a line announcing that
    its index is being merged; the file is left as it was."""
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    done = run("optimize", db=notes)
    assert done.returncode == 1
    (line,) = done.stderr.splitlines()
    assert "not a SQLite database" in line
    assert notes.read_text(encoding="utf-8") == "my notes\n"


def test_an_unreadable_source_is_not_blamed_on_the_store(tmp_path: Path) -> None:
    """A file given to import that is not what it should be is named as the source that
    failed; the store is fine (it said "session store unavailable: ... is not a Hermes
    state.db")."""
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
    connection.close()
    before = other.read_bytes()
    done = run("import", "hermes", str(other), db=tmp_path / "h.db")
    assert done.returncode == 1
    assert "session store unavailable" not in done.stderr
    assert f"source unreadable: {other} is not a Hermes state.db" in done.stderr
    read = run("ingest", "/proc/self/mem", db=tmp_path / "h.db")
    assert "session store unavailable" not in read.stderr
    assert "source unreadable: cannot read /proc/" in read.stderr
    assert other.read_bytes() == before


def test_a_session_id_beginning_with_a_dash_gets_the_hint_too(tmp_path: Path) -> None:
    """Ingested ids may begin with '-': ``show -x`` is a usage error that says how to
    write it (as search says for a query), and that way works."""
    db = ingested(tmp_path, [conversation("-x", ("user", "docker"))])
    done = run("show", "-x", db=db)
    assert done.returncode == USAGE
    assert "a SESSION_ID that begins with '-' goes after '--': harkback show -- -x" \
        in done.stderr
    assert run("show", "--db", str(db), "--", "-x").returncode == 0


def test_a_hermes_import_names_the_damage_it_skipped(tmp_path: Path) -> None:
    """A message of a role Hermes never writes is dropped, unreadable tool calls are left
    out: damaged input, so named (file and message) and exit 3, as for the other sources
    (it was counted only, exit 0)."""
    state = tmp_path / "state.db"
    hermes = HermesFile(state, "v30")
    hermes.session("20260303_100000_aa11bb", title="Docker")
    hermes.message("20260303_100000_aa11bb", "user", "the docker bridge has no DNS")
    odd = hermes.message("20260303_100000_aa11bb", "wizard", "a role Hermes never writes")
    broken = hermes.message("20260303_100000_aa11bb", "assistant", "let me look",
                            tool_calls="{not json")
    hermes.close()
    done = run("import", "hermes", str(state), "--json", db=tmp_path / "h.db")
    assert done.returncode == 3, done.stderr
    (source,) = json.loads(done.stdout)["sources"]
    assert source["skipped_lines_total"] == 2
    named = [f"{s['file']}: {s['reason']}" for s in source["skipped_lines"]]
    assert named == [
        f"{state}: message with role 'wizard': message {odd} of session "
        "20260303_100000_aa11bb dropped",
        f"{state}: unreadable tool_calls: message {broken} of session "
        "20260303_100000_aa11bb kept without its tool calls"]
    assert [s["outcome"] for s in source["skipped_lines"]] == ["dropped", "ignored"]
    assert done.stderr.splitlines() == [f"harkback: {named[0]} (dropped)",
                                        f"harkback: {named[1]} (ignored)"]


@pytest.mark.parametrize("flags", [("search", "docker", "--json"), ("stats",),
                                   ("search", "docker", "--db", "/nonexistent/h.db", "--json")])
def test_standard_output_on_a_full_disk_is_one_line_and_status_1(db: Path,
                                                                  flags: tuple[str, ...]
                                                                  ) -> None:
    """Output to /dev/full was an internal error (exit 70) or a traceback (the --json
    payload of that error failed again); a command's own failure is still said first."""
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *flags,
                               *(() if "--db" in flags else ("--db", str(db)))],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120,
                              check=False)
    assert done.returncode == 1
    lost = "harkback: cannot write to standard output: No space left on device\n"
    assert done.stderr.endswith(lost) and "Traceback" not in done.stderr
    assert done.stderr == lost or "no harkback database" in done.stderr.splitlines()[0]


@pytest.mark.parametrize("command", ["ingest", "import jsonl"])
@pytest.mark.parametrize("closed", [">&-", "2>&-"])
def test_an_ingest_with_standard_output_or_error_closed_still_stores(
        tmp_path: Path, command: str, closed: str) -> None:
    """Started with stdout closed (``>&-``): an internal error before anything was read.
    With stderr closed (``2>&-``): an internal error once the reading began (the progress
    bar asked a stderr of None whether it was a terminal), an empty new store left behind."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "heron"}]}) + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    done = subprocess.run(
        ["sh", "-c", f'"$0" -m harkback.pipeline.cli {command} "$1" --db "$2" {closed}',
         sys.executable, str(source), str(db)],
        capture_output=True, text=True, timeout=120, check=False)
    assert "internal error" not in done.stdout
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(run("stats", "--json", db=db).stdout)["sessions"] == 1


@pytest.mark.parametrize("command", ["search heron", "recent", "stats", "mcp"])
def test_a_command_that_only_prints_refuses_a_closed_standard_output(
        tmp_path: Path, command: str) -> None:
    """``harkback search heron >&-`` printed its results to no one and said success (exit
    0, not a line); ``harkback mcp >&-`` answered an agent's calls into nothing. Each says
    in one line that standard output is closed, and that it needs one, as ``<&-`` is told
    for the MCP server; the store is only read."""
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "heron"}]}) + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    assert run("ingest", str(source), db=db).returncode == 0
    before = db.read_bytes()
    done = subprocess.run(
        ["sh", "-c", f'exec "$0" -m harkback.pipeline.cli {command} --db "$1" >&-',
         sys.executable, str(db)],
        input="", capture_output=True, text=True, timeout=120, check=False)
    name = command.split()[0]
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("harkback: standard output is closed (>&-), and "
                                  f"{'the MCP server' if name == 'mcp' else name} "), done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert db.read_bytes() == before
