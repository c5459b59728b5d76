"""CLI tests, each through a real subprocess and a real SQLite file."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from harkback.stages.records import Conversation
from tests.conftest import conversation


def run(*args: str, db: Path | None = None, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter."""
    full_env = {k: v for k, v in os.environ.items() if k != "HARKBACK_DB"}
    full_env.update(env or {})
    command = [sys.executable, "-m", "harkback.pipeline.cli", *args]
    if db is not None:
        command += ["--db", str(db)]
    return subprocess.run(command, capture_output=True, text=True, env=full_env, timeout=120,
                          check=False)


def ingested(folder: Path, sessions: Sequence[Conversation]) -> Path:
    """``folder/h.db`` after ``harkback ingest`` of ``sessions``, written as JSON lines."""
    source = folder / "sessions.jsonl"
    source.write_text("\n".join(json.dumps(conversation_to_json(c)) for c in sessions) + "\n",
                      encoding="utf-8")
    path = folder / "h.db"
    done = run("ingest", str(source), db=path)
    assert done.returncode == 0, done.stderr
    return path


def _write_sessions(path: Path, extra_lines: tuple[str, ...] = ()) -> None:
    sessions = [
        conversation("docker-fix", ("user", "containers cannot resolve postgres on the bridge"),
                     ("assistant", "run docker network create backend and attach both"),
                     started_at=1_770_000_000.0, title="Docker DNS"),
        conversation("cors", ("user", "CORS error from nginx on uploads"),
                     ("assistant", "add_header needs always in the location block"),
                     started_at=1_771_000_000.0, title="CORS"),
        conversation("sub", ("assistant", "nginx -T shows add_header inside location"),
                     started_at=1_771_000_100.0, source="subagent", parent="cors"),
    ]
    lines = [json.dumps(conversation_to_json(c)) for c in sessions]
    path.write_text("\n".join([lines[0], *extra_lines, *lines[1:]]) + "\n", encoding="utf-8")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database ingested from a small sessions file."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    path = tmp_path / "h.db"
    assert run("ingest", str(source), db=path).returncode == 0
    return path


def test_ingest_reports_bad_line_and_keeps_the_rest(tmp_path: Path) -> None:
    """A malformed line is named by number, skipped, and the exit status (3) says so."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source, extra_lines=('{"id": "broken", "messages": [', ))
    path = tmp_path / "h.db"
    done = run("ingest", str(source), db=path)
    assert done.returncode == 3
    assert "sessions.jsonl:2: bad line" in done.stderr
    assert "Traceback" not in done.stderr
    assert "3 session(s)" in done.stdout
    listed = json.loads(run("recent", "--json", db=path).stdout)
    assert {r["session_id"] for r in listed["results"]} == {"docker-fix", "cors"}


def test_ingest_twice_updates_instead_of_duplicating(tmp_path: Path) -> None:
    """The same file ingested again updates sessions rather than adding them."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    path = tmp_path / "h.db"
    run("ingest", str(source), db=path)
    again = run("ingest", str(source), db=path)
    assert "ingested 3 session(s) (0 added, 0 updated, 3 unchanged)" in again.stdout


def test_search_json_shape(db: Path) -> None:
    """``search --json`` prints the documented payload, with per-stage timings."""
    done = run("search", "how did we fix the nginx CORS error", "--json", db=db)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["success"] is True
    assert payload["results"][0]["session_id"] == "cors"
    assert set(payload["results"][0]) >= {"session_id", "when", "source", "model", "title",
                                          "summary", "summary_kind", "matched_messages"}
    assert payload["count"] == len(payload["results"])
    assert set(payload["timings"]) == {"match", "resolve", "load", "summarize", "assemble"}


def test_search_resolves_sub_agent_hit_to_its_root(db: Path) -> None:
    """A match only in a sub-agent session is reported as its parent session."""
    payload = json.loads(run("search", '"nginx -T"', "--json", db=db).stdout)
    assert [r["session_id"] for r in payload["results"]] == ["cors"]


