"""Stretches of time a question names, through the real CLI on a real SQLite store: the
week, month or day before last (上上周, 先々週, 지지난주) in each language."""

from __future__ import annotations

import json
from datetime import UTC, datetime
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


@pytest.mark.parametrize(("question", "days"), [
    # From one time to another: these were searched as words (none of the sessions holds
    # them), or listed from the first time until now.
    ("从上周一到周三做了什么", ["2026-03-11", "2026-03-09"]),
    ("上周一到周三为止做了什么", ["2026-03-11", "2026-03-09"]),
    ("先週の月曜から水曜まで何をした？", ["2026-03-11", "2026-03-09"]),
    ("지난주 월요일부터 수요일까지 뭐 했지", ["2026-03-11", "2026-03-09"]),
    ("what did I do from last Monday to Wednesday?", ["2026-03-18", "2026-03-16"]),
    ("what did I do from last week until yesterday?",
     ["2026-03-18", "2026-03-16", "2026-03-13", "2026-03-11", "2026-03-09"]),
    # What I was up to last week is last week's work (searched as words: "up to" was read
    # as "until" and the time dropped).
    ("what was I up to last week?", ["2026-03-13", "2026-03-11", "2026-03-09"]),
    # Until (before) a time alone: the sessions up to it.
    ("what did I do before last week?", ["2026-03-07", "2026-03-06", "2026-03-04", "2026-03-02",
                                         "2026-02-25", "2026-01-20"]),
    ("水曜まで何をした？", ["2026-03-18", "2026-03-16", "2026-03-13", "2026-03-11", "2026-03-09",
                     "2026-03-07", "2026-03-06", "2026-03-04", "2026-03-02", "2026-02-25"]),
])
def test_a_range_lists_the_sessions_between_its_ends(store: Path, question: str,
                                                     days: list[str]) -> None:
    assert listed(store, question) == days


def test_until_now_lists_up_to_the_moment_asked(store: Path) -> None:
    """今まで, 지금까지, 到现在 (until now) list the sessions up to --as-of, newest first;
    the payload says the window has no start."""
    for question in ("今まで何をした？", "지금까지 뭐 했지", "到现在做了什么"):
        done = run("search", question, "--as-of", "2026-03-12T00:00", "--limit", "3", "--json",
                   db=store)
        payload = json.loads(done.stdout)
        assert [r["session_id"][3:13] for r in payload["results"]] == [
            "2026-03-11", "2026-03-09", "2026-03-07"], question
        assert payload["window"]["since"] is None


@pytest.mark.parametrize("value", ["上周", "先週", "지난주", "last week"])
def test_since_and_until_take_the_words_a_question_takes(store: Path, value: str) -> None:
    """``--since 上周 --until 上周`` bound a search to last week (9-15 March), as ``last
    week`` does; they were refused as unreadable."""
    days = listed(store, "notes", "--since", value, "--until", value)
    assert sorted(days) == ["2026-03-09", "2026-03-11", "2026-03-13"]


def test_a_bound_not_understood_is_one_line(store: Path) -> None:
    for value in ("someday", "上周 nginx"):
        done = run("search", "notes", "--since", value, db=store)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert done.stderr.startswith(f"harkback: cannot read --since '{value}': use a date")


def test_a_word_ending_in_shang_names_no_last_weekend(tmp_path: Path) -> None:
    """马上周末了 (the weekend is near) asks how the backup script is set up: the session that
    set it up (to run at weekends too) weeks ago comes first. 上周末 of 马上周末 was read as
    last weekend: 周末 went unsearched and last weekend's session was lifted above it."""
    source = tmp_path / "backup.jsonl"
    sessions = [
        ("setup", "2026-02-10T12:00:00", "备份脚本设置：周末也要跑，cron 凌晨三点执行 backup.sh"),
        ("chat", "2026-03-14T12:00:00", "备份脚本的设置放在哪个目录比较好"),
    ]
    source.write_text("".join(json.dumps(
        {"id": name, "started_at": datetime.fromisoformat(when).replace(tzinfo=UTC).timestamp(),
         "messages": [{"role": "user", "content": text}]}) + "\n"
        for name, when, text in sessions), encoding="utf-8")
    path = tmp_path / "backup.db"
    assert run("ingest", str(source), db=path).returncode == 0
    done = run("search", "马上周末了，备份脚本怎么设置", *_ASKED, db=path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["session_id"] == "setup"
