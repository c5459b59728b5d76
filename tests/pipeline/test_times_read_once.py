"""A search reads its question's times once: the pipeline's reading (``named_times``, to see
whether it lists a time) gives the ranker its windows; a query in search syntax, which
lists nothing, leaves them to the ranker's own lighter reading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harkback.pipeline import Harkback, compose, open_store
from harkback.stages.named_times import named_times
from tests.conftest import conversation

DAY = 86_400.0
NOW = 1772712000.0  # Thursday 2026-03-05 12:00 UTC


async def test_a_query_in_search_syntax_is_not_read_for_a_listing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """'"connection refused" nginx' names no time to list: the pipeline read it whole for
    one (``named_times``, twice the CPU of the ranker's ``weighed_times``: +48 ms for a
    pasted log in quotes) where main read only the ranker's windows. A question in plain
    words is read once, its windows passed on."""
    store = open_store(tmp_path / "history.db").unwrap()
    await store.ingest((conversation(
        "n", ("user", "nginx says connection refused on port 443"), started_at=NOW - DAY),))
    read: list[str] = []

    def watched(question: str, now: float) -> Any:
        read.append(question)
        return named_times(question, now)

    monkeypatch.setattr(compose, "named_times", watched)
    harkback = Harkback(store=store)
    for query in ('"connection refused" nginx', "nginx connection refused yesterday"):
        payload = (await harkback.search(query, as_of=NOW)).to_payload()
        assert [r["session_id"] for r in payload["results"]] == ["n"], payload
    assert read == ["nginx connection refused yesterday"]
