"""``harkback stats``: how much a store holds, as a short table or JSON.

>>> from harkback.stages.stats import SourceCount, StoreStats
>>> print(format_stats("h.db", StoreStats(
...     sessions=2, messages=5, sources=(SourceCount("cli", 2, 5),), oldest=0.0,
...     newest=86400.0, bytes_on_disk=2048, vectors=(), cached_summaries=0,
...     schema_version=1).to_payload()))
store      h.db: 2.0 KiB on disk, schema version 1
sessions   2, from 1970-01-01T00:00:00Z to 1970-01-02T00:00:00Z
messages   5
vectors    none
summaries  0 cached
<BLANKLINE>
source       sessions  messages
cli                 2         5
"""

from __future__ import annotations

from typing import Any

from returns.result import Failure, Result

from harkback.pipeline.columns import columns, padded
from harkback.pipeline.terminal import one_line
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore
from harkback.stages.stage import as_result
from harkback.stages.stats import StoreStats

NO_SOURCE = "(none)"
"""How the table names sessions stored without a source (``""`` in the JSON)."""


def _size(count: int | None) -> str:
    if count is None:
        return "not a file"
    size = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{count} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def format_stats(target: str, payload: dict[str, Any]) -> str:
    """The human form of a stats payload."""
    span = (f", from {payload['oldest']} to {payload['newest']}"
            if payload["oldest"] is not None else "")
    vectors = ", ".join(f"{model}: {n}" for model, n in payload["vectors"].items()) or "none"
    version = payload["schema_version"]
    lines = [f"store      {target}: {_size(payload['bytes_on_disk'])} on disk, schema version "
             f"{'none' if version is None else version}",
             f"sessions   {payload['sessions']}{span}",
             f"messages   {payload['messages']}",
             f"vectors    {vectors}",
             f"summaries  {payload['cached_summaries']} cached"]
    if payload["sources"]:
        # Whole names (a cut one is not what --source takes); sessions stored without a
        # source get a visible name rather than a blank.
        names = [one_line(s["source"]) or NO_SOURCE for s in payload["sources"]]
        width = max(12, *(columns(name) for name in names))
        lines += ["", f"{'source':<{width}} {'sessions':>8}  {'messages':>8}"]
        lines += [f"{padded(name, width)} {s['sessions']:>8}  {s['messages']:>8}"
                  for name, s in zip(names, payload["sources"], strict=True)]
    return "\n".join(lines)


async def count_store(store: SessionStore) -> Result[StoreStats, StoreUnavailable]:
    """What ``store`` holds, or why it cannot say."""
    reading = store.stats()
    if reading is None:
        return Failure(StoreUnavailable("this store cannot count what it holds"))
    return as_result(await reading.awaitable())
