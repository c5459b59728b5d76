"""Stretches of time a question names, through the real CLI on a real SQLite store: the
week, month or day before last (上上周, 先々週, 지지난주) in each language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.pipeline.test_cli import run
from tests.pipeline.test_cli_times import sessions_at

# Around Thursday 2026-03-19: last week is 9-15 March, the week before last 2-8 March.
_MOMENTS = ["2026-01-20T12:00:00", "2026-02-25T12:00:00", "2026-03-02T12:00:00",
            "2026-03-04T12:00:00", "2026-03-06T12:00:00", "2026-03-07T12:00:00",
            "2026-03-09T12:00:00", "2026-03-11T12:00:00", "2026-03-13T12:00:00",
            "2026-03-16T12:00:00", "2026-03-18T12:00:00"]
_ASKED = ("--as-of", "2026-03-19T12:00", "--limit", "10", "--json")
_WEEK_BEFORE_LAST = ["2026-03-07", "2026-03-06", "2026-03-04", "2026-03-02"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sessions_at(tmp_path_factory.mktemp("spans"), _MOMENTS)


def listed(store: Path, *args: str) -> list[str]:
    """The days of the sessions ``harkback search ARGS`` lists as of 19 March, newest first."""
    done = run("search", *args, *_ASKED, db=store)
    assert done.returncode == 0, done.stderr
    return [r["session_id"].removeprefix("at-")[:10] for r in json.loads(done.stdout)["results"]]


@pytest.mark.parametrize(("question", "days"), [
    # Searched as the words 上上周, 先々週, 지지난주 (none of the sessions holds them).
    ("上上周做了什么", _WEEK_BEFORE_LAST),
    ("先々週何をした？", _WEEK_BEFORE_LAST),
    ("지지난주에 뭐 했지", _WEEK_BEFORE_LAST),
    ("what did I do the week before last?", _WEEK_BEFORE_LAST),
    ("上上个月做了什么", ["2026-01-20"]),
    ("지지난달에 뭐 했지", ["2026-01-20"]),
    ("上上周五做了什么", ["2026-03-06"]),
    ("지지난 금요일에 뭐 했지", ["2026-03-06"]),
])
def test_the_one_before_last_lists_that_period(store: Path, question: str,
                                               days: list[str]) -> None:
    assert listed(store, question) == days
