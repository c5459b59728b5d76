"""A search or listing filtered by a source the store holds none of, through the library's
facade: its empty answer says so; the store is asked its sources only then."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from returns.future import FutureResult

from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.timing import RecordingObserver
from harkback.stages.errors import StoreUnavailable
from tests.conftest import conversation
from tests.pipeline.test_cli import run
from tests.support.hermes_db import HermesFile
from tests.support.new_stores import KINDS, Kind, fresh_store
from tests.support.older_store import OlderStore

SESSIONS = (
    conversation("docker", ("user", "docker network create backend"), started_at=100.0),
    conversation("nightly", ("assistant", "nightly docker report"), started_at=200.0,
                 source="cron"),
)


class _AskedStore(MemoryStore):
    """A memory store that counts how often it is asked its sources (or fails then)."""

    def __init__(self, *, failing: bool = False) -> None:
        super().__init__()
        self.asked = 0
        self.failing = failing

    def source_names(self) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        self.asked += 1
        if self.failing:
            return FutureResult.from_failure(StoreUnavailable("database is locked"))
        return super().source_names()


async def _facade(store: MemoryStore) -> Harkback:
    await store.ingest(SESSIONS).awaitable()
    return Harkback(store=store)


async def test_search_and_recent_name_a_source_the_store_does_not_hold() -> None:
    """``sources=("Cron",)`` found nothing, and said nothing: the payload's notes now name it,
    the source meant and those held, for a search, a listing and a question of a time."""
    hb = await _facade(MemoryStore())
    held = "the sources it holds: 'cli', 'cron'"
    searched = (await hb.search("docker report", sources=("Cron",))).to_payload()
    assert searched["results"] == []
    assert searched["notes"] == [
        f"this store holds no session from source 'Cron' (did you mean 'cron'?); {held}"]
    listed = (await hb.recent(sources=("crons", "telegram"))).to_payload()
    assert listed["notes"] == [f"this store holds no session from sources 'crons' (did you "
                               f"mean 'cron'?), 'telegram'; {held}"]
    timed = (await hb.search("what did I do last week", sources=("nope",))).to_payload()
    assert timed["mode"] == "recent" and timed["notes"][0].endswith(held)


async def test_the_store_is_asked_its_sources_only_when_a_filtered_call_found_nothing() -> None:
    """A search that found something, or had no source filter, costs what it did; a held
    source that found nothing is asked about and says nothing."""
    store = _AskedStore()
    hb = await _facade(store)
    found = (await hb.search("docker network", sources=("cli",))).to_payload()
    unfiltered = (await hb.search("zebra")).to_payload()
    assert found["count"] == 1 and unfiltered["count"] == 0
    assert store.asked == 0
    nothing = (await hb.search("zebra", sources=("cli",))).to_payload()
    assert store.asked == 1
    assert nothing["count"] == 0 and "notes" not in nothing


async def test_a_store_that_cannot_list_its_sources_leaves_the_answer_as_it_was() -> None:
    """The search succeeded: a store failing to list its sources adds no note and no
    failure to it."""
    store = _AskedStore(failing=True)
    hb = await _facade(store)
    payload = (await hb.search("docker", sources=("Cron",))).to_payload()
    assert store.asked == 1
    assert payload["success"] is True and payload["results"] == []
    assert "notes" not in payload


async def test_a_source_held_by_no_session_is_not_searched_again_in_tool_output() -> None:
    """Nothing of a source the store holds none of can match in any role: the search runs
    its match once (no second one over tool output), asks the store its sources once, and
    says so; a held source still finds what only its tool output holds."""
    store = _AskedStore()
    await store.ingest([*SESSIONS, conversation(
        "refused", ("user", "why does the api fail"), ("tool", "ECONNREFUSED 10.0.0.5:5432"),
        started_at=300.0)]).awaitable()
    recorder = RecordingObserver()
    hb = Harkback(store=store, observer=recorder)
    payload = (await hb.search("ECONNREFUSED", sources=("Cron",))).to_payload()
    matches = [e for e in recorder.events if e.stage == "match" and e.duration_ms is not None]
    assert (len(matches), store.asked, payload["results"]) == (1, 1, [])
    assert payload["notes"] == ["this store holds no session from source 'Cron' (did you mean "
                                "'cron'?); the sources it holds: 'cli', 'cron'"]
    held = (await hb.search("ECONNREFUSED", sources=("cli",))).to_payload()
    assert [r["session_id"] for r in held["results"]] == ["refused"]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_project_holding_no_session_is_not_searched_again_in_tool_output(
        kind: Kind, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A project filter no stored session passes (a sub-agent's counts) cannot match in any
    role: one match, not a second over tool output; a project that holds one, even as a
    sub-agent only, still finds what only its tool output holds."""
    sessions = [conversation("root", ("user", "deploy the api"), started_at=1.0),
                conversation("sub", ("user", "check the db"), ("tool", "ECONNREFUSED 5432"),
                             parent="root", started_at=2.0, project="/w/shop")]
    for store in fresh_store(kind, request, tmp_path):
        await store.ingest(sessions).awaitable()
        recorder = RecordingObserver()
        hb = Harkback(store=store, observer=recorder)
        none = (await hb.search("ECONNREFUSED", projects=("/w/blog",))).to_payload()
        matches = [e for e in recorder.events if e.stage == "match" and e.duration_ms is not None]
        assert (len(matches), none["results"]) == (1, [])
        held = (await hb.search("ECONNREFUSED", projects=("shop",))).to_payload()
        assert [r["session_id"] for r in held["results"]] == ["root"]


async def test_a_store_without_source_names_answers_a_filtered_search_without_the_note(
        ) -> None:
    """A filtered search or listing that found nothing, from a store lacking
    ``source_names`` (it raised AttributeError), is the plain empty answer, with no note;
    the filter still finds what its source holds."""
    inner = MemoryStore()
    await inner.ingest(SESSIONS).awaitable()
    hb = Harkback(store=OlderStore(inner, "source_names"))
    for found in (await hb.search("docker report", sources=("Cron",)),
                  await hb.recent(sources=("Cron",))):
        payload = found.to_payload()
        assert (payload["success"], payload["results"], "notes" in payload) == (
            True, [], False), payload
    held = (await hb.search("docker network", sources=("cli",))).to_payload()
    assert held["count"] == 1


def test_a_source_named_hermes_is_told_what_hermes_sessions_are_called(tmp_path: Path) -> None:
    """``sync`` lists the import as ``hermes``, so ``recent --source hermes`` is what a user
    types next; it found nothing and named only the sources held. Through the CLI, on a
    Hermes file imported as a user imports it."""
    hermes = HermesFile(tmp_path / "state.db", "v30")
    hermes.session("20261201_070000_d4e5f6", source="telegram", title="restic backup")
    hermes.message("20261201_070000_d4e5f6", "user", "set up a nightly restic backup")
    hermes.close()
    db = str(tmp_path / "h.db")
    assert run("import", "hermes", str(tmp_path / "state.db"), "--db", db).returncode == 0
    done = run("recent", "--source", "hermes", "--db", db, "--json")
    assert json.loads(done.stdout)["notes"] == [
        "this store holds no session from source 'hermes' (a Hermes session's source is the"
        " platform Hermes gave it: cli, telegram, discord, ...); the sources it holds:"
        " 'telegram'"]
