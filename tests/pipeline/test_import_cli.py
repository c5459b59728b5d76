"""``harkback import`` and ``harkback sources``, run as a user would: through a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from returns.result import Failure

from harkback.adapters.stores.sqlite import SqliteStore
from tests.support.hermes_db import HermesFile

FIXTURES = Path(__file__).parent.parent / "fixtures"


def harkback(*args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """Run the CLI with ``args``; HOME and the tools' homes point nowhere unless set."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("HARKBACK_DB", "HERMES_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR")}
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, check=False,
                          env={**base, **(env or {})}, timeout=120)


def hermes_home(tmp_path: Path) -> Path:
    """A Hermes home with a default database and one profile."""
    home = tmp_path / "hermes-home"
    (home / "profiles" / "work").mkdir(parents=True)
    main = HermesFile(home / "state.db", "v30")
    main.session("20260303_100000_aa11bb", title="Docker")
    main.message("20260303_100000_aa11bb", "user", "the docker bridge has no DNS")
    main.close()
    work = HermesFile(home / "profiles" / "work" / "state.db", "v18")
    work.session("20260304_090000_bb22cc", source="telegram", title="Invoices")
    work.message("20260304_090000_bb22cc", "user", "export the invoices as CSV")
    work.close()
    return home


def test_import_hermes_home_reads_every_profile_and_counts(tmp_path: Path) -> None:
    """HERMES_HOME is the default; each profile database is its own source."""
    home = hermes_home(tmp_path)
    db = str(tmp_path / "h.db")
    done = harkback("import", "hermes", "--db", db, env={"HERMES_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert "hermes " + str(home / "state.db") in done.stdout
    assert "hermes " + str(home / "profiles" / "work" / "state.db") in done.stdout
    assert done.stdout.count("sessions: 1 added, 0 updated, 0 skipped") == 2
    found = harkback("search", "invoices CSV", "--db", db, "--json")
    assert json.loads(found.stdout)["results"][0]["session_id"] == "20260304_090000_bb22cc"


def test_second_import_reports_everything_skipped_as_unchanged(tmp_path: Path) -> None:
    """Re-running an import says what it skipped and why."""
    home = hermes_home(tmp_path)
    db = str(tmp_path / "h.db")
    harkback("import", "hermes", str(home / "state.db"), "--db", db)
    again = harkback("import", "hermes", str(home / "state.db"), "--db", db)
    assert again.returncode == 0, again.stderr
    assert "sessions: 0 added, 0 updated, 1 skipped (unchanged since the last import)" in (
        again.stdout)


def test_import_claude_code_and_codex_default_folders(tmp_path: Path) -> None:
    """CLAUDE_CONFIG_DIR and CODEX_HOME lead to the default folders; the fixture's torn
    line is named file:line and makes the exit status 3 (done with skips)."""
    claude = tmp_path / "claude"
    codex = tmp_path / "codex"
    shutil.copytree(FIXTURES / "claude-code" / "projects", claude / "projects")
    shutil.copytree(FIXTURES / "codex" / "sessions", codex / "sessions")
    db = str(tmp_path / "h.db")
    env = {"CLAUDE_CONFIG_DIR": str(claude), "CODEX_HOME": str(codex)}
    first = harkback("import", "claude-code", "--db", db, env=env)
    second = harkback("import", "codex", "--db", db, "--json", env=env)
    assert first.returncode == 3, first.stderr
    torn = claude / "projects" / "-home-mei-code-youer-server" / (
        "7f3c2a10-5b1e-4c0a-9d8e-1a2b3c4d5e6f.jsonl")
    assert first.stderr == f"harkback: {torn}:16: unreadable line: not JSON (skipped)\n"
    assert second.returncode == 3, second.stderr
    assert "sessions: 6 added" in first.stdout
    assert "left out or changed: " in first.stdout
    assert "unknown line type 'mystery-event'" in first.stdout
    payload = json.loads(second.stdout)
    assert payload["success"] is True
    assert payload["sources"][0]["sessions"] == {"added": 4, "updated": 0, "unchanged": 0,
                                                   "skipped": 0}
    assert payload["sources"][0]["skipped"]["internal Codex session"] == 1
    [torn_codex] = payload["sources"][0]["skipped_lines"]
    assert (torn_codex["line"], torn_codex["reason"]) == (15, "unreadable line: not JSON")
    assert torn_codex["file"].endswith("0c1d2e3f4a5b.jsonl")


def test_import_jsonl_reports_bad_lines_and_fails(tmp_path: Path) -> None:
    """The ingest format imports too; a bad line is named on stderr and the exit status is 3."""
    source = tmp_path / "s.jsonl"
    source.write_text('{"id": "j1", "messages": [{"role": "user", "content": "heron"}]}\n'
                      "not json\n", encoding="utf-8")
    done = harkback("import", "jsonl", str(source), "--db", str(tmp_path / "h.db"))
    assert done.returncode == 3
    assert f"{source}:2: bad line: invalid JSON" in done.stderr
    assert "sessions: 1 added" in done.stdout and "left out or changed: bad line (1)" in done.stdout


def test_missing_default_location_is_one_clear_line(tmp_path: Path) -> None:
    """No transcripts where they are expected: one line on stderr, exit status 1."""
    done = harkback("import", "codex", "--db", str(tmp_path / "h.db"),
                    env={"CODEX_HOME": str(tmp_path / "nowhere")})
    assert done.returncode == 1
    assert done.stderr.strip() == (f"harkback: no codex transcripts folder at "
                                   f"{tmp_path / 'nowhere' / 'sessions'} (pass the folder)")
    assert "Traceback" not in done.stderr


def test_sources_lists_what_was_imported_from_where(tmp_path: Path) -> None:
    """``sources`` shows every imported location with its totals, as a table or JSON."""
    home = hermes_home(tmp_path)
    db = str(tmp_path / "h.db")
    with SqliteStore.open(db).unwrap():
        pass  # a store where nothing was imported
    empty = harkback("sources", "--db", db)
    harkback("import", "hermes", str(home), "--db", db)
    table = harkback("sources", "--db", db)
    listed = json.loads(harkback("sources", "--db", db, "--json").stdout)
    assert empty.stdout.startswith("Nothing imported yet")
    assert str(home / "profiles" / "work" / "state.db") in table.stdout
    assert {(s["kind"], s["sessions"], s["messages"]) for s in listed["sources"]} == {
        ("hermes", 1, 1)}
    assert len(listed["sources"]) == 2
    assert all(s["last_imported_at"] for s in listed["sources"])


@pytest.mark.parametrize("zone", ["UTC", "America/Los_Angeles"])
def test_the_sources_table_lines_up_its_numbers_under_their_headers(
        tmp_path: Path, zone: str) -> None:
    """The time of the last import is 33 characters in UTC, 39 with an offset: in a column
    30 wide, every row's numbers stood right of ``sessions``, ``kept gone``, ``messages``."""
    source = tmp_path / "s.jsonl"
    source.write_text('{"id": "a", "messages": [{"role": "user", "content": "hi"}]}\n',
                      encoding="utf-8")
    db = str(tmp_path / "h.db")
    assert harkback("import", "jsonl", str(source), "--db", db).returncode == 0
    header, _, row = harkback("sources", "--db", db, env={"TZ": zone}).stdout.splitlines()
    ends = [header.index(name) + len(name) for name in ("sessions", "kept gone", "messages")]
    assert [row[end - 1] for end in ends] == ["1", "0", "1"]
    assert [row[end] for end in ends] == [" ", " ", " "]


def test_a_failed_import_leaves_no_store_that_was_not_there(tmp_path: Path) -> None:
    """A Hermes file that cannot be read stops the import and the store it would have
    created is not left behind; a store that was there before stays."""
    bad = tmp_path / "state.db"
    bad.write_bytes(b"not a database at all, " * 100)
    fresh = tmp_path / "fresh.db"
    done = harkback("import", "hermes", str(bad), "--db", str(fresh))
    assert done.returncode == 1 and "is not a SQLite database" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.db"]
    synced = harkback("sync", "--hermes", str(bad), "--db", str(fresh),
                      env={"HOME": str(tmp_path / "home")})
    assert synced.returncode == 1, synced.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.db"]
    link = tmp_path / "link.db"  # a symlink, even dangling, is the user's: it stays
    link.symlink_to(tmp_path / "elsewhere" / "h.db")
    (tmp_path / "elsewhere").mkdir()
    assert harkback("import", "hermes", str(bad), "--db", str(link)).returncode == 1
    assert link.is_symlink()
    kept = tmp_path / "kept.db"
    source = tmp_path / "one.jsonl"
    source.write_text('{"id": "k1", "messages": [{"role": "user", "content": "heron"}]}\n',
                      encoding="utf-8")
    assert harkback("ingest", str(source), "--db", str(kept)).returncode == 0
    assert harkback("import", "hermes", str(bad), "--db", str(kept)).returncode == 1
    found = harkback("search", "heron", "--db", str(kept), "--json")
    assert json.loads(found.stdout)["results"][0]["session_id"] == "k1"


def test_what_was_left_out_is_counted_without_a_wrong_plural(tmp_path: Path) -> None:
    """Two archived Hermes sessions are counted as such, not as '2 archived session'."""
    db = HermesFile(tmp_path / "state.db", "v30")
    for n in (1, 2):
        db.session(f"20260303_10000{n}_aa11bb", title="Old", archived=1)
        db.message(f"20260303_10000{n}_aa11bb", "user", "an archived question")
    db.close()
    done = harkback("import", "hermes", str(tmp_path / "state.db"),
                    "--db", str(tmp_path / "h.db"))
    assert done.returncode == 0, done.stderr
    assert "  left out or changed: archived session (2)" in done.stdout.splitlines()


def test_file_names_that_are_not_utf8_import_and_are_remembered(tmp_path: Path) -> None:
    """A file or folder name of bytes that are not UTF-8 imports (every kind) and, named
    with ``\\xNN``, is remembered: the second run finds it unchanged."""
    folder = tmp_path / os.fsdecode(b"caf\xe9")
    claude = folder / "projects"
    shutil.copytree(FIXTURES / "claude-code" / "projects", claude)
    os.rename(claude / "-home-mei-code-agent-bus", claude / os.fsdecode(b"-home-\xff"))
    hermes = HermesFile(folder / os.fsdecode(b"state\xfe.db"), "v30")
    hermes.session("20260303_100000_aa11bb", title="Docker")
    hermes.message("20260303_100000_aa11bb", "user", "the docker bridge has no DNS")
    hermes.close()
    jsonl = folder / os.fsdecode(b"s\xe9ances.jsonl")
    jsonl.write_text('{"id": "j1", "messages": [{"role": "user", "content": "heron"}]}\n',
                     encoding="utf-8")
    db = str(tmp_path / "h.db")
    runs = [("claude-code", str(claude)), ("hermes", str(hermes.path)), ("jsonl", str(jsonl))]
    for kind, where in runs:
        done = harkback("import", kind, where, "--db", db)
        assert done.returncode in (0, 3), done.stderr
    for kind, where in runs:
        again = harkback("import", kind, where, "--db", db, "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["sources"][0]["sessions"]["added"] == 0
    listed = json.loads(harkback("sources", "--db", db, "--json").stdout)["sources"]
    assert str(tmp_path / "caf\\xe9" / "s\\xe9ances.jsonl") in [s["location"] for s in listed]


def test_an_empty_hermes_profile_is_nothing_to_import(tmp_path: Path) -> None:
    """A profile's 0-byte state.db (Hermes has not written to it yet) is an empty store:
    the import and sync finish (exit 0) with a note, the other databases are imported, and
    the empty file is left as it was, with nothing created beside it."""
    home = hermes_home(tmp_path)
    (home / "profiles" / "new").mkdir()
    empty = home / "profiles" / "new" / "state.db"
    empty.touch()
    db = str(tmp_path / "h.db")
    done = harkback("import", "hermes", "--db", db, env={"HERMES_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert f"note: {empty} is empty" in done.stdout
    assert done.stdout.count("sessions: 1 added") == 2
    as_json = harkback("import", "hermes", str(empty), "--db", db, "--json")
    assert as_json.returncode == 0, as_json.stderr
    (report,) = json.loads(as_json.stdout)["sources"]
    assert report["success"] is True and "nothing to import" in report["notes"][0]
    synced = harkback("sync", "--hermes", str(home), "--db", str(tmp_path / "s.db"), "--json",
                      env={"HOME": str(tmp_path / "nobody")})
    assert synced.returncode == 0, synced.stderr
    assert sorted(s["sessions"]["new"] for s in json.loads(synced.stdout)["sources"]
                  if s["kind"] == "hermes") == [0, 1, 1]
    assert empty.stat().st_size == 0
    assert sorted(p.name for p in empty.parent.iterdir()) == ["state.db"]


def test_sources_of_a_missing_store_says_what_stats_says(tmp_path: Path) -> None:
    """No store at the path: ``sources`` fails as ``stats`` does (one line, exit 1, the
    same --json payload), rather than "Nothing imported yet" with exit 0; nothing is made."""
    db = str(tmp_path / "nowhere.db")
    for as_json in ((), ("--json",)):
        listed = harkback("sources", "--db", db, *as_json)
        counted = harkback("stats", "--db", db, *as_json)
        assert listed.returncode == counted.returncode == 1, listed.stdout
        assert (listed.stdout, listed.stderr) == (counted.stdout, counted.stderr)
    assert not Path(db).exists()


def test_links_to_nothing_and_pipes_among_transcripts_are_named(tmp_path: Path) -> None:
    """A transcript name that leads to no readable file (a link to nothing, a loop of
    links, a named pipe) is named as skipped, status 3; each was passed over without a
    word (status 0), and the real transcript beside them is imported either way."""
    project = tmp_path / "projects" / "-w"
    project.mkdir(parents=True)
    (project / "s1.jsonl").write_text(json.dumps(
        {"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2026-03-05T10:00:00Z",
         "message": {"role": "user", "content": "pelican nesting"}}) + "\n")
    (project / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (project / "loop.jsonl").symlink_to(project / "loop.jsonl")
    os.mkfifo(project / "pipe.jsonl")
    done = harkback("import", "claude-code", str(tmp_path / "projects"), "--db",
                    str(tmp_path / "h.db"), "--json")
    assert done.returncode == 3, done.stderr
    payload = json.loads(done.stdout)
    named = {Path(s["file"]).name: s["reason"] for s in payload["sources"][0]["skipped_lines"]}
    assert named == {"gone.jsonl": "unreadable file: No such file or directory",
                     "loop.jsonl": "unreadable file: Too many levels of symbolic links",
                     "pipe.jsonl": "unreadable file: not a regular file (a named pipe, "
                                   "socket or device)"}
    assert payload["sources"][0]["sessions"]["added"] == 1


@pytest.mark.parametrize("kind", ["claude-code", "codex", "hermes"])
def test_no_home_reads_no_default_source_below_where_one_stands(
        kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No $HOME and a user the password file lacks (some containers): "~" stays as written,
    and the default location is not a "~" folder below the current one but a clear failure."""
    import pwd

    from harkback.pipeline.config import default_location
    from harkback.pipeline.importing import importers_for

    def unknown_user(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")  # as for a uid with no entry

    monkeypatch.delenv("HOME", raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown_user)
    monkeypatch.chdir(tmp_path)
    planted = tmp_path / default_location(kind, {})
    planted.mkdir(parents=True)  # a folder that would be found, were "~" read as a name
    (planted / "state.db").write_bytes(b"")
    found = importers_for(kind, None, environ={})
    assert isinstance(found, Failure)
    assert "no home folder" in found.failure().reason


@pytest.mark.parametrize("command", [
    ("import", "claude-code", ""), ("import", "codex", ""), ("import", "jsonl", ""),
    ("ingest", ""), ("sync", "--claude-code", ""), ("sync", "--codex", "")])
def test_an_empty_path_is_a_usage_error_not_the_current_folder(
        tmp_path: Path, command: tuple[str, ...]) -> None:
    """``"$DIR"`` with DIR unset gave Path(""), the current folder: an import of it walked
    whatever the user stood in, reading each JSON-lines file below as a transcript (here a
    Claude Code projects folder, whose sessions were stored). Now a usage error naming
    the argument, under --json too, and no store."""
    shutil.copytree(FIXTURES / "claude-code" / "projects", tmp_path / "here")
    db = tmp_path / "h.db"
    done = subprocess.run(
        [sys.executable, "-m", "harkback.pipeline.cli", *command, "--db", str(db), "--json"],
        cwd=tmp_path / "here", capture_output=True, text=True, check=False, timeout=120,
        env={**os.environ, "HOME": str(tmp_path / "nohome")})
    assert done.returncode == 2, done.stderr
    payload = json.loads(done.stdout)
    assert payload["usage"] is True
    assert payload["error"].endswith("is empty (an unset shell variable?): name a file or "
                                     "folder")
    assert not db.exists()


@pytest.mark.parametrize(("kind", "lives"), [
    ("codex", "Codex keeps its sessions as rollout-*.jsonl files in dated folders below "
              "{home}/.codex/sessions"),
    ("claude-code", "Claude Code keeps its transcripts as <session>.jsonl files in a folder "
                    "per project below {home}/.claude/projects"),
])
def test_a_folder_with_nothing_of_that_kind_says_so_and_where_it_lives(
        tmp_path: Path, kind: str, lives: str) -> None:
    """A folder of another agent's transcripts (Claude Code's imported as codex, Codex's as
    claude-code) printed '0 added' and no more, exit 0, as if all was well: a note now
    says none of that kind was found there and where they live, in --json's notes too."""
    other = "claude-code" if kind == "codex" else "codex"
    folder = FIXTURES / other / ("projects" if other == "claude-code" else "sessions")
    home = tmp_path / "home"
    db = str(tmp_path / "h.db")
    done = harkback("import", kind, str(folder), "--db", db, env={"HOME": str(home)})
    note = (f"no {kind} transcripts found in {folder}: {lives.format(home=home)}, where "
            "`harkback sync` looks")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == f"  note: {note}"
    as_json = harkback("import", kind, str(folder), "--db", db, "--json",
                       env={"HOME": str(home)})
    assert json.loads(as_json.stdout)["sources"][0]["notes"] == [note]


def test_a_folder_of_that_kind_gets_no_such_note(tmp_path: Path) -> None:
    """Transcripts of the kind named, even all unchanged since the last import: no note."""
    db = str(tmp_path / "h.db")
    folder = str(FIXTURES / "codex" / "sessions")
    for _ in range(2):
        done = harkback("import", "codex", folder, "--db", db, "--json",
                        env={"HOME": str(tmp_path)})
        assert json.loads(done.stdout)["sources"][0]["notes"] == [], done.stdout


def test_a_folder_imported_as_one_kind_is_not_relabelled_by_another(tmp_path: Path) -> None:
    """A folder holding Claude Code and Codex transcripts, imported as claude-code, then as
    codex: the second import relabelled the source's record (``sources`` then listed one
    codex source holding both kinds' sessions) and took the Claude Code files for gone
    codex ones. It now fails in one line naming the kind recorded, storing nothing, and the
    record stays as it was."""
    folder = tmp_path / "mixed"
    shutil.copytree(FIXTURES / "claude-code" / "projects", folder)
    shutil.copytree(FIXTURES / "codex" / "sessions", folder, dirs_exist_ok=True)
    db = str(tmp_path / "h.db")
    first = harkback("import", "claude-code", str(folder), "--db", db)
    assert first.returncode == 3, first.stderr  # a damaged line in the fixtures
    before = json.loads(harkback("sources", "--db", db, "--json").stdout)
    second = harkback("import", "codex", str(folder), "--db", db)
    assert second.returncode == 1
    assert second.stderr.splitlines()[-1] == (
        f"harkback: import of {folder} stopped: source unreadable: {folder} was imported as "
        "claude-code: importing it as codex too would relabel that record and take its "
        "claude-code files for gone ones; name the folder (or file) that holds only the codex "
        "transcripts")
    assert json.loads(harkback("sources", "--db", db, "--json").stdout) == before


@pytest.mark.parametrize("home", ["rel", ""])
@pytest.mark.parametrize("kind", ["claude-code", "codex", "hermes"])
def test_a_relative_or_empty_home_finds_histories_in_the_password_file_s_home(
        kind: str, home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``HOME=`` made sync look for histories below ``/`` (``HOME=rel``: below the folder
    it ran in), while the store and the config file were in the password file's home:
    the histories are looked for there too, as one home for all."""
    import pwd

    from harkback.pipeline.config import default_db_path, default_location

    real = tmp_path / "real-home"
    entry = pwd.struct_passwd(("me", "x", os.getuid(), os.getgid(), "", str(real), "/bin/sh"))
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: entry)
    monkeypatch.chdir(tmp_path)
    environ = {"HOME": home}
    monkeypatch.setenv("HOME", home)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    where = default_location(kind, environ)
    assert where.is_relative_to(real), where
    assert default_db_path(environ).is_relative_to(real)  # the store's home, the same
