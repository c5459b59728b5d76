"""The search again over tool output, when the default roles found nothing: run for a query
with words, not for one with nothing to search (punctuation alone), on a real SQLite store."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.timing import RecordingObserver
from tests.conftest import conversation
from tests.support.calls_counted import CallsCounted

SESSIONS = (
    conversation("api", ("user", "why does the api fail"), ("tool", "ECONNREFUSED 10.0.0.5:5432"),
                 started_at=1.0, project="/w/shop"),
)


async def _searched(tmp_path: Path, query: str) -> tuple[dict[str, Any], int, Counter[str]]:
    """The payload of ``query`` searched within project 'shop', how many times the match
    stage ran, and the store's calls."""
    with SqliteStore.open(tmp_path / "h.db").unwrap() as store:
        await store.ingest(SESSIONS).awaitable()
        counted, recorder = CallsCounted(store), RecordingObserver()
        hb = Harkback(store=counted, observer=recorder)
        payload = (await hb.search(query, projects=("shop",))).to_payload()
    matches = sum(1 for e in recorder.events if e.stage == "match" and e.duration_ms is not None)
    return payload, matches, counted.calls


async def test_a_query_with_nothing_to_search_is_not_searched_again_in_tool_output(
        tmp_path: Path) -> None:
    """``???`` holds no word any role could match: its match ran twice and the store was
    asked whether the project holds a session, for a second run that could find nothing.
    It now runs once and asks the store nothing."""
    payload, matches, calls = await _searched(tmp_path, "??? !!")
    assert (payload["results"], matches) == ([], 1)
    assert calls == Counter()


async def test_a_query_with_words_is_still_searched_again_in_tool_output(tmp_path: Path) -> None:
    """A word only tool output holds is still found by the second run, the store asked for
    its counts by each run."""
    payload, matches, calls = await _searched(tmp_path, "ECONNREFUSED")
    assert [r["session_id"] for r in payload["results"]] == ["api"]
    assert matches == 2
    assert calls["term_stats"] == 2
