"""The transcript-budget benchmark on a small LongMemEval-shaped file."""

from __future__ import annotations

from benchmarks.budget import choose, measure, table
from benchmarks.longmemeval import Dataset

FILLER = "We talked about the weather and what to cook tonight, at some length. " * 6


def _dataset() -> Dataset:
    turns: list[dict[str, object]] = []
    for i in range(40):
        turns.append({"role": "user", "content": f"Question {i}: {FILLER}"})
        turns.append({"role": "assistant", "content": f"Answer {i}: {FILLER}"})
    turns[50] = {"role": "user", "has_answer": True,
                 "content": "I named my Spotify playlist Summer Vibes yesterday."}
    return Dataset.from_json([{
        "question_id": "q1", "question_type": "single-session-user",
        "question": "What is the name of the playlist I created on Spotify?",
        "question_date": "2023/05/30 (Tue) 19:19", "answer": "Summer Vibes",
        "answer_session_ids": ["s1"], "haystack_session_ids": ["s1"],
        "haystack_dates": ["2023/05/20 (Sat) 00:27"], "haystack_sessions": [turns]}])


async def test_small_budgets_send_fewer_tokens_and_keep_the_matching_turn() -> None:
    """Every budget keeps the evidence turn here and stays within its token bound."""
    rows = await measure(_dataset(), (200, 800))
    reference, small, large = rows
    assert reference.kept == small.kept == large.kept == 1
    assert max(small.transcript_tokens) <= 200 < reference.transcript_tokens[0]
    assert choose(rows) is small


async def test_the_table_has_a_row_per_setting() -> None:
    """The printed table names the reference and each budget."""
    text = table(await measure(_dataset(), (300,)))
    assert "reference (100,000 chars)" in text and "| 300 tokens |" in text
