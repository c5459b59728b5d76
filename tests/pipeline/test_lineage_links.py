"""The lineages of a search's candidates are walked by their sessions' links
(``SessionStore.session_links``): only the roots a search returns are read whole, through
the facade over a SQLite file; a caller's own store without the call is walked through
``sessions`` to the same results; a root a sync removes or stores otherwise between the
two reads is walked again."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
from returns.future import FutureResult
from returns.unsafe import unsafe_perform_io

from harkback.pipeline import Harkback, open_store
from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore
from tests.conftest import conversation
from tests.support.calls_counted import CallsCounted
from tests.support.older_store import OlderStore

NOW = 1_780_000_000.0
SESSIONS = (
    # A fix continued three times, one part handing work to a sub-agent.
    *(conversation(f"p{i}", ("user", f"kafka consumer lag step {i}"),
                   parent=f"p{i - 1}" if i else None, started_at=NOW - 900 + i)
      for i in range(4)),
    conversation("p1-sub", ("user", "kafka consumer lag check"), source="subagent",
                 parent="p1", started_at=NOW - 800),
    # A scheduler's job whose sub-agent says the words best: demoted by its root's source.
    conversation("job", ("user", "nightly report"), source="cron", started_at=NOW - 50),
    conversation("job-sub", ("user", "kafka consumer lag kafka consumer lag"),
                 source="subagent", parent="job", started_at=NOW - 40),
    *(conversation(f"other-{i}", ("user", f"kafka consumer lag alert {i}"),
                   started_at=NOW - 100 * i) for i in range(8)),
    *(conversation(f"filler-{i}", ("user", f"notes on topic {i}")) for i in range(8)),
)


async def _searched(tmp_path: Path, wrap: Any) -> tuple[list[dict[str, Any]], Any]:
    """The results of "kafka consumer lag" (three) searched on the store as ``wrap`` gives
    it, and that wrapped store."""
    store = open_store(tmp_path / "store.db").unwrap()
    try:
        unsafe_perform_io((await store.ingest(SESSIONS).awaitable()).unwrap())
        wrapped = wrap(store)
        payload = (await Harkback(store=wrapped).search("kafka consumer lag", limit=3,
                                                        as_of=NOW)).to_payload()
    finally:
        store.close()
    return payload["results"], wrapped


async def test_only_the_roots_returned_are_read_whole(tmp_path: Path) -> None:
    """Every session that matched had its whole record read (17 of them here: a few
    hundred on a large store) to walk its lineage; now its link is, and only the three
    roots returned are read whole, in one call."""
    results, counted = await _searched(tmp_path, CallsCounted)
    matched = {s.session.id for s in SESSIONS if "lag" in s.messages[0].content}
    assert set(counted.asked["session_links"][0]) >= matched
    assert [list(ids) for ids in counted.asked["sessions"]] == [
        [r["session_id"] for r in results]]


async def test_a_store_without_links_is_walked_through_its_sessions(tmp_path: Path) -> None:
    """A caller's own store written before the port named ``session_links`` finds the same
    results: the fix's lineage as one (its sub-agent's hit in it), the cron job's after
    the user's own sessions."""
    def older(store: SessionStore) -> Any:
        return OlderStore(store, "session_links")

    found, _ = await _searched(tmp_path, older)
    assert (found[0]["session_id"], sorted(found[0]["lineage"])) == (
        "p0", ["p0", "p1", "p1-sub", "p2", "p3"])
    assert "job" not in [r["session_id"] for r in found]
    linked, _ = await _searched(tmp_path / "linked", lambda store: store)
    assert found == linked


class _Meanwhile:
    """``store``, ``change`` done to it (as a sync beside the search does) just before the
    first read of whole sessions asking for session ``at``."""

    def __init__(self, store: SessionStore, at: str,
                 change: Callable[[SessionStore], FutureResult[Any, StoreUnavailable]]) -> None:
        self._store = store
        self._at: str | None = at
        self._change = change

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def sessions(self, ids: Sequence[str]) -> Any:
        if self._at is None or self._at not in ids:
            return self._store.sessions(ids)
        self._at = None
        return self._change(self._store).bind(lambda _: self._store.sessions(ids))


def _removed(store: SessionStore) -> FutureResult[Any, StoreUnavailable]:
    remover = store.session_remover()
    assert remover is not None
    return remover.remove_sessions(["p0"])


def _made_a_tool_s(store: SessionStore) -> FutureResult[Any, StoreUnavailable]:
    again = SESSIONS[0]
    return store.ingest([attrs.evolve(again, session=attrs.evolve(again.session,
                                                                  source="tool"))])


async def test_a_root_removed_after_its_link_was_read_leaves_its_place(tmp_path: Path) -> None:
    """The fix's root "p0" is removed after the ranker read its link and before the
    resolve stage reads it whole: its continuation "p1" is a root now (as removal says),
    found as a fresh walk finds it, and the search still gives the three results asked
    (it gave two, "p0"'s lineage left out whole)."""
    found, _ = await _searched(tmp_path, lambda store: _Meanwhile(store, "p0", _removed))
    ids = [r["session_id"] for r in found]
    assert len(ids) == 3 and "p0" not in ids
    assert (found[0]["session_id"], sorted(found[0]["lineage"])) == (
        "p1", ["p1", "p1-sub", "p2", "p3"])


async def test_a_root_stored_again_from_a_hidden_source_is_hidden(tmp_path: Path) -> None:
    """The fix's root "p0" is stored again as a tool's (a source hidden by default) after
    its link was read and before it is read whole: its lineage is hidden, as a search
    begun then hides it, and three others are given (it was shown first, of source
    "tool")."""
    found, _ = await _searched(tmp_path, lambda store: _Meanwhile(store, "p0", _made_a_tool_s))
    assert [r["source"] for r in found] == ["cli"] * 3
    assert not {"p0", "p1"} & {s for r in found for s in r["lineage"]}


async def test_the_links_read_to_count_lineages_are_read_once(tmp_path: Path) -> None:
    """A conversation in six parts fills the ranker's search (300 rows): the search goes
    on until it has the five lineages asked for, counted from the parts' links, and no
    session's link is asked of the store twice (the ranker's walk and the resolve stage
    reuse those read to count)."""
    parts = [conversation(f"part-{n}", *[
        ("assistant", f"kafka consumer lag partition {i % 12} offset {i}") for i in range(50)],
        parent=f"part-{n - 1}" if n else None, started_at=NOW - 900 + n) for n in range(6)]
    others = [conversation(f"other-{n}", (
        "user", f"why is the kafka consumer lag growing on the topic of service {n} today"),
        started_at=NOW - 5000 - n) for n in range(6)]
    store = open_store(tmp_path / "store.db").unwrap()
    try:
        unsafe_perform_io((await store.ingest([*parts, *others]).awaitable()).unwrap())
        counted = CallsCounted(store)
        payload = (await Harkback(store=counted).search("kafka consumer lag", limit=5,
                                                        as_of=NOW)).to_payload()
    finally:
        store.close()
    assert len(payload["results"]) == 5
    asked = [i for ids in counted.asked["session_links"] for i in ids]
    assert len(asked) == len(set(asked))