def test_search_leaves_out_current_session(db: Path) -> None:
    """``--current-session`` drops that lineage, even when named by a child id."""
    payload = json.loads(run("search", "nginx", "--current-session", "sub", "--json",
                             db=db).stdout)
    assert "cors" not in [r["session_id"] for r in payload["results"]]


def test_summarizer_none_returns_ranked_sessions_without_summary(db: Path) -> None:
    """``--summarizer none`` ranks sessions and leaves summaries empty."""
    payload = json.loads(run("search", "docker network", "--summarizer", "none", "--json",
                             db=db).stdout)
    assert payload["results"][0]["session_id"] == "docker-fix"
    assert payload["results"][0]["summary"] == ""
    assert payload["results"][0]["summary_kind"] == "none"


def test_human_output_is_a_table_with_summaries(db: Path) -> None:
    """Without ``--json`` the answer is a readable table followed by each summary."""
    done = run("search", "docker network", db=db)
    assert done.returncode == 0
    assert "session / title" in done.stdout
    assert "docker network create backend" in done.stdout


def test_hostile_query_never_fails(db: Path) -> None:
    """FTS-breaking input returns a payload, not an error."""
    for query in ('C++ "unclosed (problem', "foo AND", "TODO: fix", "***", "x" * 10_000):
        done = run("search", query, "--json", db=db)
        assert done.returncode == 0, (query, done.stderr)
        assert json.loads(done.stdout)["success"] is True


def test_recent_lists_roots_newest_first(db: Path) -> None:
    """``recent`` shows root sessions only, newest first."""
    payload = json.loads(run("recent", "--json", db=db).stdout)
    assert [r["session_id"] for r in payload["results"]] == ["cors", "docker-fix"]
    assert payload["results"][0]["preview"].startswith("CORS error")


def test_missing_database_is_one_clear_line(tmp_path: Path) -> None:
    """Searching a database that does not exist fails clearly and creates nothing."""
    path = tmp_path / "nope.db"
    done = run("search", "x", db=path)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "harkback:" in done.stderr
    assert not path.exists()


def test_bad_time_bound_is_one_clear_line(db: Path) -> None:
    """An unreadable ``--since`` is reported, not raised: a usage error (exit 2)."""
    done = run("search", "x", "--since", "someday", db=db)
    assert done.returncode == 2
    assert "someday" in done.stderr and "Traceback" not in done.stderr


def test_search_does_not_write_the_database(db: Path) -> None:
    """A search leaves the database file's bytes untouched."""
    before = db.read_bytes()
    run("search", "docker network", db=db)
    assert db.read_bytes() == before


def test_harkback_db_environment_variable_is_used(tmp_path: Path) -> None:
    """``HARKBACK_DB`` names the database when ``--db`` is absent."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    env = {"HARKBACK_DB": str(tmp_path / "env.db")}
    assert run("ingest", str(source), env=env).returncode == 0
    assert (tmp_path / "env.db").exists()


def test_demo_finds_the_stories(tmp_path: Path) -> None:
    """The demo builds its store and answers each question with the story's session."""
    done = run("demo", db=tmp_path / "demo.db")
    assert done.returncode == 0, done.stderr
    assert "docker network create lumen-backend" in done.stdout
    assert "pgdump-rotate.sh" in done.stdout
    assert "127.0.0.1:18080" in done.stdout


def test_demo_hints_open_the_demo_store(tmp_path: Path) -> None:
    """Each result's ``open: harkback show ...`` hint, pasted as printed, opens its page
    (they named no store, so ``harkback show`` read the default one: "no database")."""
    home = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    done = run("demo", db=tmp_path / "demo.db", env=home)
    assert done.returncode == 0, done.stderr
    hints = [line.rsplit("(open: ", 1)[1].rstrip(")") for line in done.stdout.splitlines()
             if "(open: harkback show " in line]
    assert len(hints) >= 6
    for hint in hints:
        words = shlex.split(hint)
        assert words[0] == "harkback"
        opened = run(*words[1:], env=home)
        assert opened.returncode == 0, (hint, opened.stderr)


