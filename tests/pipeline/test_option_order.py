"""Options typed before the command they belong to (``harkback --db h.db search docker``,
as git takes its own): the usage error names the command line with them after it, and
that command line runs."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run
from tests.pipeline.test_cli_show import _pasted

SESSIONS = [conversation("net", ("user", "docker network bridge is down"),
                         ("assistant", "recreate the bridge"), started_at=1_770_000_000.0)]
HINT = "options go after the command: harkback "


def hinted(stderr: str, hint: str = HINT) -> list[str]:
    """The command line a usage error's ``hint`` names, as arguments."""
    assert hint in stderr, stderr
    return shlex.split(stderr.split(hint, 1)[1].rstrip().removesuffix(")"))


def test_a_store_named_before_search_is_moved_after_it(tmp_path: Path) -> None:
    """``harkback --db PATH search docker`` was "invalid choice: 'PATH'" and nothing more."""
    db = ingested(tmp_path, SESSIONS)
    done = run("--db", str(db), "search", "docker", "--summarizer", "none")
    assert done.returncode == 2
    fixed = hinted(done.stderr)
    assert fixed == ["search", "docker", "--summarizer", "none", "--db", str(db)]
    again = run(*fixed, "--json")
    assert again.returncode == 0, again.stderr
    assert [r["session_id"] for r in json.loads(again.stdout)["results"]] == ["net"]


def test_options_before_an_import_kind_are_moved_after_it(tmp_path: Path) -> None:
    """``harkback import --db PATH jsonl FILE`` named PATH an unknown kind; ``import --json
    codex`` said ``--json`` was unknown, as a JSON payload that says where it goes."""
    source = tmp_path / "s.jsonl"
    source.write_text('{"id": "a", "messages": [{"role": "user", "content": "hi"}]}\n',
                      encoding="utf-8")
    db = tmp_path / "new.db"
    done = run("import", "--db", str(db), "jsonl", str(source))
    assert done.returncode == 2 and not db.exists()
    fixed = hinted(done.stderr)
    assert fixed == ["import", "jsonl", str(source), "--db", str(db)]
    assert run(*fixed).returncode == 0
    as_json = run("import", "--json", "jsonl", str(source), "--db", str(db))
    assert as_json.returncode == 2
    payload = json.loads(as_json.stdout)
    assert payload["usage"] is True
    assert f"{HINT}import jsonl {shlex.quote(str(source))} --db" in payload["error"]



def test_a_hint_naming_a_word_with_a_tab_works_pasted(tmp_path: Path) -> None:
    """A store path or a question holding a tab was printed in the hint as ``␉`` (shlex's
    quotes, then output's signs): pasted, the command named a store that does not exist.
    Both hints, the options' order and the question's quotes, run as printed."""
    folder = tmp_path / "tab\there"
    folder.mkdir()
    db = ingested(folder, SESSIONS)
    moved = run("--db", str(db), "search", "docker", "--summarizer", "none")
    words = run("search", "docker\tnetwork", "bridge", "--db", str(db))
    for done, marker in ((moved, "the command: "), (words, "goes in quotes: ")):
        assert done.returncode == 2
        hint = done.stderr.split(marker, 1)[1].rstrip().removesuffix(")")
        extra = "" if done is moved else f" --db {shlex.quote(str(db))}"
        again = _pasted(f"{hint}{extra} --json", tmp_path)
        assert again.returncode == 0, (hint, again.stderr)
        assert [r["session_id"] for r in json.loads(again.stdout)["results"]] == ["net"]


def test_options_after_the_double_dash_are_moved_before_it(tmp_path: Path) -> None:
    """``harkback search -- --no-cache --db PATH`` (a dashed query, then the options) was
    "unrecognized arguments: --db PATH" with no word that options go before ``--``."""
    db = ingested(tmp_path, [conversation(
        "dash", ("user", "why does --no-cache break the docker build"),
        ("assistant", "the layer cache was skipped"), started_at=1_770_000_000.0)])
    done = run("search", "--", "--no-cache", "--db", str(db), "--summarizer", "none")
    assert done.returncode == 2
    marker = "options go before '--': harkback "
    assert marker in done.stderr, done.stderr
    fixed = shlex.split(done.stderr.split(marker, 1)[1].rstrip().removesuffix(")"))
    assert fixed[-2:] == ["--", "--no-cache"]
    again = run(*fixed[:-2], "--json", *fixed[-2:])
    assert again.returncode == 0, again.stderr
    assert [r["session_id"] for r in json.loads(again.stdout)["results"]] == ["dash"]


def test_help_typed_after_the_double_dash_is_not_run_by_the_hint(tmp_path: Path) -> None:
    """``harkback search -- docker net --help``: the hint's trial parse of the line with
    ``--help`` moved ran its action, so the refused line printed help and exited 0."""
    db = ingested(tmp_path, SESSIONS)
    for help_word in ("--help", "--he"):
        done = run("search", "--db", str(db), "--", "docker", "net", help_word)
        assert (done.returncode, done.stdout) == (2, ""), (help_word, done.stdout)
        assert f"unrecognized arguments: net {help_word}" in done.stderr, done.stderr

