"""A rewrite (``harkback redact``) beside another writer of the same store, for the stores
whose writers take turns (SQLite, PostgreSQL): what their tests share. Each store's test
gives the other writer (a connection of its own) and what a writer that found the store's
write lock held raises."""

from __future__ import annotations

from collections.abc import Callable

from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation
from harkback.stages.rewrite import Edit, RewriteReport, TextRewriter
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation

Busy = Callable[[Exception], bool]
"""Whether an error is the other writer finding the write lock held (it gave up waiting)."""


def redact_kiwi(text: str) -> str:
    """The rewrite's edit: ``kiwi`` is the secret."""
    return text.replace("kiwi", "[secret]")


def meanwhile(other: Callable[[], object], busy: Busy) -> tuple[Edit, list[str]]:
    """An edit that, on its first call (the rewrite has read a chunk, not yet written it),
    has ``other`` write from another connection; a writer that found the lock held is noted
    in the list (the test runs it again later)."""
    waited: list[str] = []
    tried: list[bool] = []

    def edit(text: str) -> str:
        if not tried:
            tried.append(True)
            try:
                other()
            except Exception as locked:
                if not busy(locked):
                    raise
                waited.append(str(locked))
        return redact_kiwi(text)
    return edit, waited


async def rewrite_beside_an_ingest(store: SessionStore, update: Callable[[Conversation], object],
                                   busy: Busy) -> tuple[list[str], RewriteReport, list[str]]:
    """Rewrite ``store`` while ``update`` writes new text for a session being rewritten
    (once the rewrite is done, if it found the lock held): the session's stored texts, the
    rewrite's report and what the update found (see :func:`meanwhile`)."""
    await ok(store.ingest([conversation("s1", ("user", "the key is kiwi"))]))
    updated = conversation("s1", ("user", "UPDATED text"))
    edit, waited = meanwhile(lambda: update(updated), busy)
    report = await ok(_rewriter(store).rewrite_texts(edit))
    if waited:
        update(updated)  # the ingest's turn, once the rewrite has committed
    return [m.content for m in await ok(store.messages(["s1"]))], report, waited


async def two_rewrites_at_once(store: SessionStore, second: Callable[[], RewriteReport],
                               busy: Busy) -> tuple[list[str], int, list[str]]:
    """Rewrite ``store`` while ``second`` rewrites it from another connection (once the
    first is done, if it found the lock held): the stored texts, the changed messages both
    counted, and what the second found (see :func:`meanwhile`)."""
    await ok(store.ingest([conversation("s1", ("user", "kiwi"), ("assistant", "kiwi"))]))
    seconds: list[RewriteReport] = []
    edit, waited = meanwhile(lambda: seconds.append(second()), busy)
    first = await ok(_rewriter(store).rewrite_texts(edit))
    if waited:
        seconds.append(second())
    stored = [m.content for m in await ok(store.messages(["s1"]))]
    return stored, first.messages + sum(s.messages for s in seconds), waited


BIG_SESSIONS = [conversation(f"s{i}", ("user", f"kiwi {i}" + " lorem" * 10_000))
                for i in range(4)]
"""Four sessions of 60 KB, each with one secret at its start."""


def watching_the_first(first_text: Callable[[], str]) -> tuple[Edit, list[str]]:
    """An edit that, when it reads the last of :data:`BIG_SESSIONS`, notes the start of the
    first one's text as ``first_text`` reads it from another connection."""
    seen: list[str] = []

    def edit(text: str) -> str:
        if text.startswith("kiwi 3"):
            seen.append(first_text()[:10])
        return redact_kiwi(text)
    return edit, seen


def _rewriter(store: SessionStore) -> TextRewriter:
    rewriter = store.text_rewriter()
    assert rewriter is not None
    return rewriter
