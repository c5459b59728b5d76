"""Two transcripts naming one session id, and a resume's copy, settle the same in every
store (PostgreSQL as SQLite): a copy holding nothing new adds nothing, one going on from the
session's first messages continues it, one with other messages is kept aside whole; a
resume's copy the store lacks part of keeps that part."""

from __future__ import annotations

from pathlib import Path

from harkback.pipeline.sync import locate, sync
from harkback.stages.ports import RecentQuery, SessionStore
from tests.adapters.stores.store_contract import ok
from tests.pipeline.test_shared_session_ids import COPY, ORIGINAL, SID, rollout, transcript
from tests.support.new_stores import new_stores

store = new_stores("sqlite", "postgres")


async def held(store: SessionStore, *more: str) -> dict[str, list[str]]:
    """Every stored session's message texts (their first line), by id (``more``: ids a
    continuation is stored under, which ``recent`` lists under their root)."""
    ids = [o.session.id for o in await ok(store.recent(RecentQuery(limit=10)))]
    texts: dict[str, list[str]] = {sid: [] for sid in (*ids, *more)}
    for message in await ok(store.messages(sorted(texts))):
        texts[message.session_id].append(message.content.split("\n")[0])
    return texts


async def synced(home: Path, store: SessionStore, kind: str = "codex"
                 ) -> tuple[int, dict[str, int]]:
    """``home``'s rollouts (``kind``'s files) synced: the skipped lines named, and what was
    left out."""
    located = locate({"codex": home / "none", "hermes": home / "none",
                      "claude-code": home / "none", kind: home / "sessions"})
    [report] = [r for r in await sync(located, store, progress=False) if r.located]
    return len(report.skipped), dict(report.left_out)


async def test_copies_of_a_rollout_settle_alike_in_each_store(store: SessionStore,
                                                              tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    rollout(sessions / ORIGINAL, ("alpha", 4))
    rollout(sessions / COPY, ("alpha", 2))
    assert await synced(tmp_path, store) == (
        0, {"session copied from another file (stored there)": 1})
    rollout(sessions / COPY, ("alpha", 2), ("pear", 1))  # went on from where they met
    assert await synced(tmp_path, store) == (
        0, {"message copied from another file (stored there)": 2})
    aside = "cx1@rollout-2026-11-20T10-00-00-bbbb"
    assert await held(store, aside) == {"cx1": [f"alpha {n}" for n in range(4)],
                                        aside: ["pear 0"]}
    assert await synced(tmp_path, store) == (0, {})
    other = tmp_path / "other" / "sessions"  # first read holding another message: aside
    rollout(other / ORIGINAL, ("alpha", 4))
    rollout(other / COPY, ("alpha", 1), ("pear", 1))
    assert (await synced(other.parent, store))[0] == 1
    assert (await held(store, aside))[aside] == ["alpha 0", "pear 0"]
    assert await synced(other.parent, store) == (0, {})


async def test_a_resume_copying_what_the_store_lacks_keeps_it_in_each_store(
        store: SessionStore, tmp_path: Path) -> None:
    projects = tmp_path / "sessions"
    earlier = projects / "-w" / f"{SID}.jsonl"
    transcript(earlier, ("alpha", 2))
    assert (await synced(tmp_path, store, "claude-code"))[0] == 0
    earlier.unlink()
    later = projects / "-w" / "0f0e0d0c-0000-4000-8000-0000000000e2.jsonl"
    transcript(later, ("alpha", 4))
    lines = later.read_text(encoding="utf-8")
    later.write_text(lines + lines.splitlines()[-1].replace(SID, later.stem).replace(
        "alpha 3", "beta 0").replace("alpha3", "beta0") + "\n", encoding="utf-8")
    assert await synced(tmp_path, store, "claude-code") == (0, {
        "message copied from an earlier session (stored there)": 2,
        "message copied from an earlier session (not stored there: kept)": 2})
    assert (await held(store, later.stem))[later.stem] == ["alpha 2", "alpha 3", "beta 0"]
