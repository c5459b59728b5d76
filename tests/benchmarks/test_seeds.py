"""The seed-scenario benchmark command and the corpus loader it shares with the suite."""

from __future__ import annotations

import doctest

import pytest

import benchmarks.seeds
import tests.support.seeds
from benchmarks.seeds import main


@pytest.mark.parametrize("module", [benchmarks.seeds, tests.support.seeds])
def test_examples_in_docstrings_hold(module: object) -> None:
    """The loader's and the table's examples run as written."""
    assert doctest.testmod(module).failed == 0  # type: ignore[arg-type]


def test_command_prints_a_row_per_language_for_each_ranker(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Both rankers' tables, each with a row per language and one over all questions."""
    assert main(["--rankers", "bm25,lexical"]) == 0
    out = capsys.readouterr().out
    for ranker in ("bm25", "lexical"):
        assert f"| {ranker} | questions | top-1 | in top-3 | pass |" in out
    rows = [line.split(" | ")[0] for line in out.splitlines() if line.startswith("| ")]
    assert [r for r in rows if r in ("| en", "| zh", "| ja", "| ko", "| mixed", "| all")] == [
        "| en", "| zh", "| ja", "| ko", "| mixed", "| all"] * 2


def test_unknown_ranker_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """A ranker name that does not exist ends with a usage error naming it."""
    with pytest.raises(SystemExit) as exit_info:
        main(["--rankers", "bm99"])
    assert exit_info.value.code == 2
    assert "bm99" in capsys.readouterr().err


def test_the_hybrid_ranker_is_refused_without_an_embedder(
        capsys: pytest.CaptureFixture[str]) -> None:
    """With no embedder the hybrid ranker ranks by words: refused, not shown as hybrid."""
    with pytest.raises(SystemExit) as exit_info:
        main(["--rankers", "lexical,hybrid"])
    assert exit_info.value.code == 2
    assert "embedder" in capsys.readouterr().err


def test_the_held_out_set_runs_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    """--set heldout asks the held-out corpus's questions (36, not the suite's 74)."""
    assert main(["--rankers", "lexical", "--set", "heldout"]) == 0
    (total,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| all")]
    assert total.split(" | ")[1] == "36"