def test_demo_on_a_temporary_store_prints_no_hint_to_open_it() -> None:
    """Without ``--db`` the demo's store is removed when it ends: an ``open:`` hint naming
    it would fail pasted ("no harkback database at /tmp/harkback-demo-..."), so none is
    printed; the last line says how to keep one."""
    done = run("demo")
    assert done.returncode == 0, done.stderr
    assert "docker network create lumen-backend" in done.stdout
    assert "(open: " not in done.stdout
    assert "harkback demo --db demo.db" in done.stdout


def _demo_with_stdout_closed(*flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-c", 'exec "$0" -m harkback.pipeline.cli demo "$@" >&-', sys.executable,
         *flags], capture_output=True, text=True, timeout=120, check=False)


def test_demo_refuses_a_closed_standard_output_unless_it_keeps_a_store(tmp_path: Path) -> None:
    """``harkback demo >&-`` built a temporary store, printed its answers to no one, removed
    the store and said success: it says in one line that standard output is closed, as
    search does. With ``--db`` it still builds the store it keeps, to be searched after."""
    done = _demo_with_stdout_closed()
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("harkback: standard output is closed (>&-), and demo ")
    assert len(done.stderr.splitlines()) == 1, done.stderr
    kept = tmp_path / "demo.db"
    built = _demo_with_stdout_closed("--db", str(kept))
    assert built.returncode == 0, built.stderr
    assert "pgdump-rotate.sh" in run("search", "pgdump rotate", db=kept).stdout


def test_demo_refuses_a_store_of_ones_own_sessions(db: Path) -> None:
    """``demo --db`` on a store that holds other sessions would mix the sample ones into
    every later search: refused as a usage error, the file untouched."""
    before = db.read_bytes()
    done = run("demo", db=db)
    assert done.returncode == 2, done.stdout
    assert "3 session(s) that are not the demo's" in done.stderr
    assert done.stderr.count("\n") == 1 and not done.stdout
    assert db.read_bytes() == before


def test_demo_runs_again_on_its_own_store(tmp_path: Path) -> None:
    """A store holding only the demo's sessions is the demo's: a second run answers."""
    assert run("demo", db=tmp_path / "demo.db").returncode == 0
    again = run("demo", db=tmp_path / "demo.db")
    assert again.returncode == 0, again.stderr
    assert "pgdump-rotate.sh" in again.stdout


def test_json_failure_still_prints_a_payload(tmp_path: Path) -> None:
    """With ``--json`` an early failure prints ``{"success": false, ...}`` on stdout."""
    done = run("search", "x", "--json", db=tmp_path / "missing.db")
    assert done.returncode == 1
    assert json.loads(done.stdout)["success"] is False


def test_out_of_range_time_is_ignored_not_a_broken_database(tmp_path: Path) -> None:
    """A millisecond epoch is ignored (and named) at ingest; its session is kept without it,
    and later listings keep working."""
    source = tmp_path / "sessions.jsonl"
    source.write_text('{"id": "ms", "started_at": 1700000000000}\n'
                      '{"id": "ok", "started_at": 1700000000}\n', encoding="utf-8")
    path = tmp_path / "h.db"
    done = run("ingest", str(source), db=path)
    assert done.returncode == 3
    assert f"{source.resolve()}:1: time ignored: started_at" in done.stderr
    listed = run("recent", "--json", db=path)
    assert listed.returncode == 0
    results = json.loads(listed.stdout)["results"]
    assert sorted(r["session_id"] for r in results) == ["ms", "ok"]


def test_unreadable_ingest_file_is_one_clear_line(tmp_path: Path) -> None:
    """A file whose reads fail fails in one line (modes don't stop root; /proc/self/mem does)."""
    source = tmp_path / "sessions.jsonl"
    source.symlink_to("/proc/self/mem")
    done = run("ingest", str(source), db=tmp_path / "h.db")
    assert done.returncode == 1
    assert "cannot read" in done.stderr and "internal error" not in done.stderr


