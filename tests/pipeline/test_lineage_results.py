"""A search result for a lineage names every session of it that matched, through the
facade over a SQLite file, as ``search --json`` prints it."""

from __future__ import annotations

from pathlib import Path

from returns.unsafe import unsafe_perform_io

from harkback.pipeline import Harkback, open_store
from tests.conftest import conversation

NOW = 1_780_000_000.0


async def test_a_lineage_s_result_names_every_session_that_matched(tmp_path: Path) -> None:
    """A session continued five times, three messages of each part saying the question's
    words: its result names all six sessions (its lineage) in ``matched_sessions``, not
    only the two whose hits came first (a lineage hands on twice a session's hits before
    the other results, and the rest after them)."""
    parts = [conversation("p0" if i == 0 else f"p{i}",
                          *[("user", f"kafka lag step {i}.{j}") for j in range(3)],
                          parent=None if i == 0 else f"p{i - 1}", started_at=NOW - 1000 + i)
             for i in range(6)]
    others = [conversation(f"other-{i}", ("user", f"kafka lag alert {i}"), started_at=NOW - i)
              for i in range(3)]
    filler = [conversation(f"filler-{i}", ("user", f"notes on topic {i}")) for i in range(8)]
    store = open_store(tmp_path / "store.db").unwrap()
    try:
        unsafe_perform_io((await store.ingest((*parts, *others, *filler)).awaitable()).unwrap())
        payload = (await Harkback(store=store).search("kafka lag", limit=5)).to_payload()
    finally:
        store.close()
    results = {r["session_id"]: r for r in payload["results"]}
    assert set(results) == {"p0", *(o.session.id for o in others)}
    assert len(results["p0"]["lineage"]) == 6
    assert sorted(results["p0"]["matched_sessions"]) == sorted(results["p0"]["lineage"])
