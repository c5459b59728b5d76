"""Two rollouts naming one session id settle the same in every store: a copy holding nothing
new adds nothing, one with other messages is kept aside whole (PostgreSQL as SQLite)."""

from __future__ import annotations

from pathlib import Path

from harkback.pipeline.sync import locate, sync
from harkback.stages.ports import RecentQuery, SessionStore
from tests.adapters.stores.store_contract import ok
from tests.pipeline.test_shared_session_ids import COPY, ORIGINAL, rollout
from tests.support.new_stores import new_stores

store = new_stores("sqlite", "postgres")


async def held(store: SessionStore) -> dict[str, list[str]]:
    """Every stored session's message texts (their first line), by id."""
    ids = [o.session.id for o in await ok(store.recent(RecentQuery(limit=10)))]
    texts: dict[str, list[str]] = {sid: [] for sid in ids}
    for message in await ok(store.messages(sorted(ids))):
        texts[message.session_id].append(message.content.split("\n")[0])
    return texts


async def synced(home: Path, store: SessionStore) -> tuple[int, dict[str, int]]:
    """``home``'s rollouts synced: the skipped lines named, and what was left out."""
    located = locate({"codex": home / "sessions", "hermes": home / "none",
                      "claude-code": home / "none"})
    [report] = [r for r in await sync(located, store, progress=False) if r.located]
    return len(report.skipped), dict(report.left_out)


async def test_copies_of_a_rollout_settle_alike_in_each_store(store: SessionStore,
                                                              tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    rollout(sessions / ORIGINAL, ("alpha", 4))
    rollout(sessions / COPY, ("alpha", 2))
    assert await synced(tmp_path, store) == (
        0, {"session copied from another file (stored there)": 1})
    rollout(sessions / COPY, ("alpha", 2), ("pear", 1))
    assert (await synced(tmp_path, store))[0] == 1
    assert await held(store) == {
        "cx1": [f"alpha {n}" for n in range(4)],
        "cx1@rollout-2026-11-20T10-00-00-bbbb": ["alpha 0", "alpha 1", "pear 0"]}
    assert await synced(tmp_path, store) == (0, {})
