"""Model summaries kept for reuse, in harkback's own SQLite file or in memory.

Both implement :class:`~harkback.stages.ports.SummaryCache`. The SQLite cache lives
in a ``summary_cache`` table of the session store's file and runs on the store's
connection thread. The table is made on the first write, so a database made
before the cache existed needs no migration; a store opened read-only never
writes, and every lookup there is a miss unless an earlier writable run filled it.

>>> import asyncio
>>> from harkback.stages.ports import SummaryKey
>>> from harkback.stages.records import Summary
>>> cache = MemorySummaryCache()
>>> key = SummaryKey(root_session_id="s1", content="abc", query="docker", model="m",
...                  prompt_version="recall-1")
>>> _ = asyncio.run(cache.keep_summary(key, Summary(text="Fixed.", kind="llm")).awaitable())
>>> asyncio.run(cache.cached_summary(key).map(lambda s: s and s.text).awaitable())
<IOResult: <Success: Fixed.>>
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import attrs
from returns.future import FutureResult

from harkback.adapters.stores.closing import in_turn, never_closed
from harkback.adapters.stores.sqlite_transaction import immediate
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SummaryKey
from harkback.stages.records import Summary, TokenUsage
from harkback.stages.redact.rules import PLACEHOLDER
from harkback.stages.redact.scrub import redact

if TYPE_CHECKING:
    from harkback.adapters.stores.sqlite import SqliteStore

CREATE_TABLE = """CREATE TABLE IF NOT EXISTS summary_cache (
    root_session_id TEXT NOT NULL,
    content TEXT NOT NULL,
    query TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    note TEXT NOT NULL,
    cited TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (root_session_id, content, query, model, prompt_version)
) WITHOUT ROWID"""

_KEY_COLUMNS = "root_session_id, content, query, model, prompt_version"
SELECT = (f"SELECT kind, text, note, cited, prompt_tokens, completion_tokens "
          f"FROM summary_cache WHERE ({_KEY_COLUMNS}) = (?, ?, ?, ?, ?)")
UPSERT = (f"INSERT OR REPLACE INTO summary_cache ({_KEY_COLUMNS}, kind, text, note, cited, "
          f"prompt_tokens, completion_tokens, created_at) "
          f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")

Row = tuple[object, ...]


def key_params(key: SummaryKey) -> tuple[str, str, str, str, str]:
    """The bound values that select one cached summary."""
    return (key.root_session_id, key.content, key.query, key.model, key.prompt_version)


def summary_row(key: SummaryKey, summary: Summary, now: float) -> Row:
    """The row that keeps ``summary`` under ``key``."""
    return (*key_params(key), summary.kind, summary.text, summary.note,
            json.dumps(list(summary.cited_messages)), summary.usage.prompt,
            summary.usage.completion, now)


SECRET_MARK = PLACEHOLDER.partition("{")[0]
"""How every placeholder of a redacted secret starts (``[secret:``)."""


def keeps_no_secret(key: SummaryKey) -> bool:
    """Whether a summary may be cached under ``key``: not when its question holds a
    secret, which the store would then hold (and the model's answer may repeat it); such
    a question is summarised again each time instead.

    >>> keeps_no_secret(SummaryKey(root_session_id="s", content="d", query="docker dns",
    ...                            model="m", prompt_version="1"))
    True
    >>> keeps_no_secret(SummaryKey(root_session_id="s", content="d", query="why AKIA"
    ...                            "IOSFODNN7EXAMPLE", model="m", prompt_version="1"))
    False
    >>> from harkback.stages.summary_port import key_query
    >>> asked = key_query("why AKIAIOSFODNN7EXAMPLE")  # as a search keys it: case-folded
    >>> keeps_no_secret(SummaryKey(root_session_id="s", content="d", query=asked, model="m",
    ...                            prompt_version="1"))
    False
    """
    # A key's question comes with its secrets already replaced (key_query): the
    # placeholder says one was there, whatever case the rules needed.
    return SECRET_MARK not in key.query and not redact(key.query)[1].by_kind


def summary_from_row(row: Row) -> Summary:
    """A cached summary from its row (``kind, text, note, cited, prompt, completion``).

    >>> summary_from_row(("llm", "Fixed.", "", "[2, 5]", 100, 20)).cited_messages
    (2, 5)
    """
    kind, text, note, cited, prompt, completion = row
    numbers = json.loads(str(cited))
    return Summary(
        text=str(text), kind="llm" if kind == "llm" else "extractive", note=str(note),
        usage=TokenUsage(prompt=int(str(prompt)), completion=int(str(completion))),
        cited_messages=tuple(int(n) for n in numbers if isinstance(n, int)))


def _lookup(params: tuple[str, ...]) -> Callable[[sqlite3.Connection], Summary | None]:
    def work(connection: sqlite3.Connection) -> Summary | None:
        try:
            row = connection.execute(SELECT, params).fetchone()
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                return None  # nothing was ever cached in this file
            raise
        return None if row is None else summary_from_row(tuple(row))
    return work


CACHE_BUSY_MS = 100
"""How long a cache write waits for a lock: a busy database must not hold up a recall."""


def _store(row: Row) -> Callable[[sqlite3.Connection], None]:
    def work(connection: sqlite3.Connection) -> None:
        (previous,) = connection.execute("PRAGMA busy_timeout").fetchone()
        connection.execute(f"PRAGMA busy_timeout = {CACHE_BUSY_MS}")
        try:
            # One write transaction, which also refuses a file another harkback migrated.
            with immediate(connection):
                connection.execute(CREATE_TABLE)
                connection.execute(UPSERT, row)
        finally:
            connection.execute(f"PRAGMA busy_timeout = {int(previous)}")
    return work


class SqliteSummaryCache:
    """A summary cache in the session store's SQLite file, on its connection thread."""

    def __init__(self, store: SqliteStore) -> None:
        """Share ``store``'s connection (and its read-only mode)."""
        self.store = store

    def cached_summary(self, key: SummaryKey
                       ) -> FutureResult[Summary | None, StoreUnavailable]:
        """The summary kept under ``key``, or None."""
        return self.store.run(_lookup(key_params(key)))

    def keep_summary(self, key: SummaryKey, summary: Summary
                     ) -> FutureResult[None, StoreUnavailable]:
        """Keep ``summary``; on a read-only store, or for a question holding a secret
        (:func:`keeps_no_secret`), do nothing (the next lookup misses)."""
        if self.store.readonly or not keeps_no_secret(key):
            return FutureResult.from_value(None)
        return self.store.run(_store(summary_row(key, summary, time.time())))


@attrs.define
class MemorySummaryCache:
    """A summary cache in a dict, for the in-memory store and for tests."""

    entries: dict[SummaryKey, Summary] = attrs.field(factory=dict)
    closed: Callable[[], bool] = attrs.field(default=never_closed, repr=False, eq=False)
    """Whether the store it belongs to was closed: then it refuses, as the store does."""
    lock: AbstractContextManager[Any] = attrs.field(factory=threading.RLock, repr=False,
                                                    eq=False)
    """Held for each call: the store's own lock, so that a call from another thread neither
    loses a summary kept while sessions are removed nor reads a dict changing under it."""

    def cached_summary(self, key: SummaryKey
                       ) -> FutureResult[Summary | None, StoreUnavailable]:
        """The summary kept under ``key``, or None."""
        return in_turn(self.lock, self.closed, lambda: self.entries.get(key))

    def keep_summary(self, key: SummaryKey, summary: Summary
                     ) -> FutureResult[None, StoreUnavailable]:
        """Keep ``summary`` under ``key`` (unless its question holds a secret, as above)."""
        def keep() -> None:
            if keeps_no_secret(key):
                self.entries[key] = summary
        return in_turn(self.lock, self.closed, keep)

    def forget(self, root_ids: Sequence[str]) -> None:
        """Drop the summaries of these roots (their sessions were removed)."""
        gone = set(root_ids)
        with self.lock:
            self.entries = {k: v for k, v in self.entries.items()
                            if k.root_session_id not in gone}
