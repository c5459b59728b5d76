"""The rerank benchmark's pooled protocol and its question filters, against a real SQLite
store and the scripted Chat Completions server, its model reading the prompt."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks import rerank
from tests.support.chat_server import ChatServer, Received, Reply

MISSED = "What name did I give my new playlist?"
FOUND = "How many bikes do I own?"
ANSWER = "Summer Vibes"
DECOYS = [f"I need a name for a new playlist, give me new playlist name ideas, take {i}."
          for i in range(7)]


def _record(qid: str, question: str, gold: dict[str, str], others: list[str]
            ) -> dict[str, Any]:
    texts = [*gold.values(), *others]
    ids = [*gold, *(f"{qid}_other_{i}" for i in range(len(others)))]
    return {"question_id": qid, "question_type": "single-session-user", "question": question,
            "question_date": "2023/05/30 (Tue) 10:00", "answer": "",
            "answer_session_ids": list(gold), "haystack_session_ids": ids,
            "haystack_dates": [f"2023/05/{10 + i:02d} (Wed) 09:00" for i in range(len(ids))],
            "haystack_sessions": [[{"role": "user", "content": text, "has_answer": True},
                                   {"role": "assistant", "content": "Noted."}]
                                  for text in texts]}


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    """Two questions: one whose answer session the lexical ranking puts below seven
    decoys sharing the question's words, one it finds first."""
    records = [
        _record("missed", MISSED,
                {"ev_vibes": f"I made a playlist called {ANSWER} for the road trip."},
                DECOYS),
        _record("found", FOUND, {"ev_bikes": "I own two bikes: a road bike and a gravel bike."},
                ["Can you suggest a pasta recipe with garlic?"]),
    ]
    path = tmp_path / "tiny.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        json.dump(records, out)
    return path


def judge(received: Received) -> Reply:
    """A model that reads its prompt: the session quoting the answer is relevant."""
    for block in received.prompt.split("\n\n"):
        label = re.search(r"^\[(S\d+)\]", block, re.MULTILINE)
        if label and ANSWER in block:
            return Reply(content=f"RELEVANT: {label.group(1)}")
    return Reply(content="RELEVANT: none")


def _run(data_file: Path, db: Path, url: str, *extra: str) -> None:
    rerank.main(["--data", str(data_file), "--pooled-db", str(db), "--base-url", url,
                 "--model", "judge", *extra])


def test_pooled_misses_only_asks_the_model_about_the_missed_question_alone(
        data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The pooled store is built at --pooled-db; the question the lexical ranking
    already answers never reaches the model; the missed one is fixed by the rerank."""
    db = tmp_path / "pooled.db"
    with ChatServer(judge) as server:
        _run(data_file, db, server.url, "--only", "misses")
    out = capsys.readouterr().out
    assert db.is_file()
    assert server.received and all(MISSED in r.prompt and FOUND not in r.prompt
                                   for r in server.received)
    assert "pooled" in out and "lexical misses only (1 of the first 2 questions)" in out
    assert "| lexical | 0.000 | 0.000 |" in out
    assert "| lexical + rerank | 1.000 | 1.000 |" in out
    assert "| questions with every gold session in the shortlist | 1 | |" in out


def test_fixable_leaves_out_a_miss_whose_answer_is_not_in_the_shortlist(
        data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With a shortlist of five the answer session (below seven decoys) is out of reach,
    so --only fixable sends nothing to the model and scores no question."""
    with ChatServer(judge) as server:
        _run(data_file, tmp_path / "pooled.db", server.url, "--only", "fixable",
             "--shortlist", "5")
    out = capsys.readouterr().out
    assert server.received == []
    assert "(0 of the first 2 questions), 0 questions" in out
