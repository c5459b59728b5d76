"""A command or an import's kind misspelt or cut short (``harkback serch docker``,
``harkback import claude``): the usage error names the command line with the one choice
near it, and that command line runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.pipeline.test_cli import ingested, run
from tests.pipeline.test_option_order import SESSIONS, hinted

HINT = "did you mean: harkback "


def test_a_misspelt_command_names_the_one_near_it(tmp_path: Path) -> None:
    """``harkback serch docker`` listed all 17 commands and named none."""
    db = ingested(tmp_path, SESSIONS)
    done = run("serch", "docker", "--db", str(db), "--summarizer", "none")
    assert done.returncode == 2
    fixed = hinted(done.stderr, HINT)
    assert fixed == ["search", "docker", "--db", str(db), "--summarizer", "none"]
    again = run(*fixed, "--json")
    assert again.returncode == 0, again.stderr
    assert [r["session_id"] for r in json.loads(again.stdout)["results"]] == ["net"]


def test_an_import_kind_cut_short_names_the_kind(tmp_path: Path) -> None:
    """``harkback import claude DIR`` (the agent's name, not the kind) names claude-code."""
    projects = tmp_path / "projects"
    projects.mkdir()
    done = run("import", "claude", str(projects), "--db", str(tmp_path / "h.db"))
    assert done.returncode == 2
    assert hinted(done.stderr, HINT) == ["import", "claude-code", str(projects), "--db",
                                   str(tmp_path / "h.db")]


def test_a_word_near_several_commands_names_none() -> None:
    """``s`` starts search, show, stats, sources and sync: no guess is made."""
    done = run("s", "docker")
    assert done.returncode == 2
    assert HINT not in done.stderr
