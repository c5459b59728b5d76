"""The in-memory store's summary cache and import ledger used from many threads at once
(the store's calls from worker threads, as its sessions are): no write is lost and no
read fails, because they take the store's lock."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.imports import Mark, SourceKey
from harkback.stages.records import Summary
from harkback.stages.summary_port import SummaryKey
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation


def _key(root: str) -> SummaryKey:
    return SummaryKey(root_session_id=root, content="c", query="q", model="m",
                      prompt_version="1")


def _together(*work: Callable[[], Coroutine[Any, Any, None]]) -> list[BaseException]:
    """Run each of ``work`` in a thread of its own (its own event loop), all at once; what
    they raised."""
    raised: list[BaseException] = []
    start = threading.Barrier(len(work))

    def run(one: Callable[[], Coroutine[Any, Any, None]]) -> None:
        start.wait()
        try:
            asyncio.run(one())
        except Exception as error:  # what a thread raised is the finding
            raised.append(error)
    threads = [threading.Thread(target=run, args=(one,)) for one in work]
    # The threads take turns far more often than every 5 ms: a race shows on each run.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
    finally:
        sys.setswitchinterval(interval)
    return raised


def test_summaries_kept_while_sessions_are_removed_are_all_kept() -> None:
    """A summary kept by one thread while another removed sessions (which drops their
    cached summaries by building the cache's dict again) failed that removal
    (``dictionary changed size during iteration``), or was lost when it landed in the old
    dict. Now none fails and none is lost."""
    store = MemoryStore()
    cache = store.summary_cache()
    summary = Summary(text="kept", kind="extractive")
    asyncio.run(ok(store.ingest([conversation(f"gone{i}", ("user", "x"))
                                 for i in range(200)])))
    for i in range(5_000):  # a large cache: each removal takes a while to rebuild it
        asyncio.run(ok(cache.keep_summary(_key(f"old{i}"), summary)))

    async def keep() -> None:
        for i in range(2_000):
            await ok(cache.keep_summary(_key(f"new{i}"), summary))

    async def remove() -> None:
        for i in range(200):
            await ok(store.remove_sessions([f"gone{i}"]))

    assert _together(keep, remove) == []
    found = [asyncio.run(ok(cache.cached_summary(_key(f"new{i}")))) for i in range(2_000)]
    assert sum(1 for f in found if f is None) == 0


def test_the_ledger_read_while_other_threads_import_is_whole() -> None:
    """Listing the ledger's sources while other threads kept marks of new ones raised
    ``dictionary changed size during iteration``. Now every listing is whole and every
    mark is kept."""
    ledger = MemoryStore().import_ledger()
    mark = Mark(item="x", fingerprint="1:2", sessions=1, messages=1)

    def keeper(first: int) -> Callable[[], Coroutine[Any, Any, None]]:
        async def keep() -> None:
            for i in range(first, first + 1_000):
                await ok(ledger.keep(SourceKey(kind="jsonl", location=f"/{i}.jsonl"), [mark],
                                     now=float(i)))
        return keep

    async def read() -> None:
        for _ in range(150):
            await ok(ledger.sources())

    assert _together(keeper(0), keeper(1_000), read, read) == []
    assert len(asyncio.run(ok(ledger.sources()))) == 2_000