def test_recent_since_leaves_out_older_sessions(db: Path) -> None:
    """``recent --since`` lists only sessions started after the bound."""
    payload = json.loads(run("recent", "--since", "1770500000", "--json", db=db).stdout)
    assert [r["session_id"] for r in payload["results"]] == ["cors"]


DAY = 86400.0
DEPLOYED = 1_770_000_000.0  # 2026-02-02; the second deploy is 30 days later


@pytest.fixture
def deploys(tmp_path: Path) -> Path:
    """Two equally topical sessions a month apart: only the clock tells them apart."""
    sessions = [
        conversation("billing-deploy", ("user", "deploy the billing service to staging"),
                     ("assistant", "deployed billing to staging with helm upgrade"),
                     started_at=DEPLOYED),
        conversation("search-deploy", ("user", "deploy the search service to staging"),
                     ("assistant", "deployed search to staging with helm upgrade"),
                     started_at=DEPLOYED + 30 * DAY),
    ]
    source = tmp_path / "deploys.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(c)) + "\n" for c in sessions),
                      encoding="utf-8")
    path = tmp_path / "deploys.db"
    assert run("ingest", str(source), db=path).returncode == 0
    return path


def test_as_of_reads_two_weeks_ago_from_then(deploys: Path) -> None:
    """``--as-of`` moves "two weeks ago": two weeks after each deploy, that one ranks first,
    and the payload records the clock used."""
    question = "which service did I deploy two weeks ago"
    firsts = {}
    for as_of in (str(DEPLOYED + 14 * DAY), "2026-03-18"):
        done = run("search", question, "--as-of", as_of, "--summarizer", "none", "--json",
                   db=deploys)
        assert done.returncode == 0, done.stderr
        payload = json.loads(done.stdout)
        firsts[as_of] = (payload["results"][0]["session_id"], payload["as_of"])
    assert firsts == {str(DEPLOYED + 14 * DAY): ("billing-deploy", DEPLOYED + 14 * DAY),
                      "2026-03-18": ("search-deploy", 1_773_792_000.0)}
    plain = json.loads(run("search", question, "--json", db=deploys).stdout)
    assert "as_of" not in plain


def test_as_of_counts_relative_bounds_from_then(deploys: Path) -> None:
    """``--since 7d`` with ``--as-of`` is the week before that moment, not before today."""
    done = run("search", "deploy staging", "--as-of", str(DEPLOYED + 33 * DAY), "--since",
               "7d", "--summarizer", "none", "--json", db=deploys)
    assert [r["session_id"] for r in json.loads(done.stdout)["results"]] == ["search-deploy"]


def test_unreadable_as_of_is_a_usage_error(deploys: Path) -> None:
    """A bad ``--as-of`` exits 2 with one line naming the flag (as ``--since`` is named),
    and ``--json`` still prints a payload."""
    for value in ("someday", "nan", "1e20"):
        done = run("search", "deploy", "--as-of", value, db=deploys)
        assert done.returncode == 2, (value, done.stderr)
        assert done.stderr.count("\n") == 1 and f"--as-of {value!r}" in done.stderr
        done = run("search", "deploy", "--as-of", value, "--json", db=deploys)
        assert done.returncode == 2
        assert json.loads(done.stdout)["success"] is False


def test_each_command_is_run_from_one_table() -> None:
    """The command line runs ``mcp`` before it loads the commands (its client waits for the
    first answer), ``config`` and ``completion`` from their own table, and every other
    command from :data:`~harkback.pipeline.commands.COMMANDS`: ``mcp`` was in that table
    too, an entry nothing could reach."""
    from harkback.pipeline.cli import build_parser
    from harkback.pipeline.commands import COMMANDS
    from harkback.pipeline.setup_commands import SETUP_COMMANDS

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    tables = [*COMMANDS, *SETUP_COMMANDS, "mcp"]
    assert sorted(tables) == sorted(sub.choices)
