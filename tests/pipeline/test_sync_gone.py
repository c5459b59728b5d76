"""The marks of gone items that ``settle_gone`` leaves to other sources."""

from __future__ import annotations

import asyncio

from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline.sync_gone import settle_gone
from harkback.stages.imports import Mark, SourceKey
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation


def test_a_gone_mark_of_two_sessions_lets_go_of_the_one_another_source_pruned() -> None:
    """Source B keeps a gone file of two sessions (S, T); source A's file of S is gone and
    pruned, so S is removed: B's mark goes on keeping T alone (its count one session, its
    last import time untouched), where it counted S as kept though no longer stored."""
    store = MemoryStore()
    ledger = store.import_ledger()
    a, b = SourceKey("codex", "/a"), SourceKey("codex", "/b")

    async def run() -> tuple[Mark, float | None, float | None, list[str]]:
        await ok(store.ingest([conversation("S", ("user", "kept twice")),
                               conversation("T", ("user", "kept once"))]))
        await ok(ledger.keep(b, [Mark(item="b.jsonl", fingerprint="1:1", sessions=2,
                                      messages=2, session_ids=("S", "T")).went()], now=5.0))
        await ok(ledger.keep(a, [Mark(item="a.jsonl", fingerprint="1:1", sessions=1,
                                      messages=1, session_ids=("S",))], now=6.0))
        before = (await ok(ledger.state(b))).last_imported_at
        gone = (await settle_gone(a, ["a.jsonl"], store, ledger, prune=True, now=9.0)).unwrap()
        assert gone.removed == 1
        after = await ok(ledger.state(b))
        left = [s.id for s in await ok(store.sessions(["S", "T"]))]
        (mark,) = after.marks
        return mark, before, after.last_imported_at, left

    mark, before, after, left = asyncio.run(run())
    assert left == ["T"]
    assert (mark.session_ids, mark.sessions, mark.gone) == (("T",), 1, True)
    assert after == before
