"""Long look-alike sessions through the command line: one long session about a question
must not hide every other session about it (issue 17).

A ranker reads 300 candidate messages; sessions of hundreds of near-identical messages
("kafka consumer lag" in every status line) filled them from one session, and the answer
was "1 of 1 matching session(s)".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run

DAY = 86400.0
START = 1_770_000_000.0


@pytest.mark.parametrize("ranker", ["lexical", "hybrid"])
@pytest.mark.parametrize(("long_sessions", "lines"), [
    (4, 350),  # 1,400 rows of each word: the store ranks every match (BM25, best first)
    (4, 550),  # 2,200: every word is common, the store reads the newest matches first
])
def test_long_sessions_do_not_hide_the_others(tmp_path: Path, long_sessions: int, lines: int,
                                              ranker: str) -> None:
    """Every session about the question is found, the one where the user asked among them."""
    asked = conversation(
        "asked",
        ("user", "why is the kafka consumer lag growing on the orders topic since monday"),
        ("assistant", "the consumers rebalance every few minutes; raise max.poll.interval"),
        started_at=START)
    # Long sessions of monitoring output, started later: short lines, each holding every
    # word of the question, so each of their rows ranks above the user's longer question.
    status = [conversation(
        f"status-{n}",
        *[("assistant", f"kafka consumer lag partition {i % 12} offset {i}") for i in range(lines)],
        started_at=START + (n + 1) * DAY) for n in range(long_sessions)]
    db = ingested(tmp_path, [asked, *status])

    done = run("search", "kafka consumer lag", "--limit", "10", "--json",
               "--summarizer", "none", "--ranker", ranker, db=db)

    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    found = [r["session_id"] for r in payload["results"]]
    assert sorted(found) == sorted(["asked", *(c.session.id for c in status)])
    assert payload["sessions_searched"] == long_sessions + 1


@pytest.mark.parametrize("ranker", ["lexical", "hybrid"])
def test_a_long_conversation_in_many_parts_does_not_hide_the_others(tmp_path: Path,
                                                                     ranker: str) -> None:
    """A conversation continued five times fills the search from six sessions, but it is
    one result: the search goes on until it has the results asked for (it stopped at six
    sessions, and the answer was 1 result where 5 were asked and 7 matched)."""
    parts = [conversation(
        f"part-{n}",
        *[("assistant", f"kafka consumer lag partition {i % 12} offset {i}") for i in range(50)],
        started_at=START + n * DAY, parent=f"part-{n - 1}" if n else None) for n in range(6)]
    others = [conversation(
        f"other-{n}",
        ("user", f"why is the kafka consumer lag growing on the topic of service {n} today"),
        started_at=START - (n + 1) * DAY) for n in range(6)]
    db = ingested(tmp_path, [*parts, *others])

    done = run("search", "kafka consumer lag", "--limit", "5", "--json",
               "--summarizer", "none", "--ranker", ranker, db=db)

    assert done.returncode == 0, done.stderr
    found = [r["session_id"] for r in json.loads(done.stdout)["results"]]
    assert len(found) == 5 and "part-0" in found


@pytest.mark.parametrize("filler", ["own", "hidden"])
def test_a_conversation_never_shown_does_not_count_as_a_result(tmp_path: Path,
                                                                filler: str) -> None:
    """The caller's own conversation (``--current-session``), or a hidden tool's, filling
    the search with four others is no result: the search goes on for a fifth (it counted
    it, stopped at five, and the answer was 4 results where 5 were asked and 10 matched)."""
    root = conversation("fill-0", ("user", "run the checks"), started_at=START + 9 * DAY,
                        source="tool" if filler == "hidden" else "cli")
    fill = [root, *(conversation(
        f"fill-{n}",
        *[("assistant", f"kafka consumer lag partition {i % 12} offset {i}") for i in range(148)],
        started_at=START + (9 + n) * DAY, parent="fill-0") for n in (1, 2))]
    recent = [conversation(f"recent-{n}", ("user", f"kafka consumer lag check {n}"),
                           started_at=START + (8 - n) * DAY) for n in range(4)]
    old = [conversation(
        f"old-{n}",
        ("user", f"why is the kafka consumer lag growing on the topic of service {n} today"),
        started_at=START - (n + 1) * DAY) for n in range(6)]
    db = ingested(tmp_path, [*fill, *recent, *old])
    own = ("--current-session", "fill-2") if filler == "own" else ()

    done = run("search", "kafka consumer lag", "--limit", "5", "--json",
               "--summarizer", "none", *own, db=db)

    assert done.returncode == 0, done.stderr
    found = [r["session_id"] for r in json.loads(done.stdout)["results"]]
    assert len(found) == 5 and not any(s.startswith("fill") for s in found)
